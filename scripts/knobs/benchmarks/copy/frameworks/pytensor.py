"""PyTensor, Theano's maintained successor, with its default linker (Numba in PyTensor 3):
Numba's runtime allocates the output without asking for huge pages."""

# What the copy step needs to know without importing it (read from this file).
FRAMEWORK = {"runtime": "pytensor", "graph": True}

from knobs.benchmarks.copy.frameworks import _pytensor


def build(example, device="cpu"):
    return _pytensor.build(linker=None)


def describe(example, device="cpu"):
    return _pytensor.describe(None, example)
