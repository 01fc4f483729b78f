"""Copies into targets written in turn: the same source into `k` targets, one after the other,
all faulted in before the clock, so that each copy writes a target last written k copies ago
(k = 1: the copy limit's case, one target every call). With k above 1 the target's lines may
have left the cache, and what that costs a copy depends on how it stores: glibc's `memcpy`
follows the environment (memcpy_erms: `rep movsb`; memcpy_vector: vector stores), PyTorch's
kernel stores vectors in every environment.

Case `<kernel>-<k>-<bytes>`: kernel `memcpy` (`np.copyto`) or `torch` (`Tensor.copy_`), both
kernels of one (k, bytes) one right after the other, the first of the two alternating from
pair to pair and from process to process. Case `clone-0-<bytes>`: the copy step's PyTorch
call itself, `Tensor.clone()` of the source, its output freed inside the clock as the copy
step's is; its info counts the distinct addresses its outputs took (`targets`) in its timed
calls (glibc's heap may hand back the same few; their order is not kept), and each call's
faults are in its samples.

params: sizes (bytes per copy), targets (the k to run, a list; default 1, 2, 3),
clone_sizes (the sizes of the clone cases; default none).
"""

import itertools

import numpy as np

from knobs.benchmarks.copy import equal_in_chunks
from studies.store_path.benchmarks.copy_kernels import faults_to_fill
from knobs.benchmarks.faults import PAGE, fresh_region
from knobs.environment import KnobNotApplied

KERNELS = ("memcpy", "torch")


class Benchmark:
    def __init__(self, params, device, seed):
        import torch

        self.torch, self.seed = torch, seed
        self.sizes = [int(size) for size in params["sizes"]]
        self.targets = [int(k) for k in params.get("targets", [1, 2, 3])]
        self.clone_sizes = [int(size) for size in params.get("clone_sizes", [])]
        if min(self.targets) < 1:
            raise ValueError(f"rotating_copies: params.targets {self.targets}: each at least 1")
        self.rng = np.random.default_rng(seed)
        self.buffers = {}  # bytes: (source, targets), shared by every case of that size
        self.addresses = {}  # clone case: the addresses its outputs took after its warm-up
        self.current = None  # the case set up last (the runner's warm-up calls are its)

    def cases(self):
        pairs = [(k, size) for size in self.sizes for k in self.targets]
        rotated = [f"{kernel}-{k}-{size}" for i, (k, size) in enumerate(pairs)
                   for kernel in (KERNELS if (i + self.seed) % 2 == 0 else KERNELS[::-1])]
        return rotated + [f"clone-0-{size}" for size in self.clone_sizes]

    def _buffers(self, size):
        """The source and as many targets as the largest k, on 4 KiB pages, faulted in before
        the clock (the proof: one fault per page of each)."""
        if size not in self.buffers:
            views = [fresh_region(size, huge=False)[1][:size].view(np.float32)
                     for _ in range(1 + max(self.targets))]
            faults = [faults_to_fill(view) for view in views]
            if min(faults) < -(-size // PAGE):
                raise KnobNotApplied(f"size {size}: filling source and targets took {faults} "
                                     f"faults, where 4 KiB pages take {-(-size // PAGE)} each")
            self.rng.random(dtype=np.float32, out=views[0])
            self.buffers[size] = views[0], views[1:]
        return self.buffers[size]

    def setup(self, case):
        """The case's step, after one untimed round over its targets that must leave the
        source in each (cleared for it first)."""
        kernel, k, size = case.split("-")
        source, targets = self._buffers(int(size))
        self.current = case
        if kernel == "clone":
            return self._clone(case, source)
        targets = targets[:int(k)]
        if kernel == "memcpy":
            copies = [lambda t=target: np.copyto(t, source) for target in targets]
        else:
            source_t = self.torch.from_numpy(source)
            copies = [lambda t=self.torch.from_numpy(target): t.copy_(source_t)
                      for target in targets]
        for target, copy in zip(targets, copies):
            target.fill(0)
            copy()
            if not equal_in_chunks(source, target):
                raise RuntimeError(f"{case}: a target does not hold the source after the copy")
        in_turn = itertools.cycle(copies)
        return lambda: next(in_turn)()

    def _clone(self, case, source):
        source_t = self.torch.from_numpy(source)
        if not equal_in_chunks(source, source_t.clone().numpy()):
            raise RuntimeError(f"{case}: the clone does not hold the source")
        addresses = self.addresses[case] = set()

        def step():
            output = source_t.clone()
            addresses.add(output.data_ptr())
            return output  # freed by the runner inside the clock, as the copy step's output

        return step

    def warm(self, step):
        """A warm-up call; a clone's addresses are counted from the timed calls on."""
        output = step()
        self.addresses.get(self.current, set()).clear()
        return output

    def info(self, case):
        kernel, k, size = case.split("-")
        if kernel == "clone":
            k = len(self.addresses[case])
        return {"bytes": int(size), "copy_kernel": kernel, "targets": int(k)}

    def evidence(self):
        return {"torch_cpu_capability": self.torch.backends.cpu.get_cpu_capability(),
                "torch_threads": self.torch.get_num_threads()}

    def versions(self):
        return {"torch": self.torch.__version__, "numpy": np.__version__}
