"""Benchmarks: each is one Python module defining a class `Benchmark`. The runner
(knobs/runner.py) does everything else: the environment and its proof, threads, the order of
cases, warm-up, the timed samples with their counters, the result file.

    class Benchmark:
        def __init__(self, params, device, seed):
            # Build the work from the config's `params` (a dict), on `device` ("cpu" or
            # "gpu"), with `seed` (the rep). Not timed, apart from `build_seconds`.

        def setup(self, case):
            # Prepare one case and return its step: a function of no arguments that returns
            # only when the work is done (synchronise a GPU first). What it returns is
            # dropped inside the clock; a number (a loss) is kept as the sample's `value`.
            # The step of the previous case is released before the next setup.

    Optional:
        cases = ["forward", "train"]   # or a method; default: one case named "step"
        def info(self, case) -> dict        # facts about the case (bytes, FLOPs), after it ran;
                                            # one a record column names (kernel, host) becomes
                                            # case_<name> in the table
        def evidence(self) -> dict          # proof that the benchmark's own knobs applied;
                                            # raise knobs.environment.KnobNotApplied if not
        def trace(self, path) -> dict       # trace one step to `path` (Chrome trace);
                                            # return seconds per op
        def versions(self) -> dict          # library versions worth recording
        def describe(self, devices) -> str  # evidence text (compiled graph, profile)

A benchmark that cannot run on this machine for a reason worth reporting (torch.compile
without a compiler) raises `Unavailable`; the result then says so instead of a failure.

Built-in benchmarks are named by their module here (`copy`, `copy_kernels`, `faults`,
`hourglass`, `peak`); a user's is named by its file path, anywhere (`benchmarks/my_model.py`).
"""

import importlib
import importlib.util
import os


class Unavailable(RuntimeError):
    """This benchmark cannot run here, for a reason the result records."""


BUILT_IN = ("copy", "copy_kernels", "faults", "hourglass", "peak", "rotating_copies")


def load(name):
    """The module of a built-in benchmark or of a file path."""
    if name in BUILT_IN:
        return importlib.import_module(f"knobs.benchmarks.{name}")
    path = os.path.abspath(name)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"benchmark module {name!r} not found (built in: "
                                f"{', '.join(BUILT_IN)}; otherwise a path to a .py file)")
    spec = importlib.util.spec_from_file_location(
        "knobs_user_" + os.path.splitext(os.path.basename(path))[0], path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if not hasattr(module, "Benchmark"):
        raise AttributeError(f"{name} defines no class Benchmark (see knobs/benchmarks/__init__.py)")
    return module


def cases_of(benchmark):
    cases = getattr(benchmark, "cases", ["step"])
    return [str(case) for case in (cases() if callable(cases) else cases)]
