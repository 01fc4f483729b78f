"""Environment variables (`env: {NAME: value}`): each one knob, set in the measured process's
environment and proven there by its effect where knobs/effects.py has a check for it
(`EFFECTS`), else by its presence."""

import shlex

from knobs import effects
from knobs.kinds.base import Kind, Knob, KnobNotApplied

# Variables that act through OpenMP: where nothing in the process uses OpenMP, not applicable.
OPENMP_VARIABLES = ("OMP_PROC_BIND", "OMP_PLACES", "GOMP_CPU_AFFINITY", "KMP_AFFINITY",
                    "KMP_BLOCKTIME")


class Variables(Kind):
    key = "env"
    knob_kind = "variable"
    option = "--set"
    recipe_late = True  # after what the launchers set (the preloads, the thread counts)
    schema = {"description": "Environment variables set in the measured process.",
              "type": "object",
              "propertyNames": {"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_]*$"},
              "additionalProperties": {"type": "string"}, "default": {}}

    def words(self, value):
        return [word for key, item in (value or {}).items()
                for word in (self.option, f"{key}={item}")]

    def read(self, given):
        for item in given:
            if "=" not in item:
                raise SystemExit(f"run_benchmark: {self.option} {item!r}: expected KEY=VALUE")
        return dict(item.split("=", 1) for item in given)

    def knobs(self, environment, value, resolve=True):
        return [Knob(key, str(item), self.knob_kind) for key, item in (value or {}).items()]

    def launch(self, knobs, env):
        env.update({k.name: k.value for k in knobs})

    def combine(self, first, second):
        merged = {**(first or {}), **(second or {})}
        return merged or None

    def recipe(self, value, runtime):
        return [f"{key}={shlex.quote(str(item))}" for key, item in (value or {}).items()], [], []

    def present(self, knob, environ, real_maps):
        if environ.get(knob.name) != knob.value:
            raise KnobNotApplied(f"{knob.name} should be {knob.value!r} in the measured process "
                                 f"but is {environ.get(knob.name)!r}")
        return {}

    def effect(self, knob):
        return effects.EFFECTS.get(knob.name)

    def check_built(self, knobs):
        acting = [k.name for k in knobs if k.name in OPENMP_VARIABLES]
        if acting:
            effects.needs_openmp(", ".join(acting))
