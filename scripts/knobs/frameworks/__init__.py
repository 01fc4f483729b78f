"""The identity function `f(x) -> copy of x` in each framework, one small module each.

A module defines `build(example, device) -> Identity`; `example` is the host float32 array
the run will pass. On device `gpu` the identity takes a host array and returns a host array
through the GPU: the host-to-device and device-to-host copies the seed's asker expected are
inside the timed call. To add a framework: write `knobs/frameworks/<name>.py` with `build`
(and `describe` for evidence), add lines here saying which runtime (virtual env / conda env)
runs it and on which devices, and list it in the config. Nothing here imports a framework:
Snakemake reads this registry.
"""

from dataclasses import dataclass, field
from typing import Any, Callable

# framework name -> runtime: `.venv-<runtime>` / `envs/<runtime>.yaml` hold what it imports
# (runtime "main" is `.venv` and the framework's own conda env below).
RUNTIMES = {
    "theano": "theano",
    "pytensor": "pytensor",
    "pytensor_cvm": "pytensor",
    "pytensor_jax": "pytensor",
    "numpy": "numpy",
    "copyto": "numpy",
    "torch": "torch",
    "torch_pinned": "torch",
    "torch_pinned_async": "torch",
    "memcpy_pinned": "torch",
    "tensorflow": "tensorflow",
}
# The virtual environment of each runtime when conda is not used (`make setup` builds them).
VENVS = {"theano": ".venv-theano"}
DEFAULT_VENV = ".venv"
# Frameworks that run on a GPU, and the library whose view of the GPU they depend on. On gpu:
# torch copies from pageable host memory, torch_pinned from pinned, torch_pinned_async pinned
# with non_blocking copies; memcpy_pinned is the copy limit (pinned host <-> kept device
# buffer, nothing allocated per call). The GPU-only ones need CUDA even for their host side.
GPU = {
    "pytensor_jax": "jax",
    "torch": "torch",
    "torch_pinned": "torch",
    "torch_pinned_async": "torch",
    "memcpy_pinned": "torch",
    "tensorflow": "tensorflow",
}
GPU_ONLY = ("torch_pinned", "torch_pinned_async", "memcpy_pinned")
# What a framework imports, where that is more than its runtime's name.
IMPORTS = {"pytensor_jax": ("pytensor", "jax"), "copyto": ("numpy",)}
# Frameworks with a compiled graph or a profiler worth keeping as evidence.
WITH_GRAPH = ("theano", "pytensor", "pytensor_cvm", "pytensor_jax", "tensorflow", "torch",
              "torch_pinned", "torch_pinned_async")


def devices(name):
    """Where a framework's identity runs."""
    if name in GPU_ONLY:
        return ("gpu",)
    return ("cpu", "gpu") if name in GPU else ("cpu",)


def imports(name):
    return IMPORTS.get(name, (RUNTIMES[name],))


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
