"""The identity function `f(x) -> copy of x` in each framework, one small module each (the
copy benchmark, knobs/benchmarks/copy.py, times them).

A module defines `build(example, device) -> Identity`; `example` is the host float32 array
the run will pass. On device `gpu` the identity takes a host array and returns a host array
through the GPU: the host-to-device and device-to-host copies the seed's asker expected are
inside the timed call. `describe(example, device)`, where it exists, returns evidence text
(compiled graph, profile). To add a framework: write `knobs/frameworks/<name>.py`, add one
line to FRAMEWORKS, list it in the config. Nothing here imports a framework: Snakemake reads
this registry.
"""

from dataclasses import dataclass, field
from typing import Any, Callable

# The virtual environment of each runtime when conda is not used (`make setup` builds them);
# with --use-conda a runtime is envs/<runtime>.yaml.
VENVS = {"theano": ".venv-theano"}
DEFAULT_VENV = ".venv"


@dataclass(frozen=True)
class Framework:
    runtime: str  # the runtime that imports it: .venv-<runtime> / envs/<runtime>.yaml
    imports: tuple = ()  # modules it needs (default: the runtime's name)
    devices: tuple = ("cpu",)
    gpu_library: str = None  # on a GPU: the library whose view of the GPU it depends on
    graph: bool = False  # a compiled graph or a profile worth keeping as evidence

    def needs(self):
        return self.imports or (self.runtime,)


# On gpu: torch copies from pageable host memory, torch_pinned from pinned, torch_pinned_async
# pinned with non_blocking copies; memcpy_pinned is the copy limit (pinned host <-> kept device
# buffer, nothing allocated per call). The GPU-only ones need CUDA even for their host side.
FRAMEWORKS = {
    "theano": Framework("theano", graph=True),
    "pytensor": Framework("pytensor", graph=True),
    "pytensor_cvm": Framework("pytensor", graph=True),
    "pytensor_jax": Framework("pytensor", ("pytensor", "jax"), ("cpu", "gpu"), "jax", True),
    "numpy": Framework("numpy"),
    "copyto": Framework("numpy"),
    "aligned": Framework("numpy"),
    "aligned_thp": Framework("numpy"),
    "aligned_storage": Framework("numpy"),
    "torch": Framework("torch", devices=("cpu", "gpu"), gpu_library="torch", graph=True),
    "torch_copyto": Framework("torch"),
    "torch_pinned": Framework("torch", devices=("gpu",), gpu_library="torch", graph=True),
    "torch_pinned_async": Framework("torch", devices=("gpu",), gpu_library="torch", graph=True),
    "memcpy_pinned": Framework("torch", devices=("gpu",), gpu_library="torch"),
    "tensorflow": Framework("tensorflow", devices=("cpu", "gpu"), gpu_library="tensorflow",
                            graph=True),
}


def devices(name):
    """Where a framework's identity runs."""
    return FRAMEWORKS[name].devices


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

    if name not in FRAMEWORKS:
        raise KeyError(f"unknown framework {name!r}; known: {', '.join(FRAMEWORKS)}")
    return importlib.import_module(f"knobs.frameworks.{name}")
