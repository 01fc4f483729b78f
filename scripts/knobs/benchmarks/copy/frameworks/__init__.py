"""The identity function `f(x) -> copy of x` in each framework, one small module each (the
copy benchmark, knobs/benchmarks/copy, times them).

A module defines `build(example, device) -> Identity`; `example` is the host float32 array
the run will pass. On device `gpu` the identity takes a host array and returns a host array
through the GPU: the host-to-device and device-to-host copies the seed's asker expected are
inside the timed call. `describe(example, device)`, where it exists, returns evidence text
(compiled graph, profile). It declares what the workflow must know of it without importing it
(Snakemake's interpreter may not have the framework) in a literal `FRAMEWORK = {"runtime":
..., "devices": ..., "gpu_library": ..., "graph": ...}`, read from its source.

To add a framework: write `<name>.py` here (or, for a study's own, in
`studies/<study>/frameworks/`) and list it under `copy.frameworks`.
"""

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve().parent  # the built-in frameworks; the studies' in theirs

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
def _declared():
    """{name: Framework} of every framework module found here and in the studies."""
    import ast

    from knobs import finder

    declared = {}
    for name, path in finder.found("frameworks", HERE).items():
        tree = ast.parse(path.read_text(), filename=str(path))
        values = [ast.literal_eval(node.value) for node in tree.body
                  if isinstance(node, ast.Assign)
                  and any(getattr(t, "id", None) == "FRAMEWORK" for t in node.targets)]
        if not values:
            raise ImportError(f"{path} declares no FRAMEWORK (see {__file__})")
        declared[name] = Framework(**values[0])
    return declared


FRAMEWORKS = _declared()


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
    from knobs import finder

    if name not in FRAMEWORKS:
        raise KeyError(f"unknown framework {name!r}; known: {', '.join(FRAMEWORKS)}")
    return finder.import_file(finder.found("frameworks", HERE)[name])
