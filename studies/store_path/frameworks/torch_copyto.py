"""PyTorch's own copy kernel without an allocation: `Tensor.copy_` into a tensor faulted in
beforehand (the copy limit's PyTorch twin: what `clone` costs beyond its memory)."""

# What the copy step needs to know without importing it (read from this file).
FRAMEWORK = {"runtime": "torch"}

import torch

from knobs.benchmarks.copy.frameworks import Identity


def build(example, device="cpu"):
    targets = {}

    def prepare(x):  # untimed: one target per shape, every page written once
        tensor = torch.from_numpy(x)
        targets[tensor.shape] = torch.ones_like(tensor)
        return tensor

    return Identity(call=lambda x: targets[x.shape].copy_(x), prepare=prepare,
                    to_numpy=lambda y: y.numpy(), version=torch.__version__,
                    evidence={"op": "torch.Tensor.copy_ into a prefaulted tensor",
                              "threads": torch.get_num_threads()},
                    fresh_output=False)
