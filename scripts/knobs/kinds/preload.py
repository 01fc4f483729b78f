"""Preloaded libraries (`preload: [libtcmalloc.so.4]`): each one knob, put in the measured
process's LD_PRELOAD by its resolved path and proven there by being mapped; Intel's OpenMP
runtime also by serving the OpenMP entry points the framework calls. In a recipe, each is
named as another machine finds it (`portable`)."""

import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass

from knobs import effects, openmp
from knobs.kinds.base import Effect, Kind, Knob, KnobNotApplied

# Where a missing library comes from, for the error message.
PACKAGES = {
    "libtcmalloc": "Debian: apt-get install libgoogle-perftools4; conda: gperftools",
    "libjemalloc": "Debian: apt-get install libjemalloc2; conda: jemalloc",
    "libiomp5": "pip install intel-openmp; conda: intel-openmp",
}


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


# The lib folder of the Python environment whose `python` runs a recipe's line: where pip's and
# conda's packages put the libraries they bring (intel-openmp's libiomp5.so).
PYTHON_LIB = "$(python -c 'import sys; print(sys.prefix)')/lib"


@dataclass(frozen=True)
class Preload:
    """A preloaded library named so that it works on another machine than the search's."""

    config: str  # in a config (resolve_library finds it)
    shell: str  # in LD_PRELOAD of a recipe's line
    note: str  # what the recipe says of it


def loader_finds(name):
    """The file the dynamic loader preloads for a bare `name` in a clean environment (its
    cache and default folders, no LD_LIBRARY_PATH), None where it finds none: it lists what
    it would load (LD_TRACE_LOADED_OBJECTS) for a program with no search path of its own."""
    program = shutil.which("true") or "/bin/true"
    done = subprocess.run([program], env={"LD_PRELOAD": name, "LD_TRACE_LOADED_OBJECTS": "1"},
                          capture_output=True, text=True)
    found = re.search(rf"^\s*{re.escape(name)} => (\S+) \(", done.stdout, re.M)
    return os.path.realpath(found.group(1)) if found else None


def cached_names(path):
    """The names the loader's cache (`ldconfig -p`) holds the file `path` under: its soname
    (libtcmalloc.so.4, where the file is libtcmalloc.so.4.5.10)."""
    try:
        cache = subprocess.run([shutil.which("ldconfig") or "/sbin/ldconfig", "-p"],
                               capture_output=True, text=True).stdout
    except OSError:
        return []
    return [line.split()[0] for line in cache.splitlines()
            if "=>" in line and os.path.realpath(line.split("=>")[-1].strip()) == path]


def portable(library, environment_name="recipe"):
    """How a preload (as a config names it, or by its path) is named for another machine: by
    a name the loader finds this same file by, its soname first (a file's own name can carry a
    minor version only some distributions ship); else in the lib folder of the Python
    environment, where it lies there; else by its full path (said)."""
    name = os.path.basename(library)
    hint = next((f" ({package})" for stem, package in PACKAGES.items()
                 if name.startswith(stem)), "")
    try:
        path = resolve_library(environment_name, library)
    except KnobNotApplied:  # a search replayed elsewhere: named as it was
        return Preload(library, library, f"{library}, not found on this machine{hint}")
    found = next((n for n in dict.fromkeys([*cached_names(path), name])
                  if loader_finds(n) == path), None)
    if found:
        return Preload(found, found, f"{found}, which the loader finds by that name{hint}; one "
                       "it cannot find, it ignores with a warning")
    if os.path.realpath(os.path.join(sys.prefix, "lib", name)) == path:
        return Preload(name, f"{PYTHON_LIB}/{name}",
                       f"{name}, off the loader's path: the line names it in the lib folder of "
                       f"the Python environment whose python runs it{hint}")
    return Preload(path, path, f"{path}, off the loader's path and outside the Python "
                   "environment: the line names it where the search found it; name yours")


def openmp_runtime(path):
    """A preloaded OpenMP runtime serves the OpenMP entry points the framework calls."""
    effects.needs_openmp(f"the OpenMP runtime {os.path.basename(path)}")
    served = {symbol: openmp.serving(symbol) for symbol in ("GOMP_parallel", "omp_get_max_threads")}
    return all(found == os.path.realpath(path) for found in served.values()), {
        f"{symbol}_served_by": found for symbol, found in served.items()}


INTEL_OPENMP = Effect(openmp_runtime, started=True)


class Preloads(Kind):
    key = "preload"
    option = "--preload"
    schema = {"description": "Libraries put in LD_PRELOAD (a file name searched in the usual "
                             "places, or an absolute path).",
              "type": "array", "items": {"type": "string", "minLength": 1}, "default": []}

    def words(self, value):
        return [word for library in value or [] for word in (self.option, library)]

    def read(self, given):
        return list(given)

    def knobs(self, environment, value, resolve=True):
        return [Knob(library, resolve_library(environment, library) if resolve else library,
                     self.knob_kind) for library in value or []]

    def launch(self, knobs, env):
        if knobs:
            env["LD_PRELOAD"] = ":".join(k.value for k in knobs)

    def combine(self, first, second):
        joined = list(first or []) + [p for p in second or [] if p not in (first or [])]
        return joined or None

    def recipe(self, value, runtime):
        preloads = [portable(library) for library in value or []]
        if not preloads:
            return [], [], []
        joined = ":".join(p.shell for p in preloads)
        word = f'LD_PRELOAD="{joined}"' if "$(" in joined else f"LD_PRELOAD={shlex.quote(joined)}"
        return [word], [], [p.note for p in preloads]

    present_is_effect = True

    def present(self, knob, environ, real_maps):
        if os.path.realpath(knob.value) not in real_maps:
            raise KnobNotApplied(
                f"preload '{knob.name}' ({knob.value}) is not mapped into the measured "
                "process; the dynamic loader ignored it")
        return {"mapped": knob.value}

    def effect(self, knob):
        return INTEL_OPENMP if openmp.is_intel(knob.value) else None

    def check_built(self, knobs):
        acting = [k.name for k in knobs if openmp.is_intel(k.value)]
        if acting:
            effects.needs_openmp(", ".join(acting))
