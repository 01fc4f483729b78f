#!/usr/bin/env python3
"""Run a config's GPU jobs on a node without Snakemake (or TensorFlow, or PyTensor): the
same entry points with the same arguments the rules pass, writing the same result files.

What the node cannot run is skipped with a line saying why; what is already measured is
kept. At the end `<results>/config.yaml` is the config with `not_measured` listing every
result file that is missing, so that the workflow, where Snakemake runs, builds the tables,
figures and report from what is there without running anything (`make paper`). Usually
called through scripts/run_without_snakemake.sh.
"""

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import yaml

from knobs import config_check, environment, experiments
from knobs.kinds import preload

REPO = Path(__file__).resolve().parent.parent

PROBE = """
import importlib, json, sys
found = {}
for name in sys.argv[1:]:
    try:
        module = importlib.import_module(name)
        found[name] = {"version": getattr(module, "__version__", "?")}
    except Exception as error:
        found[name] = {"error": f"{type(error).__name__}: {error}"}
from knobs import gpu
for name in gpu.FIXES:
    if "version" in found.get(name, {}):
        found[name]["gpu"] = gpu.visible(name)
print(json.dumps(found))
"""


def load_config(path):
    with open(path) as handle:
        config = yaml.safe_load(handle)
    try:
        config_check.check_schema(config)
    except ImportError:  # jsonschema is not installed here: the workflow checks it later
        print("note: jsonschema is not installed here; the config's schema is not checked")
    config = config_check.fill_defaults(config)
    config_check.check_references(config)
    return config


def _findable(name):
    """Whether this process (its PYTHONPATH included) finds the module, without importing it."""
    import importlib.util

    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def probe(python, modules, pass_env=()):
    """What `python` can import, and whether torch, JAX and TensorFlow see a GPU, in the
    environment the measured processes get (run_benchmark.py's allowlist and the config's
    `pass_env`): a module this shell finds only through its PYTHONPATH is not there."""
    env = {key: os.environ[key] for key in (*environment.ALLOWED, *pass_env) if key in os.environ}
    env.update(TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=os.pathsep.join(filter(None, [
        str(experiments.SCRIPTS), env.get("PYTHONPATH")])))
    done = subprocess.run([python, "-c", PROBE, *sorted(modules)], capture_output=True,
                          text=True, env=env)
    if done.returncode:
        sys.exit(f"run_without_snakemake: cannot probe {python}: {done.stderr.strip()[-500:]}")
    found = json.loads(done.stdout.strip().splitlines()[-1])
    if "PYTHONPATH" in os.environ and "PYTHONPATH" not in pass_env:
        for name, module in found.items():  # importable here, through PYTHONPATH only
            if "error" in module and _findable(name):
                module["hint"] = ("the measured processes do not inherit PYTHONPATH: install "
                                  f"it into {python}'s site-packages, or add PYTHONPATH to "
                                  "the config's pass_env")
    return found


@dataclass
class Task:
    """One command the workflow would run: a measurement (a rep of a configuration) or an
    evidence file."""

    name: str
    words: list  # the command, as the rule runs it, less its --out
    out: str
    needs: tuple  # modules it imports
    gpu_library: str = None  # the library that must see a GPU, if it runs on one
    environment: str = None
    log: str = None

    def why_not(self, found, unusable):
        """Why this node cannot run the task, or None (`unusable`: environment -> why)."""
        if self.environment in unusable:
            return unusable[self.environment]
        for module in self.needs:
            if "error" in found[module]:
                hint = f"; {found[module]['hint']}" if "hint" in found[module] else ""
                return f"{module} is not importable here ({found[module]['error'][:80]}){hint}"
        if self.gpu_library and not found[self.gpu_library].get("gpu"):
            if self.gpu_library == "tensorflow":
                return "no TensorFlow GPU build here (TensorFlow sees no GPU)"
            return f"{self.gpu_library} sees no GPU here"
        return None

    def command(self):
        return [*self.words, "--out", self.out]


def unusable_environments(config, names):
    """Environments whose preload libraries are not installed here, and why."""
    unusable = {}
    for name in names:
        for library in config["environments"][name].get("preload", []):
            try:
                preload.resolve_library(name, library)
            except environment.KnobNotApplied as error:
                fix = str(error).rpartition("Fix: ")[2].rstrip(".")
                unusable[name] = f"{library} is not installed here ({fix})"
    return unusable


def tasks(config, devices, python):
    """The config's measurements and evidence on `devices`, in the order the workflow runs
    them (its rounds), the evidence right after the first round, so that a run cut short by
    --time-limit holds every configuration once with its proof; their logs go beside the
    results, so that they travel back with them."""
    results = experiments.results_dir(config)
    logs = f"{results}/logs"
    found = experiments.jobs(config)
    position = experiments.schedule(found)
    todo = []
    for job in sorted(found, key=lambda job: position[job.run("")]):
        c = job.configuration
        if c.device not in devices:
            continue
        todo.append(Task(f"{c.experiment} {' '.join(c.path.split('/'))} rep{job.rep}",
                         experiments.command(config, job, python), job.run(results),
                         c.needs, c.gpu_library, c.environment,
                         experiments.run_log_file(logs, c.experiment, c.path, job.rep)))
    first_round = sum(1 for task in todo if task.name.endswith(" rep0"))
    evidence_tasks = []
    for experiment in experiments.experiments(config).values():
        for evidence in experiment.evidence:
            c = evidence.configuration
            if not set(evidence.devices) & set(devices):
                continue
            evidence_tasks.append(Task(f"evidence {experiment.name} {evidence.name}",
                             experiments.evidence_command(config, evidence, python),
                             evidence.file(results), c.needs, c.gpu_library, c.environment,
                             experiments.evidence_log_file(logs, experiment.name, evidence.name)))
    return todo[:first_round] + evidence_tasks + todo[first_round:]


def run(task, timeout=None):
    """Run one task, its output to its log; a task past `timeout` seconds is killed with
    its children (a hung GPU job must not eat a short lease) and counts as failed."""
    os.makedirs(os.path.dirname(task.log), exist_ok=True)
    start = time.perf_counter()
    with open(task.log, "w") as log:
        process = subprocess.Popen(task.command(), stdout=log, stderr=subprocess.STDOUT,
                                   start_new_session=True)
        try:
            code = process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            print(f"run_without_snakemake: killed after {timeout:.0f} s (--task-timeout)", file=log)
            code = "timed out"
    return code, time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configfile", default=str(REPO / "config" / "paper.yaml"))
    parser.add_argument("--results", help="where results go (default: the config's `results`)")
    parser.add_argument("--devices", nargs="+", default=["gpu"], choices=["cpu", "gpu"],
                        help="run the jobs on these devices (default: gpu)")
    parser.add_argument("--python", default=sys.executable,
                        help="the interpreter the benchmarks run in (default: this one)")
    parser.add_argument("--time-limit", type=float, default=None,
                        help="start no job after this many seconds")
    parser.add_argument("--task-timeout", type=float, default=None,
                        help="kill a job that runs longer than this many seconds (it fails)")
    parser.add_argument("--dry-run", action="store_true", help="say what would run; run nothing")
    args = parser.parse_args()
    config = load_config(args.configfile)
    if args.results:
        config["results"] = args.results
    results = Path(experiments.results_dir(config))
    todo = tasks(config, args.devices, args.python)
    modules = {m for task in todo for m in task.needs} | {t.gpu_library for t in todo if t.gpu_library}
    found = probe(args.python, modules, config.get("pass_env", []))
    print("here: " + ", ".join(f"{m} {v.get('version', 'not importable')}"
                               + (f" (GPU: {v['gpu']})" if "gpu" in v else "")
                               for m, v in sorted(found.items())))
    unusable = unusable_environments(config, {t.environment for t in todo if t.environment})
    started, counts = time.perf_counter(), {"ran": 0, "failed": 0, "skipped": 0, "done": 0}
    skipped = {}  # (task without its rep, why) -> tasks
    for task in todo:
        if os.path.exists(task.out):
            counts["done"] += 1
            continue
        why = task.why_not(found, unusable)
        if (why is None and args.time_limit is not None
                and time.perf_counter() - started > args.time_limit):
            why = f"time limit of {args.time_limit:g} s reached"
        if why:
            counts["skipped"] += 1
            skipped.setdefault((task.name.rsplit(" rep", 1)[0], why), []).append(task.name)
            continue
        if args.dry_run:
            print(f"would run: {task.name}: {experiments.quoted(task.command())}")
            continue
        code, seconds = run(task, args.task_timeout)
        counts["ran" if code == 0 else "failed"] += 1
        failure = code if code == "timed out" else f"exit {code}"
        print(f"{'ok' if code == 0 else f'FAILED ({failure}, see {task.log})'}: {task.name} "
              f"({seconds:.1f} s)", flush=True)
    for (name, why), names in skipped.items():
        print(f"skip: {name}{f' ({len(names)} reps)' if len(names) > 1 else ''}: {why}")
    print(", ".join(f"{n} {k}" for k, n in counts.items()))
    if args.dry_run:
        return 0
    return write_measured_config(config, args.configfile, results, todo, counts)


def write_measured_config(config, configfile, results, todo, counts):
    """<results>/config.yaml: the config, with `not_measured` listing what is missing, so the
    workflow builds tables and figures from what is there without running anything."""
    missing = [os.path.relpath(t.out, results) for t in todo if not os.path.exists(t.out)]
    every = [os.path.relpath(path, results) for path in
             [job.run(results) for job in experiments.jobs(config)]
             + [evidence.file(results) for experiment in experiments.experiments(config).values()
                for evidence in experiment.evidence]]
    if len(missing) == len(todo) or not set(every) - set(missing):
        print("nothing was measured: no config.yaml written")
        return 1
    # What this node was not asked to run (another device) is not measured here either.
    asked = {os.path.relpath(t.out, results) for t in todo}
    missing += [path for path in every if path not in asked]
    measured = {**config, "not_measured": sorted(set(config["not_measured"]) | set(missing))}
    results.mkdir(parents=True, exist_ok=True)
    with open(results / "config.yaml", "w") as out:
        out.write(f"# What {configfile} measured here (written by "
                  f"scripts/run_without_snakemake.py); not_measured lists the "
                  f"{len(measured['not_measured'])} result files it does not hold.\n")
        yaml.safe_dump(measured, out, sort_keys=False)
    print(f"wrote {(results / 'config.yaml').resolve()} ({len(missing)} results not measured); "
          "build its tables and figures where Snakemake runs: make paper")
    if results.is_absolute():
        print(f"note: results is an absolute path ({results}): make paper looks for "
              "results/paper/*/config.yaml, so copy the folder there and set its `results`")
    return 1 if counts["failed"] else 0

if __name__ == "__main__":
    sys.exit(main())
