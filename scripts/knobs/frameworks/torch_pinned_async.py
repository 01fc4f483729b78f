"""PyTorch's GPU round trip from pinned host memory with `non_blocking` copies, waited for
once at the end of the call."""

from knobs.frameworks import _torch_transfer


def build(example, device="gpu"):
    return _torch_transfer.build(example, pinned=True, non_blocking=True)


def describe(example, device="gpu"):
    return _torch_transfer.describe(example, pinned=True, non_blocking=True)
