#!/usr/bin/env python3
"""Time a benchmark's step in this shell's own environment, outside the workflow: to check a
`make search` recipe by hand (its line, with this in place of `python train.py`).

    LD_PRELOAD=... OMP_NUM_THREADS=1 python scripts/time_step.py \\
        benchmarks/my_model.py --params '{"width": 32, "batch": 16}' [--precision bfloat16]

from the repository's folder, `python` the one that runs your model (its framework installed).

Prints the median seconds per step over --samples steps after a warm-up, with the quartiles.
Nothing is proven here: the workflow is where every knob is proven.
"""

import argparse
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from knobs import environment, finder, framework_knobs  # noqa: E402
from knobs.benchmarks import cases_of  # noqa: E402


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("module", help="a benchmark's file, or its name")
    parser.add_argument("--params", type=json.loads, default={})
    parser.add_argument("--precision", choices=["bfloat16"])
    parser.add_argument("--case", help="which of its cases (default: its first)")
    parser.add_argument("--samples", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=3)
    args = parser.parse_args(argv)
    module = finder.load(args.module)
    knobs = [environment.Knob("precision", args.precision, "precision")] if args.precision else []
    framework_knobs.prepare(knobs)
    benchmark = module.Benchmark(args.params, "cpu", 0)
    case = args.case or cases_of(benchmark)[0]
    step = framework_knobs.wrap(benchmark.setup(case), knobs)
    for _ in range(args.warmup):
        step()
    seconds = []
    for _ in range(args.samples):
        start = time.perf_counter()
        step()
        seconds.append(time.perf_counter() - start)
    low, median, high = statistics.quantiles(seconds, n=4)
    print(f"{case}: median {median:.6f} s per step (quartiles {low:.6f}, {high:.6f}; "
          f"{args.samples} steps)")


if __name__ == "__main__":
    main()
