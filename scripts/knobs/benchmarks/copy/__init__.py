"""The copy step: the identity function `f(x) -> copy of x` of one framework over float32
batches of images, one case per batch. On device `gpu` a call takes a host array through the
GPU and back (see knobs/benchmarks/copy/frameworks/).

params: framework, batches, image (channels, height, width), input (`random`, or `zeros` as
the seed timed).
"""

import numpy as np

from knobs import effects
from knobs.benchmarks.copy import frameworks


SERVED_CALLS = 4  # untimed calls that show where glibc found the outputs


def make_input(shape, kind, seed):
    if kind == "zeros":  # as the seed did: untouched zero pages are unusually cheap to read
        return np.zeros(shape, dtype=np.float32)
    return np.random.default_rng(seed).random(shape, dtype=np.float32)


# Elements compared at a time: the comparison's bools (16 KiB) come from glibc's heap and go
# back to it, where a whole batch's (a quarter of its bytes) went to a mapping of their own
# and, freed, raised glibc's mmap threshold: the check moved what later cases measured
# (README "Where each output's memory comes from").
CHECK_CHUNK = 1 << 14


def equal_in_chunks(a, b, chunk=CHECK_CHUNK):
    """np.array_equal without a temporary larger than `chunk` bools."""
    a, b = np.asanyarray(a), np.asanyarray(b)
    if a.shape != b.shape:
        return False
    if a.ndim > 1 and not (a.flags.c_contiguous and b.flags.c_contiguous):
        return all(equal_in_chunks(x, y, chunk) for x, y in zip(a, b))  # flat: a copy
    if a.ndim != 1:  # contiguous or 0-d: flat views
        a, b = a.reshape(-1), b.reshape(-1)
    return all(np.array_equal(a[i:i + chunk], b[i:i + chunk]) for i in range(0, a.size, chunk))


def check_copy(identity, native, host):
    """One untimed call: the output must equal the input and not share its memory."""
    result = identity.call(native)
    output = identity.to_numpy(native if result is None else result)
    check = {"equal": bool(equal_in_chunks(output, host)),
             "aliases_input": bool(np.shares_memory(output, host)),
             "fresh_output": identity.fresh_output}
    if not check["equal"] or check["aliases_input"]:
        raise RuntimeError(f"the identity function did not return a copy: {check}")
    return check


class Benchmark:
    def __init__(self, params, device, seed):
        self.name, self.device, self.seed = params["framework"], device, seed
        if device not in frameworks.devices(self.name):
            raise ValueError(f"{self.name} runs on {', '.join(frameworks.devices(self.name))}, "
                             f"not {device}")
        self.batches, self.image, self.input = params["batches"], params["image"], params["input"]
        self.module = frameworks.load(self.name)
        self.identity, self.facts, self.calls, self.warmed = None, {}, {}, []

    def cases(self):
        return [str(batch) for batch in sorted(self.batches)]

    def setup(self, case):
        batch = int(case)
        host = make_input((batch, *self.image), self.input, self.seed)
        if self.identity is None:  # built on the first case the process runs, as it comes
            self.identity = self.module.build(host, self.device)
        native = self.identity.prepare(host)
        self.facts[case] = {"batch": batch, "bytes": host.nbytes,
                            "check": check_copy(self.identity, native, host),
                            "check_temporary_bytes": CHECK_CHUNK}
        call = self.identity.call
        self.calls[case], self.warmed = (lambda: call(native)), []
        return self.calls[case]

    def warm(self, step):
        """A warm-up call, watched: where glibc found its output, with its faults."""
        self.warmed.append("%s:%d" % effects.glibc_served(step))

    def info(self, case):
        """The case's facts, and where glibc found the outputs, with each call's faults
        (`mapped:820 heap:0 ...`: its state after the cases before decides, and may change from
        call to call): in the warm-up calls after the first (`served_in_warmup`) and in a few
        more calls after the timed ones (`served_from`)."""
        call = self.calls.pop(case)
        self.facts[case]["served_in_warmup"] = " ".join(self.warmed)
        self.facts[case]["served_from"] = " ".join(
            "%s:%d" % effects.glibc_served(call) for _ in range(SERVED_CALLS))
        return self.facts[case]

    def evidence(self):
        return dict(self.identity.evidence)

    def versions(self):
        return {self.name: self.identity.version}

    def describe(self, devices):
        """What the framework compiled or ran, one section per device it runs on."""
        example = make_input((max(self.batches), *self.image), self.input, 0)
        return "\n\n".join(
            f"device: {device}\n{'=' * (8 + len(device))}\n"
            + self.module.describe(example, device)
            for device in devices if device in frameworks.devices(self.name))
