#!/usr/bin/env python3
"""Time the identity function `f(x) -> copy of x` over batches of images, in one process.

Run through with_environment.py, which sets the process-level knobs this script proves
before it measures anything. Writes one JSON result per batch (the --out paths, in --batches
order), all or none: a failed knob check or copy check writes nothing.
"""

import argparse
import datetime
import gc
import os
import platform
import random
import resource
import sys
import time

STARTED = time.perf_counter()

from knobs import environment, machine, results  # noqa: E402


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--framework", required=True)
    parser.add_argument("--environment", required=True)
    parser.add_argument("--device", default="cpu", choices=["cpu", "gpu"],
                        help="gpu: host array in, through the GPU, host array out")
    parser.add_argument("--batches", type=int, nargs="+", required=True)
    parser.add_argument("--image", type=int, nargs=3, default=[3, 448, 448])
    parser.add_argument("--input", default="random", choices=["random", "zeros"])
    parser.add_argument("--rep", type=int, default=0)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--calls", type=int, default=30)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--order", default="shuffled",
                        choices=["shuffled", "ascending", "descending"])
    parser.add_argument("--out", nargs="+", required=True, help="one JSON path per batch")
    args = parser.parse_args(argv)
    if len(args.out) != len(args.batches):
        parser.error("give one --out path per batch")
    if min(args.batches) < 1 or args.warmup < 0 or args.calls < 1:
        parser.error("batches and calls must be positive, warmup non-negative")
    from knobs import frameworks

    if args.framework not in frameworks.RUNTIMES:
        parser.error(f"unknown framework {args.framework!r}; known: {', '.join(frameworks.RUNTIMES)}")
    if args.device not in frameworks.devices(args.framework):
        parser.error(f"{args.framework} runs on {', '.join(frameworks.devices(args.framework))}, "
                     f"not {args.device}")
    return args


def batch_order(batches, order, rep):
    """The order batches run in. glibc moves its mmap threshold after a free, so order can
    matter; `shuffled` uses a different, recorded permutation per rep."""
    if order == "ascending":
        return sorted(batches)
    if order == "descending":
        return sorted(batches, reverse=True)
    shuffled = list(batches)
    random.Random(rep).shuffle(shuffled)
    return shuffled


def make_input(np, shape, kind, rep):
    if kind == "zeros":  # as the seed did: untouched zero pages are unusually cheap to read
        return np.zeros(shape, dtype=np.float32)
    return np.random.default_rng(rep).random(shape, dtype=np.float32)


def check_copy(np, identity, native, host):
    """One untimed call: the output must equal the input and not share its memory."""
    result = identity.call(native)
    output = identity.to_numpy(native if result is None else result)
    check = {"equal": bool(np.array_equal(output, host)),
             "aliases_input": bool(np.shares_memory(output, host)),
             "fresh_output": identity.fresh_output}
    if not check["equal"] or check["aliases_input"]:
        raise RuntimeError(f"the identity function did not return a copy: {check}")
    return check


def time_calls(identity, native, warmup, calls):
    """Per-call wall time and page faults; the output is freed inside the clock, as in a
    loop that discards it, so the next call's allocation sees what this one left."""
    for _ in range(warmup):
        identity.call(native)
    seconds, minor, major = [], [], []
    gc.disable()
    try:
        for _ in range(calls):
            before = resource.getrusage(resource.RUSAGE_SELF)
            start = time.perf_counter()
            identity.call(native)
            stop = time.perf_counter()
            after = resource.getrusage(resource.RUSAGE_SELF)
            seconds.append(stop - start)
            minor.append(after.ru_minflt - before.ru_minflt)
            major.append(after.ru_majflt - before.ru_majflt)
    finally:
        gc.enable()
    return {"seconds": seconds, "minor_faults": minor, "major_faults": major}


def main(argv=None):
    args = parse_args(argv)
    environment.set_threads(args.threads)
    knobs = environment.prove(args.environment)  # before anything is measured
    import numpy as np

    from knobs import frameworks

    order = batch_order(args.batches, args.order, args.rep)
    shape_of = {b: (b, *args.image) for b in args.batches}
    identity = frameworks.load(args.framework).build(
        make_input(np, shape_of[order[0]], args.input, args.rep), args.device)
    setup_seconds = time.perf_counter() - STARTED
    measured = {}
    for position, batch in enumerate(order):
        host = make_input(np, shape_of[batch], args.input, args.rep)
        native = identity.prepare(host)
        check = check_copy(np, identity, native, host)
        measured[batch] = {"position": position, "check": check,
                           "samples": time_calls(identity, native, args.warmup, args.calls)}
        del native, host
    environment.prove_started(knobs)  # knobs that act once devices have started

    common = {
        "experiment": "copy", "framework": args.framework, "environment": args.environment,
        "device": args.device, "input": args.input, "rep": args.rep, "image": args.image,
        "warmup": args.warmup, "calls": args.calls, "order": order, "setup_seconds": setup_seconds,
        "threads": {"requested": args.threads,
                    **{k: os.environ.get(k) for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}},
        "knobs": {**knobs, "allocator_libraries": environment.allocator_libraries()},
        "framework_info": {"version": identity.version, **identity.evidence},
        "versions": {"python": platform.python_version(), "numpy": np.__version__,
                     args.framework: identity.version},
        "machine": machine.describe(),
        "command": sys.argv,
        "finished": datetime.datetime.now(datetime.timezone.utc).isoformat(),
    }
    for batch, path in zip(args.batches, args.out):
        nbytes = int(np.prod(shape_of[batch])) * 4
        results.write_json(path, {**common, "batch": batch, "bytes": nbytes, **measured[batch]})


if __name__ == "__main__":
    try:
        main()
    except environment.KnobNotApplied as error:
        sys.exit(f"copy_run: knob not applied: {error}")
