"""The OpenMP runtime of the measured process, seen from inside it: which library serves the
OpenMP entry points, which threads are pinned to which CPUs, Intel OpenMP's block time. PyTorch
brings GNU OpenMP (libgomp); Intel's (libiomp5, the `intel-openmp` wheel) takes its place when
preloaded, as `torch.backends.xeon.run_cpu` does: the dynamic loader then resolves libgomp's
GOMP_* entry points to libiomp5's, which implements them.
"""

import ctypes
import glob
import os

RUNTIMES = ("libgomp", "libiomp5", "libomp.so")  # GNU, Intel, LLVM
# The CPUs this process was allowed when it started (this module is imported before any
# framework): what a thread pinned since has fewer of.
ALLOWED_AT_START = frozenset(os.sched_getaffinity(0))


class _DlInfo(ctypes.Structure):
    _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p),
                ("dli_sname", ctypes.c_char_p), ("dli_saddr", ctypes.c_void_p)]


def is_intel(library):
    """Whether a library (a name or a path) is Intel's OpenMP runtime."""
    return os.path.basename(library).startswith("libiomp5")


def serving(symbol="GOMP_parallel"):
    """The real path of the library the process's global scope resolves `symbol` to (what a
    framework's own call reaches), or None where nothing defines it."""
    process = ctypes.CDLL(None)
    try:
        function = getattr(process, symbol)
    except AttributeError:
        return None
    info = _DlInfo()
    if not process.dladdr(ctypes.cast(function, ctypes.c_void_p), ctypes.byref(info)):
        return None
    return os.path.realpath(info.dli_fname.decode())


def runtimes_mapped(maps):
    """The OpenMP runtimes among the process's mapped files."""
    return sorted(path for path in maps if any(name in os.path.basename(path)
                                               for name in RUNTIMES))


def threads_allowed():
    """{thread id: (name, CPUs it may run on)} for every thread of this process."""
    found = {}
    for task in glob.glob("/proc/self/task/*"):
        try:
            with open(f"{task}/comm") as comm:
                name = comm.read().strip()
            found[int(os.path.basename(task))] = (name, os.sched_getaffinity(
                int(os.path.basename(task))))
        except OSError:  # the thread ended meanwhile
            pass
    return found


def pinned_threads():
    """{thread id: sorted CPUs} of the threads allowed fewer CPUs than the process was when it
    started: what an affinity setting leaves behind."""
    return {tid: sorted(cpus) for tid, (_, cpus) in threads_allowed().items()
            if set(cpus) < ALLOWED_AT_START}


def _runtime_value(symbol):
    """An int-returning, argument-less entry point of the process's OpenMP runtime, called;
    None where no loaded library defines it."""
    try:
        getter = getattr(ctypes.CDLL(None), symbol)
    except AttributeError:
        return None
    getter.restype = ctypes.c_int
    return getter()


def blocktime():
    """Intel OpenMP's block time in ms (kmp_get_blocktime), None where it is not loaded."""
    return _runtime_value("kmp_get_blocktime")


def max_threads():
    """omp_get_max_threads() of the runtime that serves the process, None without one."""
    return _runtime_value("omp_get_max_threads")
