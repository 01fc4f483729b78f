"""What a knob visibly changes in the measured process: glibc's own counters, numpy's and
PyTorch's switches, the loader's report of its tunables, jemalloc's options, the threads'
names and pinning, oneDNN's instruction sets, the process's personality. Each `check(value)`
returns (applied, seen): applied None where this process can show the knob present only.
`EFFECTS` maps each variable with a check to it (knobs/kinds/variable.py reads it).
"""

import ctypes
import ctypes.util
import os

from knobs import machine, onednn, openmp
from knobs.knob import Effect, NotApplicable

class _MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                 "fsmblks", "uordblks", "fordblks", "keepcost")]


def _libc():
    libc = ctypes.CDLL(ctypes.util.find_library("c"))
    libc.malloc.restype, libc.malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]
    libc.mallinfo2.restype = _MallInfo2
    return libc


def large_malloc_is_mmapped(size=48 << 20):
    """Whether glibc serves a `size`-byte malloc with a fresh mmap (its own counters say)."""
    libc = _libc()
    before = libc.mallinfo2().hblkhd
    block = libc.malloc(size)
    during = libc.mallinfo2().hblkhd
    libc.free(block)
    return during - before >= size


def glibc_served(call):
    """Where glibc found the memory for `call`'s result, read while the result is alive:
    `mapped`, a fresh mmap of its own; `grown`, its heap grown (fresh pages too); `heap`, its
    heap as it was, or another allocator or a framework's pool. With the call's minor faults."""
    import resource

    libc = _libc()
    before, faults = libc.mallinfo2(), resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    mapped, heap = before.hblkhd, before.arena
    result = call()
    during = libc.mallinfo2()
    del result
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults
    source = ("mapped" if during.hblkhd > mapped else "grown" if during.arena > heap
              else "heap")
    return source, faults


def heap_kept_after_free(total, block=64 << 10):
    """Bytes glibc keeps at the top of its heap after `total` bytes of small blocks are freed:
    it returns them to the kernel once they exceed its trim threshold. Each block must go back
    to the top (else the top looks trimmed: seen in CI), so free chunks inside the heap are used
    up first (glibc grows the heap only when none fits), and the blocks' list is sized before
    they are allocated (a list that grows reallocates through glibc between them)."""
    libc = _libc()
    heap, fillers = libc.mallinfo2(), []
    for _ in range(heap.fordblks // block + 1):  # bounded: a block may be mmapped, not heap
        fillers.append(libc.malloc(block))
        if libc.mallinfo2().arena > heap.arena:
            break
    blocks = [0] * (total // block)
    for index in range(len(blocks)):
        blocks[index] = libc.malloc(block)
    for pointer in reversed(blocks):
        libc.free(pointer)
    kept = libc.mallinfo2().keepcost
    for pointer in fillers:
        libc.free(pointer)
    return kept


def numpy_madvise_hugepage():
    import numpy as np

    core = getattr(np, "_core", None) or np.core
    return bool(core.multiarray._get_madvise_hugepage())


def _numpy_madvise(value):
    active = numpy_madvise_hugepage()
    return active == (value != "0"), {"numpy_madvise_hugepage": active}


def _mmap_threshold(value):
    size = min(int(value) - 4096, 48 << 20)
    mmapped = large_malloc_is_mmapped(size)
    return not mmapped, {f"glibc_mmaps_{size}_bytes": mmapped}


def _trim_threshold(value):
    freed = min(int(value) // 2, 8 << 20)  # under the threshold: glibc must keep it all
    kept = heap_kept_after_free(freed)
    return kept >= freed, {f"glibc_keeps_of_{freed}_freed_bytes": kept}


def _torch_huge_pages(value, size=64 << 20):
    """THP_MEM_ALLOC_ENABLE=1 makes PyTorch's CPU allocator ask for transparent huge pages:
    touching a fresh 64 MiB tensor then faults about 32 huge pages, not 16,384 small ones."""
    import resource

    import torch

    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    torch.empty(size, dtype=torch.uint8).fill_(1)
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
    huge = faults < size // 4096 // 4
    return huge == (value == "1"), {"torch_faults_per_64MiB": faults}


def _glibc_tunables(value):
    """GLIBC_TUNABLES is read once by the loader at start-up, which ignores a misspelt name or a
    value out of range without a word; the same loader's --list-tunables, given this value,
    reports what each tunable became."""
    reported = machine.glibc_tunables(value)
    if not reported:
        return False, {"glibc_tunables": "no glibc loader here to report them"}
    seen, applied = {}, True
    for pair in value.split(":"):
        name, _, wanted = pair.partition("=")
        if name == "glibc.cpu.hwcaps":  # features, which --list-tunables does not show
            chosen, features = _glibc_hwcaps(wanted, value)
            applied, seen = applied and chosen, {**seen, **features}
            continue
        got = seen[name] = reported.get(name, "not a tunable of this glibc")
        try:
            applied = applied and int(got, 0) == int(wanted, 0)
        except ValueError:
            applied = applied and got == wanted
    return applied, seen


def _glibc_hwcaps(features, value):
    """glibc.cpu.hwcaps=Prefer_ERMS,-AVX_Fast_Unaligned_Load: whether the loader, given `value`,
    reports each named preference on (off where `-`) (`--list-diagnostics`, glibc 2.33 on);
    (applied, {name: seen}). Only preferences are proven: CPU features such as AVX512F are
    not listed by name, so naming one fails the knob."""
    reported = machine.glibc_cpu_features(value)
    applied, seen = True, {}
    for feature in features.split(","):
        name = feature.lstrip("-")
        got = seen[f"glibc.cpu.hwcaps.{name}"] = reported.get(f"preferred.{name}", (
            "not a preference this glibc's loader reports" if reported else
            "this loader lists no diagnostics (glibc before 2.33)"))
        applied = applied and got == ("0x0" if feature.startswith("-") else "0x1")
    return applied, seen


def _protobuf(value):
    from google.protobuf.internal import api_implementation

    active = api_implementation.Type()
    return active == value, {"protobuf_implementation": active}


# TensorFlow's own default for oneDNN on Linux x86 (DefaultOneDnnPolicy, tsl/util/port.cc):
# on only where the CPU has one of these neural-network features (none on an AVX2-only CPU).
TF_ONEDNN_DEFAULT_FLAGS = ("avx512_vnni", "avx512_bf16", "avx_vnni", "amx_tile", "amx_int8",
                           "amx_bf16")
TF_BOOLEANS = {"0": False, "false": False, "1": True, "true": True}  # what it reads; else default


def tensorflow_onednn_default():
    """Whether TensorFlow runs oneDNN on this CPU when TF_ENABLE_ONEDNN_OPTS is not set."""
    return bool(set(machine.cpu_flags()) & set(TF_ONEDNN_DEFAULT_FLAGS))


def _onednn(value):
    """TensorFlow's oneDNN switch, against the default this CPU gives it: a value that asks
    for the default changes nothing to see, so it is only present (and must hold)."""
    try:
        from tensorflow.python.util import _pywrap_util_port
    except ImportError:
        return False, {"onednn": "TensorFlow is not installed here: the knob cannot act"}
    active = bool(_pywrap_util_port.IsMklEnabled())
    wanted, default = TF_BOOLEANS.get(value.lower()), tensorflow_onednn_default()
    seen = {"onednn": active, "onednn_default": default}
    if wanted is None:
        return False, {**seen, "onednn_value": "TensorFlow reads only 0, 1, false or true"}
    if active == wanted == default:
        return None, seen
    return active == wanted, seen


def jemalloc_option(name, sample):
    """jemalloc's own value of `opt.<name>` (mallctl), read as the type `sample` suggests; None
    where no jemalloc is loaded or it has no such option."""
    try:
        mallctl = ctypes.CDLL(None).mallctl
    except AttributeError:
        return None
    mallctl.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t),
                        ctypes.c_void_p, ctypes.c_size_t]
    if sample in ("true", "false"):
        value = ctypes.c_bool()
    elif sample.lstrip("-").isdigit():
        value = ctypes.c_ssize_t()
    else:
        value = ctypes.c_char_p()
    size = ctypes.c_size_t(ctypes.sizeof(value))
    if mallctl(f"opt.{name}".encode(), ctypes.byref(value), ctypes.byref(size), None, 0):
        return None
    found = value.value
    return found.decode() if isinstance(found, bytes) else found


def _jemalloc_conf(value):
    """MALLOC_CONF=key:value,...: jemalloc reports each option as set (opt.<key>)."""
    seen, applied = {}, True
    for item in value.split(","):
        key, _, wanted = item.partition(":")
        found = jemalloc_option(key, wanted)
        seen[f"jemalloc_opt_{key}"] = found
        expected = {"true": True, "false": False}.get(wanted, wanted)
        applied &= found is not None and str(found) == str(expected)
    return applied, seen


def thread_names():
    """How many of this process's threads carry each name (/proc/self/task/*/comm)."""
    import collections
    import glob

    names = collections.Counter()
    for path in glob.glob("/proc/self/task/*/comm"):
        try:
            with open(path) as comm:
                names[comm.read().strip()] += 1
        except OSError:  # the thread ended meanwhile
            pass
    return names


def _tf_gpu_threads(value):
    """TF_GPU_THREAD_MODE=gpu_private (or gpu_shared) gives the GPU its own thread pool, whose
    threads TensorFlow names tf_<pool> (the kernel keeps 15 characters)."""
    prefix = f"tf_{value}"[:15]
    count = sum(n for name, n in thread_names().items() if name.startswith(prefix))
    return value == "global" or count > 0, {f"threads_named_{prefix}": count}


# ---- The CPU knobs of the launchers and tuning guides -----------------------------------------
def needs_openmp(what):
    """NotApplicable unless the framework brought an OpenMP runtime of its own (one mapped
    that is not preloaded): a preloaded runtime alone serves nobody."""
    preloaded = {os.path.realpath(p) for p in os.environ.get("LD_PRELOAD", "").split(":") if p}
    linked = [p for p in openmp.runtimes_mapped(machine.mapped_files())
              if os.path.realpath(p) not in preloaded]
    if not linked:
        raise NotApplicable(f"{what}: no library in this process uses OpenMP (TensorFlow, for "
                            "one, runs its own thread pool), so there is nothing for it to act on")


def _blocktime(value):
    found = openmp.blocktime()
    return found == int(value), {"kmp_get_blocktime": found}


def _pinning(value):
    """An affinity setting leaves the OpenMP threads each allowed fewer CPUs than the process
    started with (one each, here), seen once they exist; `false` or `disabled` leaves none."""
    needs_openmp("thread pinning")
    pinned = openmp.pinned_threads()
    wanted = value.lower() not in ("false", "disabled", "none")
    if wanted and not pinned and openmp.max_threads() == 1:
        raise NotApplicable("thread pinning: this process runs one OpenMP thread, which the "
                            "runtime left unpinned; give it two or more (`threads`)")
    return bool(pinned) == wanted, {
        "threads_pinned": {str(tid): cpus for tid, cpus in pinned.items()}}


def _onednn_isa(value, observed):
    """Every convolution and matrix product oneDNN ran used an instruction set at or under
    the cap (ONEDNN_MAX_CPU_ISA=AVX512_CORE: no AMX, no bfloat16 instructions)."""
    cap = onednn.rank(value) if value.upper() != "DEFAULT" else len(onednn.ISAS)
    if cap is None:
        raise NotApplicable(f"ONEDNN_MAX_CPU_ISA={value}: not an instruction set oneDNN names "
                            f"(one of {', '.join(i.upper() for i in onednn.ISAS)}, DEFAULT)")
    isas = sorted({isa for _, isa, _ in observed["compute"] if isa})
    if not observed["compute"]:
        raise NotApplicable(f"ONEDNN_MAX_CPU_ISA={value}: no convolution or matrix product of "
                            "this step ran through oneDNN")
    return bool(isas) and all(onednn.rank(isa) <= cap for isa in isas), {
        "onednn_isas": isas, "onednn_cpu": observed["isa_line"]}


EFFECTS = {
    "NUMPY_MADVISE_HUGEPAGE": Effect(_numpy_madvise),
    "MALLOC_MMAP_THRESHOLD_": Effect(_mmap_threshold, allocator="glibc"),
    "MALLOC_TRIM_THRESHOLD_": Effect(_trim_threshold, allocator="glibc"),
    "THP_MEM_ALLOC_ENABLE": Effect(_torch_huge_pages),
    "MALLOC_CONF": Effect(_jemalloc_conf),
    "GLIBC_TUNABLES": Effect(_glibc_tunables),
    "PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION": Effect(_protobuf),
    "TF_ENABLE_ONEDNN_OPTS": Effect(_onednn),
    "TF_GPU_THREAD_MODE": Effect(_tf_gpu_threads, started=True),
    "KMP_BLOCKTIME": Effect(_blocktime, started=True),
    "KMP_AFFINITY": Effect(_pinning, started=True),
    "OMP_PROC_BIND": Effect(_pinning, started=True),
    "GOMP_CPU_AFFINITY": Effect(_pinning, started=True),
    "ONEDNN_MAX_CPU_ISA": Effect(_onednn_isa, started=True, observes=True),
}
# Variables only Intel's OpenMP reads: set without it, they would be ignored without a word.
INTEL_OPENMP_ONLY = ("KMP_BLOCKTIME", "KMP_AFFINITY")


# ---- Address-space layout ---------------------------------------------------------------------
# The kernel places each fresh mapping at a random address: where a large output lands decides
# how many whole 2 MiB huge pages it holds, and so how it faults (README, "Processes of two
# kinds"). ADDR_NO_RANDOMIZE, inherited across exec, is what `setarch -R` sets.
ADDR_NO_RANDOMIZE = 0x0040000


def personality(path="/proc/self/personality"):
    """This process's personality flags, as the kernel holds them; None where unreadable."""
    try:
        with open(path) as flags:
            return int(flags.read(), 16)
    except (OSError, ValueError):
        return None


def layout_randomized(path="/proc/self/personality"):
    """Whether the kernel randomizes this process's mappings: ASLR on for the machine
    (kernel.randomize_va_space) and not switched off for the process."""
    flags = personality(path)
    return machine.aslr() not in (None, 0) and flags is not None \
        and not flags & ADDR_NO_RANDOMIZE


def fix_layout():
    """Switch layout randomization off for this process and what it executes (preexec_fn)."""
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    current = libc.personality(0xFFFFFFFF)
    if current == -1 or libc.personality(current | ADDR_NO_RANDOMIZE) == -1:
        raise OSError(ctypes.get_errno(), "personality(ADDR_NO_RANDOMIZE) failed")
