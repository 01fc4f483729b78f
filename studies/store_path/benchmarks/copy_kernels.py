"""Two copy kernels side by side in one process: glibc's `memcpy` (`np.copyto`) and PyTorch's
own (`Tensor.copy_`), from the same source into the same target, both faulted in before the
clock, so that nothing differs between them but the kernel (each case's setup checks, untimed,
that its own kernel copies). Case `<kernel>-<page>-<bytes>`:
kernel `memcpy` or `torch`; page `4k` (source and target on 4 KiB pages) or `2m` (on
transparent huge pages, where the kernel's THP mode allows them).

Copies in different processes differ by where their pages land (the copy step's `copyto` and
`torch_copyto` are separate processes); a ratio of two cases of one process leaves that out.

params: sizes (bytes per copy; the copy step's batch sizes).
"""

import resource

import numpy as np

from knobs.benchmarks.copy import equal_in_chunks
from knobs.benchmarks.faults import HUGE_PAGE, PAGE, fresh_region, thp_mode
from knobs.environment import KnobNotApplied

KERNELS = ("memcpy", "torch")


def faults_to_fill(view):
    """Minor faults of writing every byte of `view` once: one per page of the kind it is on."""
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    view.fill(1)
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before


class Benchmark:
    def __init__(self, params, device, seed):
        import torch

        self.torch, self.sizes = torch, [int(size) for size in params["sizes"]]
        self.seed, self.rng = seed, np.random.default_rng(seed)
        self.buffers = {}  # (page, bytes): (source, target, their fill faults), for both kernels
        self.new_buffers = {}  # case: whether its setup made the buffers (it ran first)

    def cases(self):
        """The two kernels of each buffer pair one right after the other (so that the
        machine's moment is theirs alike), the first of the two alternating from pair to pair
        and from process to process."""
        pages = ["4k", "2m"] if thp_mode() in ("madvise", "always") else ["4k"]
        pairs = [(page, size) for page in pages for size in self.sizes]
        return [f"{kernel}-{page}-{size}" for i, (page, size) in enumerate(pairs)
                for kernel in (KERNELS if (i + self.seed) % 2 == 0 else KERNELS[::-1])]

    def _buffers(self, page, size):
        """The case's source and target, faulted in before the clock; on huge pages the proof
        is in their faults (one per 2 MiB instead of one per 4 KiB)."""
        if (page, size) not in self.buffers:
            huge = page == "2m"
            # each view keeps its mapping alive (numpy holds the mmap object as its base)
            source, target = (fresh_region(size, huge)[1][:size].view(np.float32)
                              for _ in range(2))
            faults = [faults_to_fill(source), faults_to_fill(target)]
            small_pages = -(-size // PAGE)
            if (max(faults) > small_pages // 64) if huge else (min(faults) < small_pages):
                expected = -(-size // HUGE_PAGE) if huge else small_pages
                raise KnobNotApplied(f"case {page}-{size}: filling source and target took "
                                     f"{faults} faults, where {'huge' if huge else '4 KiB'} "
                                     f"pages take about {expected} each")
            self.rng.random(dtype=np.float32, out=source)  # no temporary passes the cache
            self.buffers[page, size] = source, target, faults
        return self.buffers[page, size]

    def setup(self, case):
        """The case's step, after one untimed call that must copy the source into a target
        cleared for it (the pair's other kernel may have filled it already)."""
        kernel, page, size = case.split("-")
        self.new_buffers[case] = (page, int(size)) not in self.buffers  # the pair's first
        source, target, _ = self._buffers(page, int(size))
        if kernel == "memcpy":
            def step():
                np.copyto(target, source)
        else:
            source_t, target_t = self.torch.from_numpy(source), self.torch.from_numpy(target)

            def step():
                target_t.copy_(source_t)
        target.fill(0)
        step()
        if not equal_in_chunks(source, target):
            raise RuntimeError(f"{case}: the target does not hold the source after the copy")
        return step

    def info(self, case):
        kernel, page, size = case.split("-")
        _, _, faults = self._buffers(page, int(size))
        return {"bytes": int(size), "copy_kernel": kernel, "page": page,
                "new_buffers": self.new_buffers[case],
                "source_fill_faults": faults[0], "target_fill_faults": faults[1]}

    def evidence(self):
        return {"torch_cpu_capability": self.torch.backends.cpu.get_cpu_capability(),
                "torch_threads": self.torch.get_num_threads()}

    def versions(self):
        return {"torch": self.torch.__version__, "numpy": np.__version__}
