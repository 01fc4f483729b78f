"""The hourglass step in PyTorch under a variant's knobs (see `TORCH_KNOBS`): `eager` (the
reference), `channels_last`, `cudnn_benchmark`, `amp_bf16` / `amp_fp16` (autocast; fp16 with
a gradient scaler), `compile` (torch.compile), and the evidence that each applied."""

import contextlib

import numpy as np
import torch

from knobs.environment import KnobNotApplied
from knobs.benchmarks.hourglass import torch_model
from knobs.benchmarks.hourglass.network import TORCH_GPU_ONLY, parse_torch_variant

AMP_DTYPES = {"amp_bf16": torch.bfloat16, "amp_fp16": torch.float16}


class Runner:
    def __init__(self, size, variant, threads, inter_op_threads, device="cpu", seed=0):
        self.knobs = parse_torch_variant(variant)
        gpu_only = [k for k in self.knobs if k in TORCH_GPU_ONLY]
        if gpu_only and device != "gpu":
            raise KnobNotApplied(f"{', '.join(gpu_only)} acts on a GPU only (device {device})")
        torch.set_num_threads(threads)
        try:
            torch.set_num_interop_threads(inter_op_threads)
        except RuntimeError:  # already started: recorded below as what it really is
            pass
        torch.manual_seed(seed)
        torch.backends.cudnn.benchmark = "cudnn_benchmark" in self.knobs
        self.variant, self.device = variant, torch.device(device if device == "cpu" else "cuda")
        rng = np.random.default_rng(seed)
        n, r, j = size["batch"], size["resolution"], size["joints"]
        self.x = torch.from_numpy(rng.random((n, 3, r, r), dtype=np.float32)).to(self.device)
        self.y = torch.from_numpy(rng.random((n, j, r // 4, r // 4), dtype=np.float32)).to(self.device)
        self.model = torch_model.StackedHourglass(size["stacks"], size["features"], j).to(self.device)
        if "channels_last" in self.knobs:
            self.model = self.model.to(memory_format=torch.channels_last)
            self.x = self.x.contiguous(memory_format=torch.channels_last)
        self.optimizer = torch_model.optimizer(self.model)
        self.amp = next((AMP_DTYPES[k] for k in self.knobs if k in AMP_DTYPES), None)
        # fp16 gradients underflow without loss scaling; bf16 has float32's range.
        self.scaler = torch.amp.GradScaler("cuda") if self.amp == torch.float16 else None
        self.net = torch.compile(self.model) if "compile" in self.knobs else self.model

    def _autocast(self):
        if self.amp is None:
            return contextlib.nullcontext()
        return torch.autocast(self.device.type, dtype=self.amp)

    def _sync(self):
        if self.device.type == "cuda":
            torch.cuda.synchronize()

    def forward_step(self):
        with torch.no_grad(), self._autocast():
            loss = torch_model.loss_fn(self.net(self.x), self.y)
        return float(loss.item())  # .item() waits for the step

    def train_step(self):
        self.optimizer.zero_grad(set_to_none=True)
        with self._autocast():
            loss = torch_model.loss_fn(self.net(self.x), self.y)
        if self.scaler is None:
            loss.backward()
            self.optimizer.step()
        else:
            self.scaler.scale(loss).backward()
            self.scaler.step(self.optimizer)
            self.scaler.update()
        return float(loss.item())

    def evidence(self):
        first_conv = self.model.stem[0][0].weight
        with torch.no_grad(), self._autocast():
            output_dtype = self.net(self.x).dtype
        evidence = {
            "knobs": list(self.knobs),
            "threads": {"intra_op": torch.get_num_threads(),
                        "inter_op": torch.get_num_interop_threads()},
            "input_channels_last": self.x.is_contiguous(memory_format=torch.channels_last),
            "weights_channels_last": first_conv.is_contiguous(memory_format=torch.channels_last),
            "output_dtype": str(output_dtype).removeprefix("torch."),
            "mkldnn": torch.backends.mkldnn.is_available(),
            "cudnn_benchmark": torch.backends.cudnn.benchmark,
        }
        if self.device.type == "cuda":
            evidence.update(gpu=torch.cuda.get_device_name(), cuda=torch.version.cuda,
                            cudnn=torch.backends.cudnn.version(),
                            cudnn_enabled=torch.backends.cudnn.enabled)
        if self.scaler is not None:
            evidence["grad_scale"] = float(self.scaler.get_scale())
        if "compile" in self.knobs:
            from torch._dynamo.utils import counters

            evidence["compiled_graphs"] = int(counters["stats"]["unique_graphs"])
            evidence["graph_breaks"] = int(sum(counters["graph_break"].values()))
        problems = []
        if ("channels_last" in self.knobs) != evidence["input_channels_last"]:
            problems.append(f"channels_last {'channels_last' in self.knobs} but the input's "
                            f"is {evidence['input_channels_last']}")
        expected = next((AMP_DTYPES[k] for k in self.knobs if k in AMP_DTYPES), torch.float32)
        if output_dtype != expected:
            problems.append(f"expected {expected} outputs, got {output_dtype}")
        if "cudnn_benchmark" in self.knobs and not (evidence.get("cudnn_enabled")
                                                    and evidence["cudnn_benchmark"]):
            problems.append("cudnn.benchmark is not on with cuDNN enabled")
        if "compile" in self.knobs and evidence["compiled_graphs"] == 0:
            problems.append("torch.compile compiled no graph")
        if problems:
            raise KnobNotApplied("; ".join(problems))
        return evidence

    def trace_train_step(self, path):
        from torch.profiler import ProfilerActivity, profile

        activities = [ProfilerActivity.CPU]
        if self.device.type == "cuda":
            activities.append(ProfilerActivity.CUDA)
        with profile(activities=activities) as profiler:
            self.train_step()
            self._sync()
        profiler.export_chrome_trace(path)
        if self.device.type != "cuda":
            return {item.key: item.self_cpu_time_total / 1e6 for item in profiler.key_averages()}
        # On the GPU what counts is each op's kernels; the kernels' own rows would count them
        # twice, so only the ops (CPU rows) are kept, each with its kernels' device time.
        cpu = torch.autograd.DeviceType.CPU
        return {item.key: item.self_device_time_total / 1e6
                for item in profiler.key_averages() if item.device_type == cpu}
