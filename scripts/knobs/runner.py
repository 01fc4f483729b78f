"""The one runner: every benchmark process is this loop around a `Benchmark`
(knobs/benchmarks/__init__.py says what a benchmark defines).

In the measured process it proves the environment before anything is measured, builds the
benchmark, runs its cases in a recorded order, and for each case: the warm-up (its first call,
which compiles and allocates, recorded apart), then the timed samples, each with the process's own
counters around it (CPU time of all threads, page faults, context switches). It records what
the rest of the machine did meanwhile (knobs/disturbance.py) and writes one result file, all
or none.
"""

import datetime
import gc
import platform
import random
import resource
import sys
import time

from knobs import disturbance, environment, finder, framework_knobs, machine, onednn, results
from knobs.benchmarks import Unavailable, cases_of

# Per-sample counters: getrusage(RUSAGE_SELF) fields, summed over every thread of the process.
COUNTERS = {"minor_faults": "ru_minflt", "major_faults": "ru_majflt",
            "voluntary_switches": "ru_nvcsw", "involuntary_switches": "ru_nivcsw"}
ORDERS = ("given", "reversed", "shuffled", "rotated")


def case_order(cases, order, rep):
    """The order cases run in inside one process: as the benchmark gives them, reversed,
    shuffled (a recorded permutation per rep), or rotated by the rep (with two cases: the
    order alternates from one process to the next)."""
    if order == "reversed":
        return cases[::-1]
    if order == "shuffled":
        shuffled = list(cases)
        random.Random(rep).shuffle(shuffled)
        return shuffled
    if order == "rotated":
        k = rep % len(cases)
        return cases[k:] + cases[:k]
    return list(cases)


def _dropped(value):
    """What a step returned, dropped inside the clock unless it is a number (a loss): the
    output's free belongs to the step, as in a loop that discards it."""
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def measure(step, warmup, samples, warm=None):
    """`warmup` discarded calls (at least one: the first, which compiles and allocates, is
    timed apart), then `samples` timed calls with their counters. `warm(step)`, where a
    benchmark has one, makes the warm-up calls after the first (to watch what they do)."""
    start = time.perf_counter()
    _dropped(step())
    first = time.perf_counter() - start
    for _ in range(warmup - 1):
        _dropped(warm(step) if warm else step())
    record = {"seconds": [], "cpu_seconds": [], "value": [], **{key: [] for key in COUNTERS}}
    gc.disable()  # a collection inside one sample would be charged to it
    try:
        for _ in range(samples):
            before = resource.getrusage(resource.RUSAGE_SELF)
            start = time.perf_counter()
            value = _dropped(step())
            stop = time.perf_counter()
            after = resource.getrusage(resource.RUSAGE_SELF)
            record["seconds"].append(stop - start)
            # field by field: each difference is >= 0, where the difference of the two sums
            # can round to -1e-18 when the clock did not tick
            record["cpu_seconds"].append((after.ru_utime - before.ru_utime)
                                         + (after.ru_stime - before.ru_stime))
            record["value"].append(value)
            for key, field in COUNTERS.items():
                record[key].append(getattr(after, field) - getattr(before, field))
    finally:
        gc.enable()
    return {"first_seconds": first, "samples": record}


def run(job, out, started, trace=None):
    """Measure `job` (experiment, labels, configuration, benchmark, params, environment,
    device, rep, warmup, samples, order) and write its result to `out`."""
    watch = disturbance.Watch()
    knobs = environment.prove(job["environment"])  # before anything is measured
    module = finder.load(job["benchmark"])
    timeline = {"build_started": time.perf_counter() - started}
    result = {
        "format": results.FORMAT, "experiment": job["experiment"],
        "configuration": job["configuration"], "labels": job["labels"], "rep": job["rep"],
        "device": job["device"],
        "environment": job["environment"],
        "benchmark": {"module": job["benchmark"], "params": job["params"]},
        "warmup": job["warmup"], "samples": job["samples"],
        "knobs": knobs, "machine": machine.describe(),
        "environ": environment.recorded_environment(), "command": sys.argv,
    }
    applied = environment.knobs_in_process()
    capture = framework_knobs.capture(applied)  # None where no proof reads oneDNN's lines
    try:
        try:
            framework_knobs.prepare(applied)
            benchmark = module.Benchmark(job["params"], job["device"], job["rep"])
            timeline["build_done"] = time.perf_counter() - started
            framework_knobs.check_built(applied)
            order = case_order(cases_of(benchmark), job["order"], job["rep"])
            cases = {}
            for position, case in enumerate(order):
                step = framework_knobs.wrap(benchmark.setup(case), applied)
                if position == 0:
                    timeline["first_case_ready"] = time.perf_counter() - started
                cases[case] = {"position": position, **measure(
                    step, job["warmup"], job["samples"], getattr(benchmark, "warm", None))}
                if position == 0:
                    framework_knobs.traced(step, applied)  # untimed, for the proofs
                del step  # released before the next case is set up
                cases[case]["info"] = benchmark.info(case) if hasattr(benchmark, "info") else {}
        finally:
            lines = capture.stop() if capture else None
        # knobs that show once the steps ran
        environment.prove_started(knobs, observed=None if lines is None else onednn.parse(lines))
    except (Unavailable, environment.NotApplicable) as error:
        results.write_json(out, {**result, "status": "unavailable", "reason": str(error),
                                 "process": watch.stop(), "finished": utc_now()})
        print(f"run_benchmark: unavailable here: {error}", file=sys.stderr)
        return
    evidence = benchmark.evidence() if hasattr(benchmark, "evidence") else {}
    op_seconds = benchmark.trace(trace) if trace and hasattr(benchmark, "trace") else None
    versions = {"python": platform.python_version(), **_numpy_version(),
                **(benchmark.versions() if hasattr(benchmark, "versions") else {})}
    results.write_json(out, {
        **result, "status": "ok", "order": order, "cases": cases, "timeline": timeline,
        "evidence": evidence, "versions": versions, "trace": trace if op_seconds is not None
        else None, "op_seconds": op_seconds, "process": watch.stop(), "finished": utc_now()})


def _numpy_version():
    try:
        import numpy
    except ImportError:
        return {}
    return {"numpy": numpy.__version__}


def utc_now():
    return datetime.datetime.now(datetime.timezone.utc).isoformat()
