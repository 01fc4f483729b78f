#!/usr/bin/env python3
"""Which of a framework's allocations decide where glibc puts each copy's output. The copy
step of each framework runs in one process with glibc's allocation calls recorded (a recorder
preloaded with LD_PRELOAD: studies/output_memory/alloc_shim.c, built here with the C compiler), its cases in
the given order with the config's warm-up and calls, as the workflow's runner runs them. Per
framework and batch: which calls' outputs took a block of glibc's heap that no earlier output
of the batch had (fresh heap, faulted in page by page, or memory an earlier batch left), how
many blocks the outputs took, what the process asked glibc for between one output's free and
the next output's request, whether that landed right after the freed output (where it can
keep the freed block from growing to fit the next request), and whether the next output then
went elsewhere.

    allocations.py --out results/paper/allocations [--frameworks torch aligned ...]
                   [--batches 2 4 8] [--processes 5] [--config config/config.yaml]

Writes allocations.csv (a row per framework, process and batch) and each process's record
beside it (<framework>.<process>.calls.gz: op, address, size, alignment per call; '#' marks
where a batch begins). Processes differ: where glibc finds room depends on what the process
allocated before (its libraries, the earlier batches), so each framework runs several.
"""

import argparse
import collections
import ctypes
import gzip
import math
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd
import yaml

HERE = Path(__file__).resolve().parent
SCRIPTS = HERE.parents[1] / "scripts"  # the knobs package
SHIM = HERE / "alloc_shim.c"
REQUESTS = "mcra"  # malloc, calloc, realloc, the aligned ones: what asks glibc for memory
NEAR = 4096  # bytes past a freed output's end within which a request lands "right after" it


def build_shim(folder):
    """The recorder, compiled into `folder`; an error naming the fix where there is no compiler."""
    library = Path(folder) / "alloc_shim.so"
    for compiler in (os.environ.get("CC"), "cc", "gcc"):
        if compiler and shutil.which(compiler):
            subprocess.run([compiler, "-O2", "-shared", "-fPIC", "-o", str(library), str(SHIM),
                            "-ldl"], check=True)
            return library
    sys.exit("allocations.py: no C compiler (cc or gcc; set CC): `make setup` installs one")


def record(framework, batches, image, warmup, calls, out):
    """In this process (the recorder preloaded): the copy step's cases, as the runner runs them."""
    sys.path.insert(0, str(SCRIPTS))
    from knobs.benchmarks.copy import Benchmark
    from knobs.runner import measure

    shim = ctypes.CDLL(None)  # the preloaded recorder's functions are the process's own
    if not hasattr(shim, "alloc_shim_on"):
        sys.exit("allocations.py: the recorder is not preloaded (run without --child)")
    shim.alloc_shim_off.argtypes, shim.alloc_shim_off.restype = [ctypes.c_char_p], ctypes.c_size_t
    shim.alloc_shim_mark.argtypes = [ctypes.c_size_t]
    benchmark = Benchmark({"framework": framework, "batches": batches, "image": image,
                           "input": "random"}, "cpu", 0)
    shim.alloc_shim_on()
    for case in benchmark.cases():  # as knobs/runner.py's run() goes through them
        shim.alloc_shim_mark(int(case))
        step = benchmark.setup(case)
        measure(step, warmup, calls, getattr(benchmark, "warm", None))
        del step
        benchmark.info(case)  # its calls after the timed ones, and the case's call released
    made = shim.alloc_shim_off(str(out).encode())
    kept = sum(1 for _ in open(out))
    if made != kept:
        sys.exit(f"allocations.py: {made} calls made, {kept} recorded: raise the recorder's size")


def read_calls(path):
    """{batch: [(op, address, size, alignment), ...]} from a record (gzip'd or not)."""
    found, batch = {}, None
    opener = gzip.open if str(path).endswith(".gz") else open
    for line in opener(path, "rt"):
        op, address, size, alignment = line.split()
        if op == "#":
            batch = int(size)
            found[batch] = []
        elif batch is not None:
            found[batch].append((op, int(address, 16), int(size), int(alignment)))
    return found


def outputs_of(calls, nbytes):
    """Each output's request and free, in order: [(request index, free index or None)]. The
    first request of the batch's size is the input (made in the case's setup)."""
    requests = [i for i, (op, _, size, _) in enumerate(calls) if op in REQUESTS and size == nbytes]
    found = []
    for i in requests[1:]:
        address = calls[i][1]
        free = next((j for j in range(i + 1, len(calls))
                     if calls[j][0] == "f" and calls[j][1] == address), None)
        found.append((i, free))
    return found


def summarize(batch, calls, image, warmup):
    """One batch of one process: where its outputs went and what came between them."""
    nbytes = batch * 4 * math.prod(image)  # float32 images
    outputs = outputs_of(calls, nbytes)
    seen, new_at, between = set(), [], collections.Counter()  # between: gaps per size asked
    after = elsewhere = both = 0  # gaps: landed right after, next output elsewhere, the two
    for k, (request, _) in enumerate(outputs):
        address = calls[request][1]
        if address not in seen:
            new_at.append(k + 1)
        seen.add(address)
        if k == 0 or outputs[k - 1][1] is None:
            continue
        previous = calls[outputs[k - 1][0]][1]
        asked = [c for c in calls[outputs[k - 1][1] + 1:request] if c[0] in REQUESTS]
        between.update({size for _, _, size, _ in asked})  # gaps that asked for each size
        landed = any(previous + nbytes <= a < previous + nbytes + NEAR for _, a, _, _ in asked)
        moved = address != previous
        after, elsewhere, both = after + landed, elsewhere + moved, both + (landed and moved)
    gaps = max(len(outputs) - 1, 0)
    every = [size for size, n in sorted(between.items()) if gaps and n >= gaps]
    return {"batch": batch, "bytes": nbytes, "calls": len(outputs),
            "calls_at_new_blocks": " ".join(map(str, new_at)), "blocks": len(seen),
            # the first call is the copy's check, the next `warmup` the warm-up calls
            "timed_calls_at_new_blocks": sum(k > 1 + warmup for k in new_at),
            "gaps": gaps, "asked_in_every_gap": " ".join(map(str, every)),
            "landed_right_after_freed_output": after, "next_output_elsewhere": elsewhere,
            "landed_after_and_next_elsewhere": both,
            "asked_between_free_and_request": "; ".join(f"{size} B x{n}" for size, n
                                                        in sorted(between.items()))}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--frameworks", nargs="+",
                        default=["torch", "aligned", "aligned_storage", "numpy"])
    parser.add_argument("--batches", nargs="+", type=int, default=[2, 4, 8])
    parser.add_argument("--processes", type=int, default=5, help="per framework")
    parser.add_argument("--config", default=str(HERE.parents[1] / "config" / "config.yaml"),
                        help="whose copy section gives the image, warm-up and calls")
    parser.add_argument("--child", metavar="RECORD", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    copy = yaml.safe_load(open(args.config))["copy"]
    image, warmup, calls = copy["image"], copy["warmup"], copy["calls"]
    if args.child:
        record(args.frameworks[0], args.batches, image, warmup, calls, args.child)
        return 0
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        shim = build_shim(folder)
        env = {**os.environ, "LD_PRELOAD": str(shim), "OMP_NUM_THREADS": "1",
               "MKL_NUM_THREADS": "1"}
        env.pop("GLIBC_TUNABLES", None)  # glibc's defaults, as the glibc environment
        for framework in args.frameworks:
            for process in range(args.processes):
                path = Path(folder) / f"{framework}.{process}.calls"
                subprocess.run([sys.executable, __file__, "--out", str(out), "--frameworks",
                                framework, "--batches", *map(str, args.batches), "--config",
                                args.config, "--child", str(path)], check=True, env=env)
                rows += [{"framework": framework, "process": process,
                          **summarize(batch, found, image, warmup)}
                         for batch, found in read_calls(path).items()]
                with open(path, "rb") as raw, gzip.open(out / f"{path.name}.gz", "wb") as kept:
                    shutil.copyfileobj(raw, kept)
    table = pd.DataFrame(rows)
    table.to_csv(out / "allocations.csv", index=False)
    print(table.drop(columns="asked_between_free_and_request").to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
