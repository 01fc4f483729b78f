"""The GPU copy limit: pinned host buffer -> a kept device buffer -> a kept pinned host buffer,
two cudaMemcpy-class copies with nothing allocated per call (the GPU side of copyto)."""

# What the copy step needs to know without importing it (read from this file).
FRAMEWORK = {"runtime": "torch", "devices": ("gpu",), "gpu_library": "torch"}

import torch

from knobs import gpu
from knobs.benchmarks.copy.frameworks import Identity, _torch_transfer


def build(example, device="gpu"):
    gpu.require("torch")
    kept = {}

    def prepare(x):  # untimed: pinned input, device and pinned output buffers for this shape
        host = torch.from_numpy(x).pin_memory()
        kept[x.shape] = (torch.empty_like(host, device="cuda"),
                         torch.empty_like(host).pin_memory())
        return host

    def call(host):
        on_device, back = kept[tuple(host.shape)]
        on_device.copy_(host)  # blocking: each copy_ returns once its copy is done
        back.copy_(on_device)

    copies = [name for name in _torch_transfer.profiled(call, prepare(example))
              if name.startswith("Memcpy")]
    _torch_transfer.prove(pinned=True, non_blocking=False, copies=copies, in_flight=None)
    return Identity(call=call, prepare=prepare,
                    to_numpy=lambda host: kept[tuple(host.shape)][1].numpy(),
                    version=torch.__version__,
                    evidence={"op": "copy_ pinned host -> kept device buffer -> kept pinned host",
                              "cuda_copies": copies, "gpu": torch.cuda.get_device_name(),
                              "cuda": torch.version.cuda},
                    fresh_output=False)
