"""Process-level knobs. An *environment* is a named set of knobs; each knob is of one kind
(knobs/kinds/: a variable, a preloaded library, the layout, a thread count, a precision,
...), which says how it is set before the measured process starts and how that process proves
it applied.

A proof is `effect` (an observed consequence: the library is mapped, glibc's own counters
changed, numpy's switch flipped, faults vanished) or `presence` (only that the variable is
there). `launch_env` builds the measured process's environment from a short allowlist, so
nothing from the caller's shell leaks in, and hands it the spec as one value
(SPEC_VARIABLE); `prove` runs inside the measured process and returns the evidence; a knob
that did not apply raises `KnobNotApplied`: the run fails instead of writing a mislabelled
number.
"""

import json
import os

from knobs import effects, kinds, machine
from knobs.knob import Knob, KnobNotApplied, NotApplicable  # noqa: F401 (raised here)

SPEC_VARIABLE = "KNOBS_ENVIRONMENT"

# What the measured process inherits from the caller, whatever the caller's shell holds: what
# a Python runtime needs to start and find its files. Everything else comes from the
# environment's knobs, the thread settings, or the config's `pass_env`.
ALLOWED = ("PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "TZ",
           "CONDA_PREFIX", "CONDA_DEFAULT_ENV", "VIRTUAL_ENV")
THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                    "NUMBA_NUM_THREADS", "TF_NUM_INTRAOP_THREADS")


def knobs_of(name, spec, resolve=True, kind_files=()):
    """The knobs an environment spec sets, kind by kind (`resolve`: preloads to paths)."""
    knobs = [knob for kind in kinds.load(tuple(kind_files))
             for knob in kind.knobs(name, spec.get(kind.key), resolve)]
    for variable in without_intel_openmp(spec):
        raise KnobNotApplied(f"environment '{name}': {variable} is read by Intel's OpenMP "
                             "alone; without it the variable is ignored. Fix: add "
                             "`preload: [libiomp5.so]` (the intel-openmp wheel)")
    return knobs


def without_intel_openmp(spec):
    """The variables of an environment that only Intel's OpenMP reads, where it does not
    preload it."""
    from knobs import openmp

    if any(openmp.is_intel(library) for library in spec.get("preload", [])):
        return []
    return [variable for variable in effects.INTEL_OPENMP_ONLY if variable in spec.get("env", {})]


def by_kind(knobs, kind_files=()):
    """[(kind, its knobs)] for every kind, in the catalog's order."""
    return [(kind, [k for k in knobs if k.kind == kind.knob_kind])
            for kind in kinds.load(tuple(kind_files))]


def launch_env(name, spec, threads=None, pass_env=(), base=None, kind_files=()):
    """The whole environment of the measured process: the allowlist taken from `base` (the
    caller's), the variables `pass_env` names, the thread settings, then what each kind of
    knob sets; and the spec it will prove, under SPEC_VARIABLE."""
    base = os.environ if base is None else base
    env = {key: base[key] for key in (*ALLOWED, *pass_env) if key in base}
    threads = spec.get("threads") or threads  # the environment's own count comes first
    if threads is not None:
        env.update({key: str(threads) for key in THREAD_VARIABLES})
    knobs = knobs_of(name, spec, kind_files=kind_files)
    for kind, mine in by_kind(knobs, kind_files):
        kind.launch(mine, env)
    if needs_onednn_lines(knobs, kind_files):  # what its proof reads (TensorFlow: from start)
        env["ONEDNN_VERBOSE"] = "profile_create"
    env[SPEC_VARIABLE] = json.dumps({
        "name": name, "knobs": [vars(k) for k in knobs], "threads": threads,
        "pass_env": list(pass_env), "require_effect": spec.get("require_effect", False),
        **({"kinds": list(map(str, kind_files))} if kind_files else {})})
    return env


def before_exec(knobs, kind_files=()):
    """What runs in the child before it executes the measured process (the layout), or None."""
    calls = [call for kind, mine in by_kind(knobs, kind_files)
             if (call := kind.before_exec(mine)) is not None]
    return (lambda: [call() for call in calls]) if calls else None


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


def kind_of(knob, kind_files=()):
    return next(kind for kind in kinds.load(tuple(kind_files)) if kind.knob_kind == knob.kind)


def effect_of(knob, kind_files=()):
    """How this knob's effect is seen, None where only its presence can be."""
    return kind_of(knob, kind_files).effect(knob)


def proof_kind(knob, preloads, kind_files=()):
    """How this knob can be proven here: effect or presence."""
    kind = kind_of(knob, kind_files)
    if kind.present_is_effect:
        return "effect"
    effect = kind.effect(knob)
    if effect is None or (effect.allocator == "glibc" and preloads):
        return "presence"
    return "effect"


def prove_knob(knob, environ, real_maps, preloads, started=False, observed=None, kind_files=()):
    """Evidence that this knob applied in this process, or KnobNotApplied. Effects marked
    `started` are checked only when `started` (after the timed steps), the rest before;
    `observed`: what oneDNN ran (knobs/onednn.py)."""
    kind = kind_of(knob, kind_files)
    seen = {} if started else kind.present(knob, environ, real_maps)
    effect = kind.effect(knob)
    if effect is None or proof_kind(knob, preloads, kind_files) == "presence":
        return {"proof": "effect" if kind.present_is_effect else "presence", "seen": seen}
    if effect.started != started:  # proven by prove_started, after the timed steps
        return {"proof": "pending", "seen": seen}
    applied, more = (effect.check(knob.value, observed) if effect.observes
                     else effect.check(knob.value))
    if applied is None:
        return {"proof": "presence", "seen": {**seen, **more}}
    if not applied:
        raise KnobNotApplied(f"{knob.name}={knob.value!r} is set but has no effect in the "
                             f"measured process ({more})")
    return {"proof": "effect", "seen": {**seen, **more}}


def prove(expected=None, environ=None, maps=None):
    """Check, inside the measured process, that its environment applied (and is the one named
    `expected`, the label its results will carry); return the evidence: one proof per knob."""
    environ = os.environ if environ is None else environ
    spec, knobs = _spec(environ)
    files = spec.get("kinds", ())
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
        if _requires_effect(spec, knob) and proof_kind(knob, preloads, files) != "effect":
            raise KnobNotApplied(
                f"environment '{name}': {knob.name} must be proven by its effect "
                "(require_effect), but it can only be proven present here")
        try:
            proofs[knob.name] = {"kind": knob.kind, "value": knob.value,
                                 **prove_knob(knob, environ, real_maps, preloads,
                                              kind_files=files)}
        except KnobNotApplied as error:
            raise KnobNotApplied(f"environment '{name}': {error}") from None
    seen = {key: value for proof in proofs.values() for key, value in proof["seen"].items()}
    # Recorded for every run, so faults can be read against them.
    seen["numpy_madvise_hugepage"] = effects.numpy_madvise_hugepage()
    seen["layout_randomized"] = effects.layout_randomized()
    if not preloads:
        seen["glibc_mmaps_48MiB"] = effects.large_malloc_is_mmapped()
    return {"name": name, "proofs": proofs, "effects": seen,
            "preloads": [{"requested": k.name, "path": k.value, "mapped": True} for k in preloads],
            "set": {k.name: k.value for k in knobs if k.kind == "variable"},
            "threads": spec["threads"], "pass_env": spec["pass_env"]}


def knobs_in_process(environ=None):
    """The knobs the measured process was launched with."""
    return _spec(os.environ if environ is None else environ)[1]


def kind_files_in_process(environ=None):
    """The files of the config's own knob kinds, as the measured process was told them (none
    outside one: a step timed by hand, scripts/time_step.py)."""
    environ = os.environ if environ is None else environ
    return tuple(json.loads(environ[SPEC_VARIABLE]).get("kinds", ())) \
        if SPEC_VARIABLE in environ else ()


def needs_onednn_lines(knobs, kind_files=()):
    """Whether some knob is proven from what oneDNN ran."""
    return any((effect := effect_of(k, kind_files)) and effect.observes for k in knobs)


def prove_started(evidence, environ=None, observed=None):
    """The proofs of knobs that show only once the framework has run (Effect.started), added
    to the evidence `prove` returned; `observed`: what oneDNN ran."""
    environ = os.environ if environ is None else environ
    spec, knobs = _spec(environ)
    files = spec.get("kinds", ())
    preloads = [k for k in knobs if k.kind == "preload"]
    for knob in knobs:
        effect = effect_of(knob, files)
        if effect and effect.started and proof_kind(knob, preloads, files) == "effect":
            try:
                proof = prove_knob(knob, environ, set(), preloads, started=True,
                                   observed=observed, kind_files=files)
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
