"""numpy's copy into memory aligned as PyTorch asks for it (studies/output_memory/frameworks/):
each output aligned, given back with its array, and PyTorch's request between its outputs."""

import numpy as np
import pytest

from knobs import effects
from knobs.benchmarks.copy import frameworks
from studies.output_memory.frameworks import aligned

INTERPRETER = 4096  # bytes: more than Python's own requests move glibc's count in one call


@pytest.mark.parametrize("name", ["aligned", "aligned_thp", "aligned_storage"])
def test_an_aligned_output_is_aligned_and_freed_with_its_array(name):
    """The output is glibc's block while the array lives and is given back with it. The count
    is the whole process's, and the interpreter's own requests move it by some 100 bytes
    either way between two readings (measured), so it is read to within INTERPRETER bytes;
    the 96-byte companion is below that and has its own test (the calls, in order, below)."""
    libc, module = effects._libc(), frameworks.load(name)
    x = np.random.default_rng(0).random((1, 3, 64, 64), dtype=np.float32)
    identity = module.build(x)

    def in_use():  # glibc's bytes handed out, in its heap and in mappings of their own
        info = libc.mallinfo2()
        return info.uordblks + info.hblkhd

    before = in_use()
    output = identity.call(x)
    during = in_use()
    assert output.ctypes.data % module.ALIGNMENT == 0 and np.array_equal(output, x)
    assert identity.evidence["alignment"] == module.ALIGNMENT
    assert identity.evidence["companion"] == getattr(module, "COMPANION", 0)
    del output
    after = in_use()
    assert during - before > x.nbytes - INTERPRETER and after - before < INTERPRETER


def test_aligned_storage_asks_for_its_96_bytes_before_the_output_and_frees_them_after(
        monkeypatch):
    """PyTorch's request between its outputs, alone: malloc(96) just before each output's
    posix_memalign, freed just after the output (results/paper/allocations)."""
    calls = []

    class Recording:  # the process's allocator, each call noted in order
        real = aligned.AlignedBlock.libc

        def malloc(self, size):
            calls.append(("malloc", size))
            return self.real.malloc(size)

        def posix_memalign(self, out, alignment, size):
            calls.append(("posix_memalign", alignment, size))
            return self.real.posix_memalign(out, alignment, size)

        def free(self, pointer):
            calls.append(("free", pointer))
            self.real.free(pointer)

    monkeypatch.setattr(aligned.AlignedBlock, "libc", Recording())
    x = np.random.default_rng(0).random((1, 3, 64, 64), dtype=np.float32)
    output = frameworks.load("aligned_storage").build(x).call(x)
    address = output.ctypes.data
    del output
    assert calls[:2] == [("malloc", 96), ("posix_memalign", 64, x.nbytes)]
    assert [c[0] for c in calls[2:]] == ["free", "free"] and calls[2][1] == address != calls[3][1]
