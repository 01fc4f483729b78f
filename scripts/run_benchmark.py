#!/usr/bin/env python3
"""Run one benchmark process under a named environment, and write its result.

    run_benchmark.py --experiment copy --configuration numpy/tcmalloc/cpu/random \\
        --benchmark copy --params '{"framework": "numpy", ...}' \\
        --environment tcmalloc --preload libtcmalloc.so.4 --threads 1 --device cpu --rep 0 \\
        --warmup 5 --samples 30 --order shuffled --out results/runs/.../rep0.json

The command starts the measured process itself: from a minimal environment (an allowlist,
knobs/environment.py), plus the variables `--pass-env` names, the thread settings and the
environment's knobs; that process proves every knob before it measures (knobs/runner.py). A
process that ran while the machine was busy with something else is measured once more, and
flagged if it is disturbed again. With --describe it writes the benchmark's evidence text
(compiled graph, profile) instead of timing it.
"""

import argparse
import json
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import time

STARTED = time.perf_counter()

from knobs import environment, kinds, results, runner  # noqa: E402

ATTEMPTS = 2  # a disturbed process is measured once more


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--experiment", required=True)
    parser.add_argument("--label", action="append", default=[], metavar="KEY=VALUE",
                        help="what names the configuration, in order (its path: the values)")
    parser.add_argument("--benchmark", required=True,
                        help="a built-in benchmark (copy, hourglass, peak) or a .py file")
    parser.add_argument("--params", type=json.loads, default={}, help="JSON object")
    parser.add_argument("--environment", required=True, help="the environment's name")
    parser.add_argument("--require-effect", action="append", default=[], metavar="KNOB",
                        help="a knob that must be proven by its effect (all: every knob)")
    parser.add_argument("--pass-env", action="append", default=[], metavar="VARIABLE",
                        help="a variable of the caller's environment the process keeps")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--kinds", action="append", default=[], metavar="FILE",
                        help="a module of knob kinds of the config's own (its `kinds:`)")
    for kind in kinds.load(tuple(kind_files(argv))):  # each kind's own option: its knobs
        parser.add_argument(kind.option, action="append", default=[], dest=f"kind_{kind.key}",
                            help=f"the environment's `{kind.key}` (a knob, proven)")
    parser.add_argument("--device", default="cpu", choices=["cpu", "gpu"])
    parser.add_argument("--rep", type=int, default=0)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--samples", type=int, default=10)
    parser.add_argument("--order", default="given", choices=runner.ORDERS,
                        help="order of the benchmark's cases inside the process")
    parser.add_argument("--trace", help="write a Chrome trace of one step here")
    parser.add_argument("--describe", nargs="+", metavar="DEVICE",
                        help="write the benchmark's evidence on these devices; time nothing")
    parser.add_argument("--out", required=True)
    parser.add_argument("--measure", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    for item in args.label:
        if "=" not in item:
            parser.error(f"--label {item!r}: expected KEY=VALUE")
    args.labels = [item.split("=", 1) for item in args.label]  # in order: they make the path
    args.configuration = "/".join(value for _, value in args.labels)
    if args.warmup < 0 or args.samples < 1 or args.threads < 1:
        parser.error("samples and threads must be at least 1, warmup at least 0")
    return args


def kind_files(argv):
    """The files of the config's own knob kinds (`--kinds`), read before the other options:
    each kind brings its own."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--kinds", action="append", default=[])
    return parser.parse_known_args(argv)[0].kinds


def spec_of(args):
    """The environment as knobs/environment.py takes it: each kind's value read back from
    its words."""
    required = True if "all" in args.require_effect else args.require_effect
    spec = {kind.key: kind.read(getattr(args, f"kind_{kind.key}"))
            for kind in kinds.load(tuple(args.kinds))}
    return {**{key: value for key, value in spec.items() if value is not None},
            "require_effect": required}


def measure(args):
    """In the measured process."""
    if args.describe:
        from knobs import finder, machine

        environment.prove(args.environment)
        module = finder.load(args.benchmark)
        text = module.Benchmark(args.params, args.describe[0], 0).describe(args.describe)
        where = machine.describe()
        header = (f"benchmark: {args.benchmark} ({args.configuration})\n"
                  f"params: {json.dumps(args.params)}\n"
                  f"machine: {machine.kind(where)}, {where['host']}\n"
                  f"written: {runner.utc_now()}\n\n")
        os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
        with open(args.out + ".tmp", "w") as out:
            out.write(header + text)
        os.replace(args.out + ".tmp", args.out)
        return
    job = {key: getattr(args, key) for key in ("experiment", "labels", "configuration", "benchmark",
                                                "params", "environment", "device", "rep",
                                                "warmup", "samples", "order")}
    runner.run(job, args.out, STARTED, trace=args.trace)


def launch(args, argv):
    """Start the measured process in its own environment; measure again once if it was
    disturbed; return its exit code."""
    try:
        env = environment.launch_env(args.environment, spec_of(args), args.threads,
                                     args.pass_env, kind_files=args.kinds)
    except environment.KnobNotApplied as error:
        sys.exit(f"run_benchmark: {error}")
    shown = {k: v for k, v in env.items() if k != environment.SPEC_VARIABLE}
    print(f"run_benchmark: environment {args.environment}: "
          + " ".join(f"{k}={shlex.quote(v)}" for k, v in shown.items()),
          file=sys.stderr, flush=True)
    command = [sys.executable, os.path.abspath(__file__), "--measure", *argv]
    before_exec = environment.before_exec(environment.knobs_in_process(env), args.kinds)
    previous = []
    for attempt in range(1, ATTEMPTS + 1):
        # The measured process skips its teardown (main), so what it meant to delete at exit
        # (TensorFlow's autograph writes a source file per traced function) would stay in
        # /tmp: it gets a temporary directory of its own, removed once it has ended.
        with tempfile.TemporaryDirectory(prefix="knobs-measured-") as scratch:
            code = subprocess.run(command, env={**env, "TMPDIR": scratch},
                                  preexec_fn=before_exec).returncode
        if code < 0:  # a signal: nothing in the process could say so (an exit says its own)
            print(f"run_benchmark: {death(-code)}", file=sys.stderr, flush=True)
            return 128 - code  # as a shell reports a signal
        if code or args.describe or not os.path.exists(args.out):
            return code
        result = results.read(args.out, validate=False)
        disturbed = result["process"]["disturbed"]
        if not disturbed or attempt == ATTEMPTS:
            break
        print(f"run_benchmark: attempt {attempt} disturbed ({disturbed}); measuring again",
              file=sys.stderr, flush=True)
        previous.append({"attempt": attempt, "process": result["process"]})
        os.unlink(args.out)
    if previous:
        result["process"]["previous_attempts"] = previous
        results.write_json(args.out, result)
    return 0


# What kills a measured process, most often, by its signal.
LIKELY = {signal.SIGKILL: "sent by the out-of-memory killer (`dmesg` says) or a kill -9",
          signal.SIGSEGV: "a crash inside the process, e.g. in a library under a preload",
          signal.SIGABRT: "the process aborted itself: a failed check in native code",
          signal.SIGBUS: "a crash on a bad memory access: a full /dev/shm or a damaged file",
          signal.SIGTERM: "stopped from outside (a scheduler's time limit, a kill)"}


def death(number):
    """One line on the signal that ended the measured process before its result."""
    try:
        name = signal.Signals(number).name
    except ValueError:  # a real-time signal has no name of its own
        name = signal.strsignal(number) or "a signal"
    return (f"the measured process was killed by {name} (signal {number}"
            + (f": {LIKELY[number]}" if number in LIKELY else "") + "); its result was not "
            "written")


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    if args.measure:
        try:
            measure(args)
        except environment.KnobNotApplied as error:
            sys.exit(f"run_benchmark: knob not applied: {error}")
        # The result is written: skip the frameworks' teardown (a second for TensorFlow's,
        # measuring nothing, on every process of a run).
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)
    return launch(args, argv)


if __name__ == "__main__":
    sys.exit(main())
