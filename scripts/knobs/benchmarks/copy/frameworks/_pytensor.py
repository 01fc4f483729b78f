"""PyTensor's identity function under a chosen linker (shared by pytensor and pytensor_cvm)."""

import io

import pytensor
import pytensor.tensor as pt
from pytensor.compile.mode import Mode

from knobs.benchmarks.copy.frameworks import Identity


def compile_identity(linker, profile=False):
    x = pt.tensor4("x", dtype="float32")
    mode = None if linker is None else Mode(linker=linker, optimizer="fast_run")
    return pytensor.function([x], x, mode=mode, profile=profile or None)


def debugprint(function):
    text = io.StringIO()
    pytensor.printing.debugprint(function, file=text)
    return text.getvalue()


def build(linker):
    function = compile_identity(linker)
    return Identity(call=function, prepare=lambda x: x, to_numpy=lambda y: y,
                    version=pytensor.__version__,
                    evidence={"graph": debugprint(function),
                              "linker": type(function.maker.linker).__name__,
                              "vm": type(function.vm).__name__})


def describe(linker, example, calls=20):
    function = compile_identity(linker, profile=True)
    for _ in range(calls):
        function(example)
    summary = io.StringIO()
    function.profile.summary(file=summary)
    return (f"linker: {type(function.maker.linker).__name__}\n\ndebugprint\n----------\n"
            + debugprint(function) + "\n" + summary.getvalue())
