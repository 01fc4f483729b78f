"""Legacy Theano 1.0.5, the seed's own framework: `theano.function([x], x)`.

Runs in its own environment (Python 3.11, numpy 1.23.5). Flags are set before the import:
no BLAS to link, and a compile directory of this process's own so runs never share a lock.
"""

# What the copy step needs to know without importing it (read from this file).
FRAMEWORK = {"runtime": "theano", "graph": True}

import os
import tempfile

os.environ["THEANO_FLAGS"] = ",".join(
    filter(None, [os.environ.get("THEANO_FLAGS"), "blas.ldflags=",
                  "compiledir=" + tempfile.mkdtemp(prefix="theano-")]))

import io  # noqa: E402

import theano  # noqa: E402
import theano.tensor as T  # noqa: E402

from knobs.benchmarks.copy.frameworks import Identity  # noqa: E402


def _compile(profile=False):
    x = T.ftensor4("x")
    return theano.function([x], x, profile=profile or None)


def _debugprint(function):
    text = io.StringIO()
    theano.printing.debugprint(function, file=text)
    return text.getvalue()


def build(example, device="cpu"):
    function = _compile()
    return Identity(call=function, prepare=lambda x: x, to_numpy=lambda y: y,
                    version=theano.__version__,
                    evidence={"graph": _debugprint(function),
                              "linker": type(function.fn).__name__,
                              "flags": os.environ["THEANO_FLAGS"]})


def describe(example, device="cpu", calls=20):
    """debugprint and the profiler's summary over `calls` calls."""
    function = _compile(profile=True)
    for _ in range(calls):
        function(example)
    summary = io.StringIO()
    function.profile.summary(file=summary)
    return "debugprint\n----------\n" + _debugprint(function) + "\n" + summary.getvalue()
