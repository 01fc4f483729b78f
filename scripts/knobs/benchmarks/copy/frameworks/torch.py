"""PyTorch: on the CPU `Tensor.clone()` of a tensor sharing the host array's memory; on the
GPU the round trip from pageable host memory (see _torch_transfer)."""

# What the copy step needs to know without importing it (read from this file).
FRAMEWORK = {"runtime": "torch", "devices": ("cpu", "gpu"), "gpu_library": "torch", "graph": True}

import torch

from knobs.benchmarks.copy.frameworks import Identity, _torch_transfer


def build(example, device="cpu"):
    if device == "gpu":
        return _torch_transfer.build(example, pinned=False, non_blocking=False)
    return Identity(call=torch.Tensor.clone, prepare=torch.from_numpy,
                    to_numpy=lambda y: y.numpy(), version=torch.__version__,
                    evidence={"op": "torch.Tensor.clone", "threads": torch.get_num_threads()})


def describe(example, device="cpu"):
    if device == "gpu":
        return _torch_transfer.describe(example, pinned=False, non_blocking=False)
    from torch.profiler import ProfilerActivity, profile

    tensor = torch.from_numpy(example)
    with profile(activities=[ProfilerActivity.CPU]) as profiler:
        tensor.clone()
    return ("The CPU identity: one clone, no transfer. torch.profiler's operators:\n"
            + profiler.key_averages().table(sort_by="self_cpu_time_total"))
