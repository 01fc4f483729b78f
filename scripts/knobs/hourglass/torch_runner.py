"""The hourglass step in PyTorch: `eager` (the reference), `channels_last`, `compile`
(torch.compile), with the evidence that each applied."""

import numpy as np
import torch

from knobs.environment import KnobNotApplied
from knobs.hourglass import torch_model

VARIANTS = ("eager", "channels_last", "compile")


class Runner:
    def __init__(self, size, variant, threads, inter_op_threads, device="cpu", seed=0):
        if variant not in VARIANTS:
            raise ValueError(f"unknown torch variant {variant!r}; known: {VARIANTS}")
        torch.set_num_threads(threads)
        try:
            torch.set_num_interop_threads(inter_op_threads)
        except RuntimeError:  # already started: recorded below as what it really is
            pass
        torch.manual_seed(seed)
        self.variant, self.device = variant, torch.device(device if device == "cpu" else "cuda")
        rng = np.random.default_rng(seed)
        n, r, j = size["batch"], size["resolution"], size["joints"]
        self.x = torch.from_numpy(rng.random((n, 3, r, r), dtype=np.float32)).to(self.device)
        self.y = torch.from_numpy(rng.random((n, j, r // 4, r // 4), dtype=np.float32)).to(self.device)
        self.model = torch_model.StackedHourglass(size["stacks"], size["features"], j).to(self.device)
        if variant == "channels_last":
            self.model = self.model.to(memory_format=torch.channels_last)
            self.x = self.x.contiguous(memory_format=torch.channels_last)
        self.optimizer = torch_model.optimizer(self.model)
        self.net = torch.compile(self.model) if variant == "compile" else self.model

    def _sync(self):
        if self.device.type == "cuda":
            torch.cuda.synchronize()

    def forward_step(self):
        with torch.no_grad():
            loss = torch_model.loss_fn(self.net(self.x), self.y)
        return float(loss.item())  # .item() waits for the step

    def train_step(self):
        self.optimizer.zero_grad(set_to_none=True)
        loss = torch_model.loss_fn(self.net(self.x), self.y)
        loss.backward()
        self.optimizer.step()
        return float(loss.item())

    def evidence(self):
        first_conv = self.model.stem[0][0].weight
        evidence = {
            "threads": {"intra_op": torch.get_num_threads(),
                        "inter_op": torch.get_num_interop_threads()},
            "input_channels_last": self.x.is_contiguous(memory_format=torch.channels_last),
            "weights_channels_last": first_conv.is_contiguous(memory_format=torch.channels_last),
            "mkldnn": torch.backends.mkldnn.is_available(),
        }
        if self.variant == "compile":
            from torch._dynamo.utils import counters

            evidence["compiled_graphs"] = int(counters["stats"]["unique_graphs"])
            evidence["graph_breaks"] = int(sum(counters["graph_break"].values()))
        problems = []
        if (self.variant == "channels_last") != evidence["input_channels_last"]:
            problems.append(f"variant {self.variant} but input channels_last is "
                            f"{evidence['input_channels_last']}")
        if self.variant == "compile" and evidence["compiled_graphs"] == 0:
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
        return {item.key: item.self_cpu_time_total / 1e6 for item in profiler.key_averages()}
