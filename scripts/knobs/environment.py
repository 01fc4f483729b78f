"""Process-level knobs. An *environment* is a named set of knobs (environment variables and
preloaded libraries); each knob is one `Knob`: its name, how it is set before the measured
process starts, and how that process proves it applied. One knob is neither: `aslr: false`
starts the measured process without address-space layout randomization (its personality).

A proof is `effect` (an observed consequence: the library is mapped, glibc's own counters
changed, numpy's switch flipped, faults vanished) or `presence` (only that the variable is
there). `launch_env` builds the measured process's environment from a short allowlist, so
nothing from the caller's shell leaks in; `prove` runs inside the measured process and returns
the evidence; a knob that did not apply raises `KnobNotApplied`: the run fails instead of
writing a mislabelled number.
"""

import ctypes
import ctypes.util
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from typing import Callable

from knobs import machine, onednn, openmp

SPEC_VARIABLE = "KNOBS_ENVIRONMENT"

# What the measured process inherits from the caller, whatever the caller's shell holds: what
# a Python runtime needs to start and find its files. Everything else comes from the
# environment's knobs, the thread settings, or the config's `pass_env`.
ALLOWED = ("PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "TZ",
           "CONDA_PREFIX", "CONDA_DEFAULT_ENV", "VIRTUAL_ENV")
THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                    "NUMBA_NUM_THREADS", "TF_NUM_INTRAOP_THREADS")

# Where a missing library comes from, for the error message.
PACKAGES = {
    "libtcmalloc": "Debian: apt-get install libgoogle-perftools4; conda: gperftools",
    "libjemalloc": "Debian: apt-get install libjemalloc2; conda: jemalloc",
    "libiomp5": "pip install intel-openmp; conda: intel-openmp",
}


class KnobNotApplied(RuntimeError):
    """A knob is missing from, or has no effect in, the process it was meant for."""


class NotApplicable(RuntimeError):
    """A knob that cannot act in this process on this machine (AMX where the CPU has none, an
    OpenMP runtime where nothing uses OpenMP): the run is recorded as unavailable, with the
    reason, and not measured as if the knob were on."""


# ---- Effects: what a variable visibly changes in the process ----------------------------------
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
def _framework_threads():
    """The intra-op threads the loaded framework reports, with the name of its getter."""
    if "torch" in sys.modules:
        return sys.modules["torch"].get_num_threads(), "torch.get_num_threads"
    if openmp.max_threads() is not None:
        return openmp.max_threads(), "omp_get_max_threads"
    return None, None


def needs_openmp(what):
    """NotApplicable unless the framework brought an OpenMP runtime of its own (one mapped
    that is not preloaded): a preloaded runtime alone serves nobody."""
    preloaded = {os.path.realpath(p) for p in os.environ.get("LD_PRELOAD", "").split(":") if p}
    linked = [p for p in openmp.runtimes_mapped(machine.mapped_files())
              if os.path.realpath(p) not in preloaded]
    if not linked:
        raise NotApplicable(f"{what}: no library in this process uses OpenMP (TensorFlow, for "
                            "one, runs its own thread pool), so there is nothing for it to act on")


def _openmp_runtime(path):
    """A preloaded OpenMP runtime serves the OpenMP entry points the framework calls."""
    needs_openmp(f"the OpenMP runtime {os.path.basename(path)}")
    served = {symbol: openmp.serving(symbol) for symbol in ("GOMP_parallel", "omp_get_max_threads")}
    return all(found == os.path.realpath(path) for found in served.values()), {
        f"{symbol}_served_by": found for symbol, found in served.items()}


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


def _threads(value):
    found, getter = _framework_threads()
    if getter is None:  # TensorFlow: its pools take the count only when they start
        return None, {}
    return found == int(value), {getter: found}


def _interop_threads(value):
    """The inter-op pool: PyTorch's getter, or TensorFlow's threads (named tf_Compute)."""
    if "torch" in sys.modules:
        found = sys.modules["torch"].get_num_interop_threads()
        return found == int(value), {"torch.get_num_interop_threads": found}
    if "tensorflow" in sys.modules:
        found = thread_names().get("tf_Compute", 0)
        return found == int(value), {"threads_named_tf_Compute": found}
    return None, {}


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


def _precision(value, observed):
    """The step's convolutions and matrix products ran in bfloat16, most of them (oneDNN's
    lines say)."""
    compute = observed["compute"]
    in_bf16 = sum(dtype == "bf16" for _, _, dtype in compute)
    isas = sorted({isa for _, isa, _ in compute if isa})
    # Most of them, not one: a step that leaves autocast still runs some of its backward in
    # bfloat16. None at all fails too: both frameworks run bfloat16 on a CPU through oneDNN.
    return in_bf16 > len(compute) / 2, {
        "onednn_compute_primitives": len(compute), "in_bfloat16": in_bf16,
        "onednn_isas": isas}


@dataclass(frozen=True)
class Effect:
    """How a knob's effect is observed: `check(value) -> (applied, seen)` (applied None: this
    process can show it present only); `started`: once the framework has run (checked after
    the timed steps); `observes`: from what oneDNN ran (`check(value, observed)`)."""

    check: Callable
    started: bool = False
    allocator: str = None  # glibc: meaningless (and unproven) where another allocator is preloaded
    observes: bool = False


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
# Knobs that are not a variable: Intel's OpenMP runtime preloaded, the environment's thread
# counts, its precision.
OTHER_EFFECTS = {
    "intel_openmp": Effect(_openmp_runtime, started=True),
    "threads": Effect(_threads, started=True),
    "interop_threads": Effect(_interop_threads, started=True),
    "precision": Effect(_precision, started=True, observes=True),
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


def _layout_fixed(value, path="/proc/self/personality"):
    flags = personality(path)
    fixed = flags is not None and bool(flags & ADDR_NO_RANDOMIZE)
    return fixed == (value == "off"), {"personality": None if flags is None else hex(flags)}


# ---- Knobs ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Knob:
    """One knob of an environment: a variable set to a value, or a library preloaded."""

    name: str  # the variable, or the library as the config names it
    value: str  # the variable's value, or the preload's resolved path
    kind: str  # "variable" | "preload" | "personality" (the value of `aslr`: off)

    @property
    def effect(self):
        """How this knob's effect is seen, None where only its presence can be."""
        if self.kind == "preload":
            return OTHER_EFFECTS["intel_openmp"] if openmp.is_intel(self.value) else None
        return OTHER_EFFECTS.get(self.kind) or EFFECTS.get(self.name)

    def proof_kind(self, preloads):
        """How this knob can be proven here: effect or presence."""
        if self.kind in ("preload", "personality"):
            return "effect"
        effect = self.effect
        if effect is None or (effect.allocator == "glibc" and preloads):
            return "presence"
        return "effect"

    def prove(self, environ, real_maps, preloads, started=False, observed=None):
        """Evidence that this knob applied in this process, or KnobNotApplied. Effects marked
        `started` are checked only when `started` (after the timed steps), the rest before;
        `observed`: what oneDNN ran (knobs/onednn.py)."""
        if self.kind == "preload" and not started:
            if os.path.realpath(self.value) not in real_maps:
                raise KnobNotApplied(
                    f"preload '{self.name}' ({self.value}) is not mapped into the measured "
                    "process; the dynamic loader ignored it")
            # mapped; where it has an effect to show too, that is proven after the steps
            return {"proof": "pending" if self.effect else "effect",
                    "seen": {"mapped": self.value}}
        if self.kind == "personality":
            applied, seen = _layout_fixed(self.value)
            if not applied:
                raise KnobNotApplied(f"aslr: {self.value} was asked for, but the kernel "
                                     f"randomizes this process's layout ({seen})")
            return {"proof": "effect", "seen": seen}
        if self.kind == "variable" and environ.get(self.name) != self.value:
            raise KnobNotApplied(f"{self.name} should be {self.value!r} in the measured process "
                                 f"but is {environ.get(self.name)!r}")
        effect = self.effect
        if self.proof_kind(preloads) == "presence":
            return {"proof": "presence", "seen": {}}
        if effect.started != started:  # proven by prove_started, after the timed steps
            return {"proof": "pending", "seen": {}}
        applied, seen = (effect.check(self.value, observed) if effect.observes
                         else effect.check(self.value))
        if applied is None:
            return {"proof": "presence", "seen": seen}
        if not applied:
            raise KnobNotApplied(f"{self.name}={self.value!r} is set but has no effect in the "
                                 f"measured process ({seen})")
        return {"proof": "effect", "seen": seen}


def _library_dirs():
    """Directories searched for a preload given by name, the active env's own first."""
    dirs = []
    for prefix in (os.environ.get("CONDA_PREFIX"), sys.prefix):
        if prefix:
            dirs.append(os.path.join(prefix, "lib"))
    try:
        cache = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True).stdout
    except OSError:
        cache = ""
    dirs += sorted({os.path.dirname(line.split("=>")[-1].strip())
                    for line in cache.splitlines() if "=>" in line})
    dirs += ["/usr/local/lib", "/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib", "/lib"]
    return dirs


def resolve_library(environment, name):
    """Absolute path of a preload library, or a KnobNotApplied naming the package to install."""
    if os.path.isabs(name):
        candidates = [name]
    else:
        candidates = [os.path.join(d, name) for d in _library_dirs()]
    for path in candidates:
        if os.path.isfile(path):
            return os.path.realpath(path)
    hint = next((pkg for stem, pkg in PACKAGES.items() if os.path.basename(name).startswith(stem)),
                "install the package that provides it, or give an absolute path")
    raise KnobNotApplied(
        f"environment '{environment}': preload library '{name}' was not found "
        f"(searched {', '.join(candidates[:6])}...). Fix: {hint}.")


def knobs_of(name, spec, resolve=True):
    """The knobs an environment spec (`env`, `preload`) sets, preloads resolved to paths."""
    knobs = [Knob(key, str(value), "variable") for key, value in spec.get("env", {}).items()]
    for library in spec.get("preload", []):
        path = resolve_library(name, library) if resolve else library
        knobs.append(Knob(library, path, "preload"))
    if spec.get("aslr", True) is False:
        knobs.append(Knob("aslr", "off", "personality"))
    for key in ("threads", "interop_threads", "precision"):
        if spec.get(key) is not None:
            knobs.append(Knob(key, str(spec[key]), key))
    for variable in without_intel_openmp(spec):
        raise KnobNotApplied(f"environment '{name}': {variable} is read by Intel's OpenMP "
                             "alone; without it the variable is ignored. Fix: add "
                             "`preload: [libiomp5.so]` (the intel-openmp wheel)")
    return knobs


def without_intel_openmp(spec):
    """The variables of an environment that only Intel's OpenMP reads, where it does not
    preload it."""
    if any(openmp.is_intel(library) for library in spec.get("preload", [])):
        return []
    return [variable for variable in INTEL_OPENMP_ONLY if variable in spec.get("env", {})]


def launch_env(name, spec, threads=None, pass_env=(), base=None):
    """The whole environment of the measured process: the allowlist taken from `base` (the
    caller's), the variables `pass_env` names, the thread settings, then the environment's
    knobs; and the spec it will prove, under SPEC_VARIABLE."""
    base = os.environ if base is None else base
    env = {key: base[key] for key in (*ALLOWED, *pass_env) if key in base}
    threads = spec.get("threads") or threads  # the environment's own count comes first
    if threads is not None:
        env.update({key: str(threads) for key in THREAD_VARIABLES})
    if spec.get("interop_threads"):  # TensorFlow's; PyTorch's is set in the process
        env["TF_NUM_INTEROP_THREADS"] = str(spec["interop_threads"])
    knobs = knobs_of(name, spec)
    env.update({k.name: k.value for k in knobs if k.kind == "variable"})
    preloads = [k.value for k in knobs if k.kind == "preload"]
    if preloads:
        env["LD_PRELOAD"] = ":".join(preloads)
    if needs_onednn_lines(knobs):  # what the process's proof reads (TensorFlow: from start)
        env["ONEDNN_VERBOSE"] = "profile_create"
    env[SPEC_VARIABLE] = json.dumps({
        "name": name, "knobs": [vars(k) for k in knobs], "threads": threads,
        "pass_env": list(pass_env), "require_effect": spec.get("require_effect", False)})
    return env


def _spec(environ):
    if SPEC_VARIABLE not in environ:
        raise KnobNotApplied(
            f"{SPEC_VARIABLE} is not set: start benchmarks through scripts/run_benchmark.py so "
            "the environment they claim can be proven.")
    spec = json.loads(environ[SPEC_VARIABLE])
    return spec, [Knob(**knob) for knob in spec["knobs"]]


def _requires_effect(spec, knob):
    wanted = spec["require_effect"]
    return wanted is True or (isinstance(wanted, list) and knob.name in wanted)


def prove(expected=None, environ=None, maps=None):
    """Check, inside the measured process, that its environment applied (and is the one named
    `expected`, the label its results will carry); return the evidence: one proof per knob."""
    environ = os.environ if environ is None else environ
    spec, knobs = _spec(environ)
    name = spec["name"]
    if expected is not None and name != expected:
        raise KnobNotApplied(f"launched in environment '{name}' but labelled '{expected}'")
    maps = machine.mapped_files() if maps is None else maps
    real_maps = {os.path.realpath(path) for path in maps}
    preloads = [k for k in knobs if k.kind == "preload"]
    if not preloads and environ.get("LD_PRELOAD"):
        raise KnobNotApplied(
            f"environment '{name}' preloads nothing but LD_PRELOAD={environ['LD_PRELOAD']!r}")
    proofs = {}
    for knob in knobs:
        if _requires_effect(spec, knob) and knob.proof_kind(preloads) != "effect":
            raise KnobNotApplied(
                f"environment '{name}': {knob.name} must be proven by its effect "
                "(require_effect), but it can only be proven present here")
        try:
            proofs[knob.name] = {"kind": knob.kind, "value": knob.value,
                                 **knob.prove(environ, real_maps, preloads)}
        except KnobNotApplied as error:
            raise KnobNotApplied(f"environment '{name}': {error}") from None
    effects = {key: value for proof in proofs.values() for key, value in proof["seen"].items()}
    # Recorded for every run, so faults can be read against them.
    effects["numpy_madvise_hugepage"] = numpy_madvise_hugepage()
    effects["layout_randomized"] = layout_randomized()
    if not preloads:
        effects["glibc_mmaps_48MiB"] = large_malloc_is_mmapped()
    return {"name": name, "proofs": proofs, "effects": effects,
            "preloads": [{"requested": k.name, "path": k.value, "mapped": True} for k in preloads],
            "set": {k.name: k.value for k in knobs if k.kind == "variable"},
            "threads": spec["threads"], "pass_env": spec["pass_env"]}


def knobs_in_process(environ=None):
    """The knobs the measured process was launched with."""
    return _spec(os.environ if environ is None else environ)[1]


def needs_onednn_lines(knobs):
    """Whether some knob is proven from what oneDNN ran."""
    return any(k.effect and k.effect.observes for k in knobs)


def prove_started(evidence, environ=None, observed=None):
    """The proofs of knobs that show only once the framework has run (Effect.started), added
    to the evidence `prove` returned; `observed`: what oneDNN ran."""
    environ = os.environ if environ is None else environ
    spec, knobs = _spec(environ)
    preloads = [k for k in knobs if k.kind == "preload"]
    for knob in knobs:
        if knob.effect and knob.effect.started and knob.proof_kind(preloads) == "effect":
            try:
                proof = knob.prove(environ, set(), preloads, started=True, observed=observed)
            except KnobNotApplied as error:
                raise KnobNotApplied(f"environment '{spec['name']}': {error}") from None
            seen = {**evidence["proofs"][knob.name].get("seen", {}), **proof["seen"]}
            evidence["proofs"][knob.name].update({**proof, "seen": seen})
            evidence["effects"].update(proof["seen"])
    return evidence


def recorded_environment(environ=None):
    """The measured process's whole environment, as it saw it (the spec aside)."""
    environ = os.environ if environ is None else environ
    return {k: v for k, v in sorted(environ.items()) if k != SPEC_VARIABLE}


def allocator_libraries(maps=None):
    """Allocator libraries mapped in this process (their real paths name their versions)."""
    maps = machine.mapped_files() if maps is None else maps
    return sorted(path for path in maps
                  if any(stem in os.path.basename(path)
                         for stem in ("libtcmalloc", "libjemalloc", "libc.so", "libc-")))
