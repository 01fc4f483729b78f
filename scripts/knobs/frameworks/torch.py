"""PyTorch: `Tensor.clone()` of a tensor sharing the host array's memory."""

import torch

from knobs.frameworks import Identity


def build(example):
    return Identity(call=torch.Tensor.clone, prepare=torch.from_numpy,
                    to_numpy=lambda y: y.numpy(), version=torch.__version__,
                    evidence={"op": "torch.Tensor.clone", "threads": torch.get_num_threads()})
