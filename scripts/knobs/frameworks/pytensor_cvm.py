"""PyTensor with its C/VM linker: the C DeepCopyOp allocates through numpy, as Theano did."""

from knobs.frameworks import _pytensor


def build(example, device="cpu"):
    return _pytensor.build(linker="cvm")


def describe(example, device="cpu"):
    return _pytensor.describe("cvm", example)
