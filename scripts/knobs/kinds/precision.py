"""The precision of each step (`precision: bfloat16`): PyTorch's CPU autocast around the step,
or Keras's global policy set before the benchmark builds its model; proven by the
convolutions and matrix products oneDNN ran (most of them in bfloat16). Not applicable on a
CPU without bfloat16 arithmetic, nor where the benchmark imports neither framework as it
must."""

import sys

from knobs import machine
from knobs.kinds.base import Effect, Kind, NotApplicable

BFLOAT16_FLAGS = ("avx512_bf16", "amx_bf16")  # the CPU's own bfloat16 arithmetic


def bfloat16_arithmetic():
    """Whether this CPU does bfloat16 arithmetic itself (else the precision knob cannot act)."""
    return bool(set(machine.cpu_flags()) & set(BFLOAT16_FLAGS))


def check(value, observed):
    """The step's convolutions and matrix products ran in bfloat16, most of them (oneDNN's
    lines say)."""
    compute = observed["compute"]
    in_bf16 = sum(dtype == "bf16" for _, _, dtype in compute)
    isas = sorted({isa for _, isa, _ in compute if isa})
    # Most of them, not one: a step that leaves autocast still runs some of its backward in
    # bfloat16. None at all fails too: both frameworks run bfloat16 on a CPU through oneDNN.
    return in_bf16 > len(compute) / 2, {
        "onednn_compute_primitives": len(compute), "in_bfloat16": in_bf16,
        "onednn_isas": isas}


class Precision(Kind):
    key = "precision"
    option = "--precision"
    schema = {"description": (
        "bfloat16: each step runs in PyTorch's CPU autocast, or the model is built under "
        "Keras's mixed_bfloat16 policy; proven by the convolutions and matrix products "
        "oneDNN ran (in bfloat16), not applicable on a CPU without bfloat16 arithmetic."),
        "enum": ["bfloat16"]}

    def recipe(self, value, runtime):
        if value != "bfloat16":
            return [], [], []
        return [], ["tf.keras.mixed_precision.set_global_policy('mixed_bfloat16') before the "
                    "model is built" if runtime == "tensorflow" else
                    "each step inside `with torch.autocast('cpu', dtype=torch.bfloat16):`"], []

    def effect(self, knob):
        return Effect(check, started=True, observes=True)

    def prepare(self, knobs):
        for knob in knobs:
            if not bfloat16_arithmetic():
                raise NotApplicable(
                    f"precision {knob.value}: this CPU has no bfloat16 arithmetic "
                    f"({' or '.join(BFLOAT16_FLAGS)} missing from its flags)")
            if "tensorflow" in sys.modules and "torch" not in sys.modules:
                sys.modules["tensorflow"].keras.mixed_precision.set_global_policy(
                    f"mixed_{knob.value}")

    def check_built(self, knobs):
        for knob in knobs:
            if "torch" in sys.modules:
                continue
            tensorflow = sys.modules.get("tensorflow")
            policy = tensorflow and tensorflow.keras.mixed_precision.global_policy().name
            if policy != f"mixed_{knob.value}":
                raise NotApplicable(
                    f"precision {knob.value}: it acts through PyTorch's autocast around the "
                    "step, or Keras's policy set before the model is built, and this "
                    "benchmark's module does not import TensorFlow at its top (or imports "
                    "neither framework)")

    def wrap(self, step, knobs):
        if not knobs or "torch" not in sys.modules:
            return step
        torch = sys.modules["torch"]
        dtype = getattr(torch, knobs[0].value)

        def autocast_step():
            with torch.autocast("cpu", dtype=dtype):
                return step()

        return autocast_step
