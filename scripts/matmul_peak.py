#!/usr/bin/env python3
"""The machine's matrix-multiply peak, measured in the same run as the benchmarks it is
compared with: the best GFLOP/s of square matmuls, on the CPU in float32 (numpy and torch,
under the same threads), on the GPU in float32, TF32, bfloat16 and float16 (torch).
Run through with_environment.py like every benchmark."""

import argparse
import datetime
import time

from knobs import environment, gpu, machine, results


def best_gflops(matmul, a, b, sync, repeats):
    n = a.shape[0]
    for _ in range(3):
        matmul(a, b)
    sync()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        matmul(a, b)
        sync()
        times.append(time.perf_counter() - start)
    return {"gflops": 2 * n**3 / min(times) / 1e9, "seconds": times, "n": n}


# On a GPU: name -> (torch dtype, TF32 allowed). float32 is strict IEEE float32.
GPU_PRECISIONS = {"float32": ("float32", False), "tf32": ("float32", True),
                  "bfloat16": ("bfloat16", False), "float16": ("float16", False)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--environment", required=True)
    parser.add_argument("--device", default="cpu", choices=["cpu", "gpu"])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--size", type=int, help="matrix side (default 2048, on a GPU 8192)")
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    environment.set_threads(args.threads)
    knobs = environment.prove(args.environment)
    import numpy as np
    import torch

    torch.set_num_threads(args.threads)
    if args.device == "gpu":
        gpu.require("torch")
    size = args.size or (8192 if args.device == "gpu" else 2048)
    rng = np.random.default_rng(0)
    a, b = (rng.random((size, size), dtype=np.float32) for _ in range(2))
    measured, peaks = {}, {}
    if args.device == "cpu":
        measured["numpy"] = best_gflops(np.matmul, a, b, lambda: None, args.repeats)
        ta, tb = torch.from_numpy(a), torch.from_numpy(b)
        measured["torch"] = best_gflops(torch.mm, ta, tb, lambda: None, args.repeats)
        peaks["float32"] = max(m["gflops"] for m in measured.values())
    else:
        for precision, (dtype, tf32) in GPU_PRECISIONS.items():
            torch.backends.cuda.matmul.allow_tf32 = tf32
            ta, tb = (torch.from_numpy(m).cuda().to(getattr(torch, dtype)) for m in (a, b))
            measured[f"torch_{precision}"] = best_gflops(torch.mm, ta, tb,
                                                         torch.cuda.synchronize, args.repeats)
            peaks[precision] = measured[f"torch_{precision}"]["gflops"]
        torch.backends.cuda.matmul.allow_tf32 = False
    results.write_json(args.out, {
        "experiment": "peak", "device": args.device, "environment": args.environment,
        "threads": args.threads, "measured": measured,
        "peak_gflops": peaks["float32"], "peaks": peaks,
        "knobs": knobs, "machine": machine.describe(),
        "versions": {"numpy": np.__version__, "torch": torch.__version__},
        "finished": datetime.datetime.now(datetime.timezone.utc).isoformat(),
    })


if __name__ == "__main__":
    main()
