"""PyTensor through its JAX backend (`mode="JAX"`), on the CPU or on the GPU: the numpy input
is put on the device when the jitted function is called, copied there (DeepCopyOp), and the
result is brought back to the host inside the timed call."""

# What the copy step needs to know without importing it (read from this file).
FRAMEWORK = {"runtime": "pytensor", "imports": ("pytensor", "jax"), "devices": ("cpu", "gpu"),
             "gpu_library": "jax", "graph": True}

import io

import jax
import numpy as np
import pytensor
import pytensor.tensor as pt

from knobs import gpu
from knobs.environment import KnobNotApplied
from knobs.benchmarks.copy.frameworks import Identity


def _compile(device):
    if device == "gpu":
        gpu.require("jax")
    # JAX would pick a GPU whenever it sees one: the device is a knob, so it is set here.
    jax.config.update("jax_default_device", jax.devices(device)[0])
    x = pt.tensor4("x", dtype="float32")
    return pytensor.function([x], x, mode="JAX")


def _evidence(function, example, device):
    output = function(example)
    placed = sorted(str(d) for d in output.devices())
    if not all(d.platform == device for d in output.devices()):
        raise KnobNotApplied(f"asked for device {device} but JAX put the output on {placed}")
    text = io.StringIO()
    pytensor.printing.debugprint(function, file=text)
    return {"graph": text.getvalue(), "linker": type(function.maker.linker).__name__,
            "output_devices": placed, "jax": jax.__version__,
            "hlo": function.vm.jit_fn.lower(example).compile().as_text()}


def build(example, device="cpu"):
    function = _compile(device)
    return Identity(call=lambda x: np.asarray(function(x)), prepare=lambda x: x,
                    to_numpy=lambda y: y, version=pytensor.__version__,
                    evidence=_evidence(function, example, device))


def describe(example, device="cpu"):
    evidence = _evidence(_compile(device), example, device)
    return (f"linker: {evidence['linker']}, JAX {evidence['jax']}\n"
            f"input: a numpy array in host memory; output on {evidence['output_devices']} "
            "(brought back to the host inside the timed call)\n\n"
            f"debugprint\n----------\n{evidence['graph']}\n"
            f"XLA's compiled module (HLO)\n---------------------------\n{evidence['hlo']}")
