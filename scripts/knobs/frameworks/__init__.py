"""The identity function `f(x) -> copy of x` in each framework, one small module each.

A module defines `build(example) -> Identity`; `example` is the host float32 array the run
will pass. To add a framework: write `knobs/frameworks/<name>.py` with `build`, add a line
here saying which runtime (virtual env / conda env) runs it, and list it in the config.
Nothing here imports a framework: Snakemake reads this registry.
"""

from dataclasses import dataclass, field
from typing import Any, Callable

# framework name -> runtime: `.venv-<runtime>` / `envs/<runtime>.yaml` hold what it imports
# (runtime "main" is `.venv` and the framework's own conda env below).
RUNTIMES = {
    "theano": "theano",
    "pytensor": "pytensor",
    "pytensor_cvm": "pytensor",
    "numpy": "numpy",
    "copyto": "numpy",
    "torch": "torch",
    "tensorflow": "tensorflow",
}
# The virtual environment of each runtime when conda is not used (`make setup` builds them).
VENVS = {"theano": ".venv-theano"}
DEFAULT_VENV = ".venv"
# Frameworks with a compiled graph and a profiler worth keeping as evidence.
WITH_GRAPH = ("theano", "pytensor", "pytensor_cvm", "tensorflow")


@dataclass
class Identity:
    """A compiled identity function and what is known about it."""

    call: Callable[[Any], Any]  # the timed call; its result is discarded inside the clock
    prepare: Callable[[Any], Any]  # host numpy array -> the framework's input, done once
    to_numpy: Callable[[Any], Any]  # output -> numpy, to check the copy (outside the clock)
    version: str
    evidence: dict = field(default_factory=dict)
    fresh_output: bool = True  # False only for the copy-limit reference into a kept buffer


def load(name):
    import importlib

    if name not in RUNTIMES:
        raise KeyError(f"unknown framework {name!r}; known: {', '.join(RUNTIMES)}")
    return importlib.import_module(f"knobs.frameworks.{name}")
