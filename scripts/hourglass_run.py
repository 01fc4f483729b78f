#!/usr/bin/env python3
"""Time a stacked-hourglass forward pass and train step (forward, backward, RMSprop update) in
TensorFlow or PyTorch under one configuration of knobs, in one process.

Run through with_environment.py. Build, compile and first steps are timed apart from the
steady state; one extra train step is traced (Chrome trace) and its time per op is kept.
"""

import argparse
import datetime
import os
import platform
import sys
import time

STARTED = time.perf_counter()

from knobs import environment, gpu, hourglass, machine, results  # noqa: E402


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--framework", required=True, choices=["tensorflow", "torch"])
    parser.add_argument("--variant", required=True,
                        help="tensorflow: execution-input-batch_norm-data_format; "
                             "torch: eager, or knobs joined by '-' (hourglass.TORCH_KNOBS)")
    parser.add_argument("--environment", required=True)
    parser.add_argument("--device", default="cpu", choices=["cpu", "gpu"])
    for key, default in dict(stacks=2, resolution=128, batch=2, features=256, joints=16).items():
        parser.add_argument(f"--{key}", type=int, default=default)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--inter-op-threads", type=int, default=1)
    parser.add_argument("--rep", type=int, default=0)
    parser.add_argument("--trace", required=True, help="Chrome trace of one train step")
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    size = {k: getattr(args, k) for k in ("stacks", "resolution", "batch", "features", "joints")}
    errors = hourglass.check_size(**size)
    if args.warmup < 1 or args.steps < 1:
        errors.append("warmup and steps must be at least 1")
    if errors:
        parser.error("; ".join(errors))
    return args, size


def make_runner(args, size):
    if args.framework == "tensorflow":
        from knobs.hourglass import tf_runner

        return tf_runner.Runner(size, hourglass.parse_tf_variant(args.variant), args.threads,
                                args.inter_op_threads, args.device, seed=args.rep)
    from knobs.hourglass import torch_runner

    return torch_runner.Runner(size, args.variant, args.threads, args.inter_op_threads,
                               args.device, seed=args.rep)


def timed(step):
    start = time.perf_counter()
    loss = step()  # every step returns a Python float: the work has finished
    return time.perf_counter() - start, loss


def measure(step, warmup, steps):
    """First call (compiles, allocates) apart, then warm-up, then the timed steps."""
    first, _ = timed(step)
    first_done = time.perf_counter()
    for _ in range(warmup - 1):
        step()
    samples = [timed(step) for _ in range(steps)]
    return {"first_seconds": first, "first_done": first_done, "seconds": [s for s, _ in samples],
            "loss": [loss for _, loss in samples]}


def versions(framework):
    import numpy

    found = {"python": platform.python_version(), "numpy": numpy.__version__}
    if framework == "tensorflow":
        import google.protobuf
        import tensorflow
        from google.protobuf.internal import api_implementation

        found.update(tensorflow=tensorflow.__version__, protobuf=google.protobuf.__version__,
                     protobuf_implementation=api_implementation.Type())
    else:
        import torch

        found["torch"] = torch.__version__
    return found


def main():
    args, size = parse_args()
    environment.set_threads(args.threads)
    knobs = environment.prove(args.environment)
    common = {
        "experiment": "hourglass", "framework": args.framework, "variant": args.variant,
        "environment": args.environment, "device": args.device, "rep": args.rep, **size,
        "warmup": args.warmup, "steps": args.steps,
        "flops": {"forward": hourglass.forward_flops(**size),
                  "train": hourglass.train_flops(**size)},
        "knobs": {**knobs, "allocator_libraries": environment.allocator_libraries()},
        "machine": machine.describe(), "command": sys.argv,
    }
    if args.device == "gpu":
        gpu.require(args.framework)
    build_start = time.perf_counter()
    try:
        runner = make_runner(args, size)
        build_seconds = time.perf_counter() - build_start  # graph build, variables, compile
        forward = measure(runner.forward_step, args.warmup, args.steps)
    except environment.KnobNotApplied:
        raise
    except Exception as error:  # torch.compile may not work on a machine: say why, openly
        if "compile" not in args.variant.split("-"):
            raise
        results.write_json(args.out, {**common, "status": "unavailable",
                                      "reason": f"{type(error).__name__}: {error}"})
        print(f"hourglass_run: torch.compile unavailable: {error}", file=sys.stderr)
        return
    train = measure(runner.train_step, args.warmup, args.steps)
    train.pop("first_done")
    evidence = runner.evidence()
    environment.prove_started(common["knobs"])  # knobs that act once devices have started
    os.makedirs(os.path.dirname(args.trace) or ".", exist_ok=True)
    per_op = runner.trace_train_step(args.trace)
    if not train["loss"][-1] < train["loss"][0]:
        print("hourglass_run: warning: the loss did not fall during the timed steps",
              file=sys.stderr)
    results.write_json(args.out, {
        **common, "status": "ok",
        "params": runner_params(runner, args.framework),
        "phases": {"forward": forward, "train": train},
        "build_seconds": build_seconds,
        "process_to_first_step_seconds": forward.pop("first_done") - STARTED,
        "evidence": evidence, "trace": args.trace, "op_seconds": per_op,
        "versions": versions(args.framework),
        "finished": datetime.datetime.now(datetime.timezone.utc).isoformat(),
    })


def runner_params(runner, framework):
    if framework == "tensorflow":
        from knobs.hourglass import tf_model

        return tf_model.parameter_count(runner.model)
    from knobs.hourglass import torch_model

    return torch_model.parameter_count(runner.model)


if __name__ == "__main__":
    try:
        main()
    except environment.KnobNotApplied as error:
        sys.exit(f"hourglass_run: knob not applied: {error}")
