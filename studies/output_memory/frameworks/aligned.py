"""numpy's copy into memory asked for as PyTorch asks for it on the CPU: `posix_memalign` with
64-byte alignment (c10's) instead of numpy's allocator, then numpy's `copyto` (glibc's
`memcpy`). It bypasses numpy's allocator, so it does not ask the kernel for huge pages
(numpy does, above 4 MiB). Beside numpy it shows what the alignment request does to where
glibc finds each output."""

# What the copy step needs to know without importing it (read from this file).
FRAMEWORK = {"runtime": "numpy"}

import ctypes

import numpy as np

from knobs.benchmarks.copy.frameworks import Identity

ALIGNMENT = 64  # c10's gAlignment: what PyTorch's CPU allocator asks posix_memalign for


class AlignedBlock:
    """`nbytes` from `posix_memalign`, freed when the last array over it goes (its base);
    with `companion` bytes from `malloc` asked for just before it and freed just after it."""

    # the process's own allocator: a preloaded one (tcmalloc) serves it, as it serves PyTorch
    libc = ctypes.CDLL(None)
    libc.posix_memalign.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t,
                                    ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]
    libc.free.restype = None
    libc.malloc.argtypes = [ctypes.c_size_t]
    libc.malloc.restype = ctypes.c_void_p

    def __init__(self, like, alignment, companion=0):
        self.pointer = None  # __del__ runs even if posix_memalign fails
        self.companion = self.libc.malloc(companion) if companion else None
        pointer = ctypes.c_void_p()
        if self.libc.posix_memalign(ctypes.byref(pointer), alignment, like.nbytes):
            raise MemoryError(f"posix_memalign({alignment}, {like.nbytes}) failed")
        self.pointer = pointer.value
        self.__array_interface__ = {"data": (self.pointer, False), "shape": like.shape,
                                    "typestr": like.dtype.str, "version": 3}

    def __del__(self):
        if self.pointer is not None:
            self.libc.free(self.pointer)
        if self.companion is not None:
            self.libc.free(self.companion)


def copy_into_aligned(x, alignment, companion=0):
    output = np.asarray(AlignedBlock(x, alignment, companion))
    np.copyto(output, x)
    return output


def build(example, device="cpu", alignment=ALIGNMENT, companion=0):
    return Identity(call=lambda x: copy_into_aligned(x, alignment, companion),
                    prepare=lambda x: x, to_numpy=lambda y: y, version=np.__version__,
                    evidence={"op": f"numpy.copyto into posix_memalign({alignment})"
                              + (f" after malloc({companion})" if companion else ""),
                              "alignment": alignment, "companion": companion})
