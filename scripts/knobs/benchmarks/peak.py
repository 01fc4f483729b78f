"""The machine's matrix-multiply peak, measured in the same run as the benchmarks compared with
it: square matmuls, one case per library and precision. On the CPU float32 in numpy and torch
(under the same threads); on the GPU torch in float32, TF32, bfloat16 and float16. The peak of
a precision is its fastest sample.

params: size (matrix side; default 2048, on a GPU 8192), threads.
"""

import numpy as np

from knobs import gpu

# case -> (library, precision, torch dtype, TF32 allowed)
CPU_CASES = {"numpy": ("numpy", "float32", None, False),
             "torch": ("torch", "float32", "float32", False)}
GPU_CASES = {"float32": ("torch", "float32", "float32", False),
             "tf32": ("torch", "tf32", "float32", True),
             "bfloat16": ("torch", "bfloat16", "bfloat16", False),
             "float16": ("torch", "float16", "float16", False)}


class Benchmark:
    def __init__(self, params, device, seed):
        import torch

        self.torch, self.device = torch, device
        torch.set_num_threads(params["threads"])
        if device == "gpu":
            gpu.require("torch")
        self.n = params.get("size") or (8192 if device == "gpu" else 2048)
        rng = np.random.default_rng(seed)
        self.a, self.b = (rng.random((self.n, self.n), dtype=np.float32) for _ in range(2))
        self.table = GPU_CASES if device == "gpu" else CPU_CASES

    def cases(self):
        return list(self.table)

    def setup(self, case):
        library, _, dtype, tf32 = self.table[case]
        torch = self.torch
        if library == "numpy":
            a, b = self.a, self.b
            return lambda: np.matmul(a, b)
        torch.backends.cuda.matmul.allow_tf32 = tf32
        a, b = (torch.from_numpy(m).to("cuda" if self.device == "gpu" else "cpu")
                .to(getattr(torch, dtype)) for m in (self.a, self.b))
        if self.device == "gpu":
            def step():
                torch.mm(a, b)
                torch.cuda.synchronize()
            return step
        return lambda: torch.mm(a, b)

    def info(self, case):
        library, precision, _, _ = self.table[case]
        return {"library": library, "precision": precision, "n": self.n,
                "flops": 2 * self.n ** 3}

    def evidence(self):
        torch = self.torch
        torch.backends.cuda.matmul.allow_tf32 = False
        return {"threads": torch.get_num_threads(),
                "cpu_capability": torch.backends.cpu.get_cpu_capability()}

    def versions(self):
        return {"torch": self.torch.__version__}


def table_columns(table, settings, tables):
    """Each matmul's GFLOP/s."""
    table["gflops"] = table["flops"] / table["seconds"] / 1e9
    return table
