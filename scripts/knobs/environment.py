"""Process-level knobs: an *environment* is a named set of env vars and preloaded libraries.

`launch_env` (used by the launcher, before the measured process starts) resolves the
libraries and builds the child's environment; `prove` (called inside the measured process)
checks that every knob really reached it and returns the evidence. A knob that did not apply
raises `KnobNotApplied`: the run fails instead of writing a mislabelled number.
"""

import ctypes
import ctypes.util
import json
import os
import subprocess
import sys

SPEC_VARIABLE = "KNOBS_ENVIRONMENT"

# Inherited variables that change the allocator or the framework's own behaviour: they are
# removed from the child unless the environment sets them, so the baseline really is baseline.
INHERITED_KNOB_PREFIXES = ("MALLOC_", "GLIBC_TUNABLES", "NUMPY_MADVISE_HUGEPAGE",
                           "THP_MEM_ALLOC_ENABLE", "TCMALLOC_", "MALLOC_CONF",
                           "PYTENSOR_FLAGS", "THEANO_FLAGS")
RECORDED_PREFIXES = INHERITED_KNOB_PREFIXES + (
    "LD_PRELOAD", "OMP_", "MKL_", "OPENBLAS_", "TF_", "PROTOCOL_BUFFERS_", "CUDA_", "KMP_")

# Where a missing library comes from, for the error message.
PACKAGES = {
    "libtcmalloc": "Debian: apt-get install libgoogle-perftools4; conda: gperftools",
    "libjemalloc": "Debian: apt-get install libjemalloc2; conda: jemalloc",
}


class KnobNotApplied(RuntimeError):
    """An environment's knob is missing from the process it was meant for."""


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


def launch_env(name, variables, preloads, base=None):
    """The environment for the measured process, and the spec it will prove."""
    env = {key: value for key, value in (base if base is not None else os.environ).items()
           if key != "LD_PRELOAD" and not key.startswith(INHERITED_KNOB_PREFIXES)}
    resolved = [{"requested": lib, "path": resolve_library(name, lib)} for lib in preloads]
    env.update(variables)
    if resolved:
        env["LD_PRELOAD"] = ":".join(item["path"] for item in resolved)
    env[SPEC_VARIABLE] = json.dumps({"name": name, "env": variables, "preload": resolved})
    return env


def mapped_files():
    """Files mapped into this process, from /proc/self/maps."""
    with open("/proc/self/maps") as maps:
        return {line.split(None, 5)[5].strip() for line in maps
                if len(line.split(None, 5)) == 6 and line.split(None, 5)[5].startswith("/")}


def _numpy_madvise_hugepage():
    import numpy as np
    core = getattr(np, "_core", None) or np.core
    return bool(core.multiarray._get_madvise_hugepage())


class _MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                 "fsmblks", "uordblks", "fordblks", "keepcost")]


def large_malloc_is_mmapped(size=48 << 20):
    """Whether glibc serves a `size`-byte malloc with a fresh mmap (its own counters say)."""
    libc = ctypes.CDLL(ctypes.util.find_library("c"))
    libc.malloc.restype = ctypes.c_void_p
    libc.free.argtypes = [ctypes.c_void_p]
    libc.mallinfo2.restype = _MallInfo2
    before = libc.mallinfo2().hblkhd
    block = libc.malloc(size)
    during = libc.mallinfo2().hblkhd
    libc.free(block)
    return during - before >= size


# Effect checks: env vars whose effect the process can observe directly, beyond seeing the
# variable. Each returns (applied, evidence) for the value the environment set.
def _check_numpy_madvise(value):
    active = _numpy_madvise_hugepage()
    return active == (value != "0"), {"numpy_madvise_hugepage": active}


def _check_mmap_threshold(value):
    size = min(int(value) - 4096, 48 << 20)
    mmapped = large_malloc_is_mmapped(size)
    return not mmapped, {f"glibc_mmaps_{size}_bytes": mmapped}


def _check_protobuf(value):
    from google.protobuf.internal import api_implementation

    active = api_implementation.Type()
    return active == value, {"protobuf_implementation": active}


def _check_onednn(value):
    try:
        from tensorflow.python.util import _pywrap_util_port
    except ImportError:
        return False, {"onednn": "TensorFlow is not installed here: the knob cannot act"}
    active = bool(_pywrap_util_port.IsMklEnabled())
    return active == (value != "0"), {"onednn": active}


EFFECT_CHECKS = {
    "NUMPY_MADVISE_HUGEPAGE": _check_numpy_madvise,
    "MALLOC_MMAP_THRESHOLD_": _check_mmap_threshold,
    "PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION": _check_protobuf,
    "TF_ENABLE_ONEDNN_OPTS": _check_onednn,
}


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


def _check_tf_gpu_threads(value):
    """TF_GPU_THREAD_MODE=gpu_private (or gpu_shared) gives the GPU its own thread pool, whose
    threads TensorFlow names tf_<pool> (the kernel keeps 15 characters)."""
    prefix = f"tf_{value}"[:15]
    count = sum(n for name, n in thread_names().items() if name.startswith(prefix))
    return value == "global" or count > 0, {f"threads_named_{prefix}": count}


# Knobs that act only once the framework has started its devices: checked after the first
# steps, by `prove_started`.
STARTED_CHECKS = {"TF_GPU_THREAD_MODE": _check_tf_gpu_threads}


def _apply_checks(checks, spec, evidence, skip=()):
    name = spec["name"]
    for key, check in checks.items():
        if key not in spec["env"] or key in skip:
            continue
        applied, seen = check(spec["env"][key])
        evidence["effects"].update(seen)
        if not applied:
            raise KnobNotApplied(
                f"environment '{name}': {key}={spec['env'][key]!r} is set but has no effect "
                f"in the measured process ({seen})")


def prove_started(evidence, environ=None):
    """The checks of knobs that act once the framework runs (see STARTED_CHECKS), added to
    the evidence `prove` returned."""
    environ = os.environ if environ is None else environ
    _apply_checks(STARTED_CHECKS, json.loads(environ[SPEC_VARIABLE]), evidence)
    return evidence


THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                    "NUMBA_NUM_THREADS", "TF_NUM_INTRAOP_THREADS")


def set_threads(threads):
    """Threads are a knob: set before any framework starts (Snakemake would scale a rule's
    threads down to --cores, silently), and recorded with the other variables."""
    for key in THREAD_VARIABLES:
        os.environ[key] = str(threads)


def recorded_variables(environ=None):
    """Variables that can change a benchmark, as the measured process sees them."""
    environ = os.environ if environ is None else environ
    return {k: v for k, v in sorted(environ.items())
            if k.startswith(RECORDED_PREFIXES) and k != SPEC_VARIABLE}


def prove(expected=None, environ=None, maps=None):
    """Check, inside the measured process, that its environment applied (and is the one named
    `expected`, the label its results will carry); return the evidence."""
    environ = os.environ if environ is None else environ
    if SPEC_VARIABLE not in environ:
        raise KnobNotApplied(
            f"{SPEC_VARIABLE} is not set: start benchmarks through scripts/with_environment.py "
            "so the environment they claim can be proven.")
    spec = json.loads(environ[SPEC_VARIABLE])
    name = spec["name"]
    if expected is not None and name != expected:
        raise KnobNotApplied(f"launched in environment '{name}' but labelled '{expected}'")
    maps = mapped_files() if maps is None else maps
    real_maps = {os.path.realpath(path) for path in maps}
    evidence = {"name": name, "set": spec["env"], "variables": recorded_variables(environ),
                "preloads": [], "effects": {}}
    for key, value in spec["env"].items():
        if environ.get(key) != value:
            raise KnobNotApplied(
                f"environment '{name}': {key} should be {value!r} in the measured process "
                f"but is {environ.get(key)!r}")
    for item in spec["preload"]:
        if os.path.realpath(item["path"]) not in real_maps:
            raise KnobNotApplied(
                f"environment '{name}': preload '{item['requested']}' ({item['path']}) is not "
                "mapped into the measured process; the dynamic loader ignored it")
        evidence["preloads"].append({**item, "mapped": True})
    if not spec["preload"] and environ.get("LD_PRELOAD"):
        raise KnobNotApplied(
            f"environment '{name}' preloads nothing but LD_PRELOAD={environ['LD_PRELOAD']!r}")
    allocator_replaced = bool(spec["preload"])
    _apply_checks(EFFECT_CHECKS, spec, evidence,
                  skip=[k for k in EFFECT_CHECKS if allocator_replaced and k.startswith("MALLOC_")])
    # Recorded for every run, so the figure's faults can be read against them.
    evidence["effects"]["numpy_madvise_hugepage"] = _numpy_madvise_hugepage()
    if not allocator_replaced:
        evidence["effects"]["glibc_mmaps_48MiB"] = large_malloc_is_mmapped()
    return evidence


def allocator_libraries(maps=None):
    """Allocator libraries mapped in this process (their real paths name their versions)."""
    maps = mapped_files() if maps is None else maps
    return sorted(path for path in maps
                  if any(stem in os.path.basename(path)
                         for stem in ("libtcmalloc", "libjemalloc", "libc.so", "libc-")))
