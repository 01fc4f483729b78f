"""The inter-op thread count (`interop_threads: 1`): TensorFlow's from its variable at start,
PyTorch's set in the process before it runs anything; proven by PyTorch's getter or by
TensorFlow's threads (named tf_Compute)."""

import sys

from knobs import effects
from knobs.kinds.base import Effect, Kind


def check(value):
    if "torch" in sys.modules:
        found = sys.modules["torch"].get_num_interop_threads()
        return found == int(value), {"torch.get_num_interop_threads": found}
    if "tensorflow" in sys.modules:
        found = effects.thread_names().get("tf_Compute", 0)
        return found == int(value), {"threads_named_tf_Compute": found}
    return None, {}


def set_in_torch(knobs):
    """PyTorch's inter-op pool, sized before it runs anything (TensorFlow's: its variable)."""
    torch = sys.modules.get("torch")
    for knob in knobs:
        if torch is not None and torch.get_num_interop_threads() != int(knob.value):
            try:
                torch.set_num_interop_threads(int(knob.value))
            except RuntimeError as error:  # once inter-op work has started: the proof will say
                print(f"run_benchmark: inter-op threads not set: {error}", file=sys.stderr)


class InteropThreads(Kind):
    key = "interop_threads"
    option = "--interop-threads"
    schema = {"description": (
        "The inter-op thread count (PyTorch's torch.set_num_interop_threads, TensorFlow's "
        "TF_NUM_INTEROP_THREADS); proven by PyTorch's getter or TensorFlow's tf_Compute "
        "threads."), "type": "integer", "minimum": 1}

    def words(self, value):
        return [self.option, str(value)] if value else []

    def read(self, given):
        return int(given[-1]) if given else None

    def launch(self, knobs, env):
        for knob in knobs:
            env["TF_NUM_INTEROP_THREADS"] = knob.value

    def recipe(self, value, runtime):
        if not value:
            return [], [], []
        if runtime == "tensorflow":
            return [f"TF_NUM_INTEROP_THREADS={value}"], [], []
        return [], [f"torch.set_num_interop_threads({value}) before any PyTorch work"], []

    def effect(self, knob):
        return Effect(check, started=True)

    def prepare(self, knobs):
        set_in_torch(knobs)

    def check_built(self, knobs):
        set_in_torch(knobs)  # where the benchmark imported PyTorch only while building
