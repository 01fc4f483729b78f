#!/usr/bin/env python3
"""The machine's fp32 matrix-multiply peak, measured in the same run as the benchmarks it
is compared with: the best GFLOP/s of square matmuls in numpy and torch, under the same
threads. Run through with_environment.py like every benchmark."""

import argparse
import datetime
import time

from knobs import environment, machine, results


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


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--environment", required=True)
    parser.add_argument("--device", default="cpu", choices=["cpu", "gpu"])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--size", type=int, default=2048)
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    environment.set_threads(args.threads)
    knobs = environment.prove(args.environment)
    import numpy as np
    import torch

    torch.set_num_threads(args.threads)
    rng = np.random.default_rng(0)
    a, b = (rng.random((args.size, args.size), dtype=np.float32) for _ in range(2))
    measured = {}
    if args.device == "cpu":
        measured["numpy"] = best_gflops(np.matmul, a, b, lambda: None, args.repeats)
        ta, tb = torch.from_numpy(a), torch.from_numpy(b)
        measured["torch"] = best_gflops(torch.mm, ta, tb, lambda: None, args.repeats)
    else:
        if not torch.cuda.is_available():
            raise SystemExit("matmul_peak: device gpu asked for, but torch sees no GPU here")
        ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
        measured["torch"] = best_gflops(torch.mm, ta, tb, torch.cuda.synchronize, args.repeats)
    results.write_json(args.out, {
        "experiment": "peak", "device": args.device, "environment": args.environment,
        "threads": args.threads, "measured": measured,
        "peak_gflops": max(m["gflops"] for m in measured.values()),
        "knobs": knobs, "machine": machine.describe(),
        "versions": {"numpy": np.__version__, "torch": torch.__version__},
        "finished": datetime.datetime.now(datetime.timezone.utc).isoformat(),
    })


if __name__ == "__main__":
    main()
