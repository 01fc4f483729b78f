"""The stacked hourglass (Newell et al. 2016) in TensorFlow or PyTorch under one variant's
framework knobs: two cases, `forward` (forward pass and loss, no gradient) and `train`
(forward, backward, RMSprop update). Each step returns the loss as a Python number, so the
work has finished.

params: framework, variant, stacks, resolution, batch, features, joints, threads,
inter_op_threads. The network itself: network.py (sizes, FLOPs, the variants' knobs),
tf_model.py and torch_model.py, each run by its runner; its config section: section.py.
"""

from knobs import gpu
from knobs.benchmarks.hourglass import network
from knobs.benchmarks import Unavailable
from knobs.environment import KnobNotApplied

SIZE = ("stacks", "resolution", "batch", "features", "joints")


class Benchmark:
    cases = ["forward", "train"]

    def __init__(self, params, device, seed):
        self.framework, self.variant = params["framework"], params["variant"]
        self.size = {key: params[key] for key in SIZE}
        errors = network.check_size(**self.size)
        if errors:
            raise ValueError("; ".join(errors))
        if device == "gpu":
            gpu.require(self.framework)
        threads = (params["threads"], params["inter_op_threads"])
        try:
            if self.framework == "tensorflow":
                from knobs.benchmarks.hourglass import tf_runner

                self.runner = tf_runner.Runner(self.size, network.parse_tf_variant(self.variant),
                                               *threads, device, seed=seed)
            else:
                from knobs.benchmarks.hourglass import torch_runner

                self.runner = torch_runner.Runner(self.size, self.variant, *threads, device,
                                                  seed=seed)
        except Exception as error:
            raise self._unavailable(error)

    def _unavailable(self, error):
        """torch.compile may not work on a machine: say why, openly; anything else fails."""
        if "compile" not in self.variant.split("-") or isinstance(error, KnobNotApplied):
            return error
        return Unavailable(f"torch.compile: {type(error).__name__}: {error}")

    def setup(self, case):
        step = self.runner.forward_step if case == "forward" else self.runner.train_step

        def checked():
            try:
                return step()
            except Exception as error:
                raise self._unavailable(error)

        return checked if "compile" in self.variant.split("-") else step

    def info(self, case):
        flops = network.forward_flops if case == "forward" else network.train_flops
        return {"flops": flops(**self.size)}

    def evidence(self):
        evidence = {**self.runner.evidence(), "params": self._parameters()}
        if self.framework == "torch":  # the kernels PyTorch picked for this CPU
            import torch

            evidence["cpu_capability"] = torch.backends.cpu.get_cpu_capability()
        return evidence

    def _parameters(self):
        if self.framework == "tensorflow":
            from knobs.benchmarks.hourglass import tf_model

            return tf_model.parameter_count(self.runner.model)
        from knobs.benchmarks.hourglass import torch_model

        return torch_model.parameter_count(self.runner.model)

    def trace(self, path):
        import os

        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        return self.runner.trace_train_step(path)

    def versions(self):
        if self.framework == "tensorflow":
            import google.protobuf
            import tensorflow
            from google.protobuf.internal import api_implementation

            return {"tensorflow": tensorflow.__version__, "protobuf": google.protobuf.__version__,
                    "protobuf_implementation": api_implementation.Type()}
        import torch

        return {"torch": torch.__version__}
