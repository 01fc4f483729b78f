"""PyTorch's identity through the GPU: host tensor -> device -> a fresh host tensor, the
GpuFromHost / HostFromGpu pair the seed's asker expected from Theano on a GPU.

`pinned` keeps both host buffers in page-locked memory (the input pinned once, outside the
clock; each output from PyTorch's caching pinned allocator); `non_blocking` queues both
copies and waits once, before the clock stops. Both knobs are proven from what the CUDA
profiler saw the copies do.
"""

import torch

from knobs import gpu
from knobs.environment import KnobNotApplied
from knobs.benchmarks.copy.frameworks import Identity

CUDA = torch.device("cuda")


def round_trip(pinned, non_blocking):
    def call(x):
        on_device = x.to(CUDA, non_blocking=non_blocking)
        back = torch.empty(x.shape, dtype=x.dtype, pin_memory=pinned)
        back.copy_(on_device, non_blocking=non_blocking)
        if non_blocking:
            torch.cuda.synchronize()  # the copies were only queued
        return back

    return call


def prepare(pinned):
    return lambda x: torch.from_numpy(x).pin_memory() if pinned else torch.from_numpy(x)


def profiled(call, native):
    """The CUDA activity of one call, after one unprofiled call (CUDA starts, and the profiler
    can miss the first GPU events of a process): its copies, with their host memory kind, and
    its kernels."""
    from torch.profiler import ProfilerActivity, profile

    call(native)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as profiler:
        call(native)
        torch.cuda.synchronize()
    return [event.name for event in profiler.events()
            if event.device_type == torch.autograd.DeviceType.CUDA]


def in_flight_after_queueing(size=64 << 20):
    """Whether queued non-blocking copies of `size` bytes are still running when control comes
    back to Python: what `non_blocking` is for."""
    host = torch.empty(size, dtype=torch.uint8).pin_memory()
    torch.cuda.synchronize()
    on_device = host.to(CUDA, non_blocking=True)
    host.copy_(on_device, non_blocking=True)
    running = not torch.cuda.current_stream().query()
    torch.cuda.synchronize()
    return running


def prove(pinned, non_blocking, copies, in_flight):
    kind = "Pinned" if pinned else "Pageable"
    htod = [name for name in copies if "HtoD" in name]
    dtoh = [name for name in copies if "DtoH" in name]
    problems = []
    if not htod or not dtoh:
        problems.append(f"expected a host-to-device and a device-to-host copy, saw {copies}")
    wrong = [name for name in htod + dtoh if kind not in name]
    if wrong:
        problems.append(f"asked for {kind.lower()} host memory but the copies were {wrong}")
    if non_blocking and not in_flight:
        problems.append("non_blocking copies had finished before control came back")
    if problems:
        raise KnobNotApplied("; ".join(problems))


def build(example, pinned, non_blocking):
    gpu.require("torch")
    call, to_host = round_trip(pinned, non_blocking), prepare(pinned)
    native = to_host(example)
    activity = profiled(call, native)
    copies = [name for name in activity if name.startswith("Memcpy")]
    in_flight = in_flight_after_queueing() if non_blocking else None
    prove(pinned, non_blocking, copies, in_flight)
    return Identity(
        call=call, prepare=to_host, to_numpy=lambda y: y.numpy(), version=torch.__version__,
        evidence={"op": "Tensor.to(cuda) then copy_ into a host tensor",
                  "pinned": pinned, "non_blocking": non_blocking,
                  "input_pinned": bool(native.is_pinned()), "cuda_copies": copies,
                  "cuda_kernels": [name for name in activity if name not in copies],
                  "copies_in_flight_after_queueing": in_flight,
                  "gpu": torch.cuda.get_device_name(), "cuda": torch.version.cuda})


def describe(example, pinned, non_blocking):
    identity = build(example, pinned, non_blocking)
    return ("The GPU round trip: host tensor -> device -> host tensor. CUDA activity of one "
            "call, from torch.profiler:\n"
            + "\n".join(f"  {name}" for name in identity.evidence["cuda_copies"]
                        + identity.evidence["cuda_kernels"])
            + f"\n\nevidence: {identity.evidence}\n")
