"""The environment's own intra-op thread count (`threads: 2`), in place of the benchmark's:
the thread variables are set from it, and the framework's getter (PyTorch's, or the OpenMP
runtime's) proves it once the steps have run."""

import sys

from knobs import openmp
from knobs.kinds.base import Effect, Kind


def framework_threads():
    """The intra-op threads the loaded framework reports, with the name of its getter."""
    if "torch" in sys.modules:
        return sys.modules["torch"].get_num_threads(), "torch.get_num_threads"
    if openmp.max_threads() is not None:
        return openmp.max_threads(), "omp_get_max_threads"
    return None, None


def check(value):
    found, getter = framework_threads()
    if getter is None:  # TensorFlow: its pools take the count only when they start
        return None, {}
    return found == int(value), {getter: found}


class Threads(Kind):
    key = "threads"
    option = "--environment-threads"
    schema = {"description": (
        "The intra-op thread count in this environment (the thread variables and each "
        "framework's own setting), in place of the benchmark's `threads`; proven by the "
        "framework's getter (PyTorch) or the OpenMP runtime's."),
        "type": "integer", "minimum": 1}

    def words(self, value):
        return [self.option, str(value)] if value else []  # 0 or None: the benchmark's

    def read(self, given):
        return int(given[-1]) if given else None

    def recipe(self, value, runtime):
        if not value:
            return [], [], []
        variable = "TF_NUM_INTRAOP_THREADS" if runtime == "tensorflow" else "OMP_NUM_THREADS"
        return [f"{variable}={value}"], [], []

    def effect(self, knob):
        return Effect(check, started=True)
