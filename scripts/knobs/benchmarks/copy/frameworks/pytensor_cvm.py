"""PyTensor with its C/VM linker: the C DeepCopyOp allocates through numpy, as Theano did."""

# What the copy step needs to know without importing it (read from this file).
FRAMEWORK = {"runtime": "pytensor", "graph": True}

from knobs.benchmarks.copy.frameworks import _pytensor


def build(example, device="cpu"):
    return _pytensor.build(linker="cvm")


def describe(example, device="cpu"):
    return _pytensor.describe("cvm", example)
