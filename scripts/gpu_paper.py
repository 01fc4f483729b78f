#!/usr/bin/env python3
"""Run a config's GPU jobs on a node without Snakemake (or TensorFlow, or PyTensor): the
same entry points with the same arguments the rules pass, writing the same result files.

What the node cannot run is skipped with a line saying why; what is already measured is
kept. At the end `<results>/config.yaml` describes exactly the configurations whose results
are complete, so that the workflow, where Snakemake runs, builds the tables, figures and
report from them without running anything (`make paper`). Usually called through
scripts/gpu_paper.sh.
"""

import argparse
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import yaml

from knobs import config_check, environment, frameworks, jobs

REPO = Path(__file__).resolve().parent.parent
SCHEMA = REPO / "config" / "schema.yaml"

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
        config_check.check_schema(config, SCHEMA)
    except ImportError:  # jsonschema is not installed here: the workflow checks it later
        print("note: jsonschema is not installed here; the config's schema is not checked")
    config = config_check.fill_defaults(config, SCHEMA)
    config_check.check_references(config)
    return config


def probe(python, modules):
    """What `python` can import, and whether torch, JAX and TensorFlow see a GPU."""
    done = subprocess.run([python, "-c", PROBE, *sorted(modules)], capture_output=True,
                          text=True, env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3",
                                          "PYTHONPATH": os.pathsep.join(filter(None, [
                                              str(jobs.SCRIPTS), os.environ.get("PYTHONPATH")]))})
    if done.returncode:
        sys.exit(f"gpu_paper: cannot probe {python}: {done.stderr.strip()[-500:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


@dataclass
class Job:
    name: str
    script: str
    args: list  # as the rule passes them, without the output flags
    outputs: dict  # output flag -> path(s)
    needs: tuple  # modules it imports
    gpu_library: str = None  # the library that must see a GPU, if it runs on one
    environment: str = None  # run through with_environment.py under this environment
    log: str = None

    def measured(self):
        """The result files (a run that could not trace, such as an unavailable
        torch.compile, writes its result but no trace: it is measured all the same)."""
        value = self.outputs["--out"]
        return value if isinstance(value, list) else [value]

    def why_not(self, found, unusable):
        """Why this node cannot run the job, or None (`unusable`: environment -> why)."""
        if self.environment in unusable:
            return unusable[self.environment]
        for module in self.needs:
            if "error" in found[module]:
                return f"{module} is not importable here ({found[module]['error'][:80]})"
        if self.gpu_library and not found[self.gpu_library].get("gpu"):
            if self.gpu_library == "tensorflow":
                return "no TensorFlow GPU build here (TensorFlow sees no GPU)"
            return f"{self.gpu_library} sees no GPU here"
        return None

    def command(self, config, python):
        launcher = jobs.launcher(config, self.environment) if self.environment else []
        prefix = [python, *launcher] if launcher else []
        flags = [word for flag, value in self.outputs.items()
                 for word in [flag, *(value if isinstance(value, list) else [value])]]
        return [*prefix, python, str(jobs.SCRIPTS / self.script), *map(str, self.args), *flags]


def unusable_environments(config, names):
    """Environments whose preload libraries are not installed here, and why."""
    unusable = {}
    for name in names:
        for library in config["environments"][name].get("preload", []):
            try:
                environment.resolve_library(name, library)
            except environment.KnobNotApplied as error:
                fix = str(error).rpartition("Fix: ")[2].rstrip(".")
                unusable[name] = f"{library} is not installed here ({fix})"
    return unusable


def gpu_jobs(config, devices):
    """The config's jobs on `devices`, in the order they run: peaks, copies, evidence, steps.
    Their logs go beside the results, so that they travel back with them."""
    found, logs = [], f"{jobs.results_dir(config)}/logs"
    if "hourglass" in config:
        hourglass = config["hourglass"]
        for device in [d for d in hourglass["devices"] if d in devices]:
            for rep in range(hourglass["reps"]):
                out = jobs.HOURGLASS_PEAK.format(results=jobs.results_dir(config), device=device,
                                                 rep=rep)
                found.append(Job(f"peak {device} rep{rep}", "matmul_peak.py",
                                 jobs.peak_args(config, device), {"--out": out}, ("torch",),
                                 "torch" if device == "gpu" else None, "glibc",
                                 f"{logs}/hourglass_peak/{device}/rep{rep}.log"))
    if "copy" in config:
        for w, paths in jobs.copy_run_groups(config):
            if w["device"] not in devices:
                continue
            found.append(Job(
                "copy {framework} {environment} {device} {input} rep{rep}".format(**w),
                "copy_run.py", jobs.copy_run_args(config, **w), {"--out": paths},
                frameworks.imports(w["framework"]),
                frameworks.GPU[w["framework"]] if w["device"] == "gpu" else None,
                w["environment"],
                f"{logs}/copy_run/"
                + "{framework}/{environment}/{device}/{input}/rep{rep}.log".format(**w)))
        for framework in jobs.copy_evidence_frameworks(config):
            runs_on = jobs.copy_devices(config, framework)
            if not set(runs_on) & set(devices):
                continue
            out = jobs.COPY_EVIDENCE.format(results=jobs.results_dir(config), framework=framework)
            found.append(Job(f"evidence {framework}", "copy_evidence.py",
                             jobs.copy_evidence_args(config, framework), {"--out": out},
                             frameworks.imports(framework),
                             frameworks.GPU[framework] if "gpu" in runs_on else None,
                             log=f"{logs}/copy_evidence/{framework}.log"))
    if "hourglass" in config:
        results = jobs.results_dir(config)
        for w in jobs.hourglass_runs(config):
            if w["device"] not in devices:
                continue
            trace = jobs.HOURGLASS_TRACE.format(results=results, **w)
            out = jobs.HOURGLASS_RUN.format(results=results, **w)
            found.append(Job(
                "hourglass {framework} {variant} {environment} {device} rep{rep}".format(**w),
                "hourglass_run.py", jobs.hourglass_run_args(config, **w),
                {"--trace": trace, "--out": out}, (w["framework"],),
                w["framework"] if w["device"] == "gpu" else None, w["environment"],
                f"{logs}/hourglass_run/"
                + "{framework}/{variant}/{environment}/{device}/rep{rep}.log".format(**w)))
    return found


def run(job, config, python):
    os.makedirs(os.path.dirname(job.log), exist_ok=True)
    start = time.perf_counter()
    with open(job.log, "w") as log:
        done = subprocess.run(job.command(config, python), stdout=log, stderr=subprocess.STDOUT)
    return done.returncode, time.perf_counter() - start


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
    parser.add_argument("--dry-run", action="store_true", help="say what would run; run nothing")
    args = parser.parse_args()
    config = load_config(args.configfile)
    if args.results:
        config["results"] = args.results
    results = Path(jobs.results_dir(config))
    todo = gpu_jobs(config, args.devices)
    modules = {m for job in todo for m in job.needs} | {j.gpu_library for j in todo if j.gpu_library}
    found = probe(args.python, modules)
    print("here: " + ", ".join(f"{m} {v.get('version', 'not importable')}"
                               + (f" (GPU: {v['gpu']})" if "gpu" in v else "")
                               for m, v in sorted(found.items())))
    unusable = unusable_environments(config, {j.environment for j in todo if j.environment})
    started, counts = time.perf_counter(), {"ran": 0, "failed": 0, "skipped": 0, "done": 0}
    skipped = {}  # (job without its rep, why) -> jobs
    for job in todo:
        if all(os.path.exists(p) for p in job.measured()):
            counts["done"] += 1
            continue
        why = job.why_not(found, unusable)
        if why is None and args.time_limit and time.perf_counter() - started > args.time_limit:
            why = f"time limit of {args.time_limit:.0f} s reached"
        if why:
            counts["skipped"] += 1
            skipped.setdefault((job.name.rsplit(" rep", 1)[0], why), []).append(job.name)
            continue
        if args.dry_run:
            print(f"would run: {job.name}: {jobs.quoted(job.command(config, args.python))}")
            continue
        code, seconds = run(job, config, args.python)
        counts["ran" if code == 0 else "failed"] += 1
        print(f"{'ok' if code == 0 else f'FAILED (exit {code}, see {job.log})'}: {job.name} "
              f"({seconds:.1f} s)", flush=True)
    for (name, why), names in skipped.items():
        print(f"skip: {name}{f' ({len(names)} reps)' if len(names) > 1 else ''}: {why}")
    print(", ".join(f"{n} {k}" for k, n in counts.items()))
    if args.dry_run:
        return 0
    measured, dropped = jobs.measured_config(config, os.path.exists)
    for line in dropped:
        print(f"left out of {results}/config.yaml: {line}")
    if "copy" in measured or "hourglass" in measured:
        results.mkdir(parents=True, exist_ok=True)
        with open(results / "config.yaml", "w") as out:
            out.write(f"# What {args.configfile} measured here, complete configurations only "
                      "(written by scripts/gpu_paper.py).\n")
            yaml.safe_dump(measured, out, sort_keys=False)
        print(f"wrote {(results / 'config.yaml').resolve()}; build its tables and figures where "
              "Snakemake runs: make paper")
        if results.is_absolute():
            print(f"note: results is an absolute path ({results}): make paper looks for "
                  "results/paper/*/config.yaml, so copy the folder there and set its `results`")
    else:
        print("nothing complete was measured: no config.yaml written")
        return 1
    return 1 if counts["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
