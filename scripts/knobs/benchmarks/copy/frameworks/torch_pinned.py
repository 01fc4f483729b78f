"""PyTorch's GPU round trip from and to pinned (page-locked) host memory."""

# What the copy step needs to know without importing it (read from this file).
FRAMEWORK = {"runtime": "torch", "devices": ("gpu",), "gpu_library": "torch", "graph": True}

from knobs.benchmarks.copy.frameworks import _torch_transfer


def build(example, device="gpu"):
    return _torch_transfer.build(example, pinned=True, non_blocking=False)


def describe(example, device="gpu"):
    return _torch_transfer.describe(example, pinned=True, non_blocking=False)
