"""scripts/run_without_snakemake.sh: a node without Snakemake runs the same commands the rules would,
skips with a reason what it cannot run, and writes a config of what it measured, which the
workflow then aggregates without running anything."""

import os
import re
import subprocess

import pandas as pd
import pytest

from conftest import AGGREGATING_RULES, PYTHON, REPO, TINY, load_yaml, snakemake, write_config
from knobs import machine, workflow
from knobs.results import load as load_result, write_json

RUNNER = REPO / "scripts" / "run_without_snakemake.sh"


def small_config(results):
    return {
        "results": str(results),
        "environments": {"glibc": {}, "quoting": {"env": {"KNOBS_PROBE": "a b; $(x)"}}},
        "copy": {"frameworks": ["numpy"], "environments": ["glibc", "quoting"],
                 "batches": [1, 2], "image": [3, 16, 16], "reps": 1, "warmup": 1, "calls": 3,
                 "limit": {"frameworks": ["copyto"], "environments": ["glibc"]}},
        "hourglass": {"stacks": 1, "resolution": 64, "batch": 2, "features": 16, "joints": 4,
                      "reps": 1, "warmup": 1, "steps": 2, "threads": 1, "peak_size": 512,
                      "tensorflow": {"seed": {"execution": "function", "input": "resident",
                                              "batch_norm": "fused", "data_format": "NHWC",
                                              "environment": "glibc"}},
                      "torch": {"variants": ["eager"]}},
    }


def run_without_snakemake(*args, env=None):
    return subprocess.run([str(RUNNER), *map(str, args)], capture_output=True, text=True,
                          env={**os.environ, "PYTHON": str(PYTHON), **(env or {})})


def test_it_runs_the_commands_the_rules_run(tmp_path):
    """Same interpreter, launcher, script, arguments and outputs, word for word."""
    configfile = write_config(tmp_path, small_config(tmp_path / "results"))
    done = snakemake(tmp_path, "-n", "-p", configfile=configfile)
    theirs = {line.removeprefix("Shell command: ").split(" > ")[0]
              for line in (done.stdout + done.stderr).splitlines()
              if "run_benchmark.py" in line}
    ours = run_without_snakemake("--configfile", configfile, "--devices", "cpu", "--python", PYTHON,
                     "--dry-run")
    assert ours.returncode == 0, ours.stderr
    mine = {line.split(": ", 2)[2] for line in ours.stdout.splitlines()
            if line.startswith("would run: ")}
    # copy: 2 environments, the twin, the limit, the fault probe; 1 peak; hourglass: 2, twin
    assert len(theirs) == 9 and mine == theirs


def test_what_the_node_cannot_run_is_skipped_and_the_rest_aggregates(tmp_path):
    """TensorFlow made unimportable: its job is skipped with the reason, everything else runs
    standalone, the config written describes what ran, and the workflow builds the tables
    and figures from it without running any benchmark."""
    results = tmp_path / "results"
    config = small_config(results)
    config["environments"]["absent"] = {"preload": ["libknobs_absent.so.1"]}
    config["copy"]["environments"].append("absent")
    config["pass_env"] = ["PYTHONPATH"]  # the poison reaches the measured processes too
    configfile = write_config(tmp_path, config)
    poison = tmp_path / "poison"
    poison.mkdir()
    (poison / "tensorflow.py").write_text("raise ImportError('no TensorFlow on this node')\n")
    (poison / "jsonschema.py").write_text("raise ImportError('no jsonschema on this node')\n")
    done = run_without_snakemake("--configfile", configfile, "--devices", "cpu", "--python", PYTHON,
                     env={"PYTHONPATH": str(poison)})
    assert done.returncode == 0, done.stdout + done.stderr
    assert "jsonschema is not installed here" in done.stdout
    assert re.search(r"skip: hourglass tensorflow \S+ glibc cpu: tensorflow is not "
                     r"importable here \(ImportError: no TensorFlow on this node\)", done.stdout)
    assert "skip: copy numpy absent cpu random: libknobs_absent.so.1 is not installed here" \
        in done.stdout
    assert "8 ran, 0 failed, 2 skipped" in done.stdout  # 4 copy, faults, peak, 2 torch
    measured = load_yaml(results / "config.yaml")
    assert sorted(measured["not_measured"]) == [
        "runs/copy/numpy/absent/cpu/random/rep0.json.gz",
        "runs/hourglass/tensorflow/function-resident-fused-NHWC/glibc/cpu/rep0.json.gz"]
    assert (results / "logs" / "benchmark_run" / "peak" / "cpu" / "rep0.log").exists()
    runs = sorted((results / "runs").rglob("*.json.gz"))
    mtimes = {path: path.stat().st_mtime_ns for path in runs}

    aggregated = subprocess.run(
        workflow.command(results / "config.yaml", directory=tmp_path, aggregate_only=True,
                         extra=["--", results / "tables" / "summary.csv",
                                results / "figures" / "hourglass_ladder.png"]),
        capture_output=True, text=True, cwd=tmp_path)
    assert aggregated.returncode == 0, aggregated.stdout[-3000:] + aggregated.stderr[-3000:]
    assert set(re.findall(r"rule (\w+):", aggregated.stdout + aggregated.stderr)) <= set(AGGREGATING_RULES)
    assert all(path.stat().st_mtime_ns == t for path, t in mtimes.items())
    steps = pd.read_csv(results / "tables" / "hourglass.csv")
    assert set(steps["framework"]) == {"torch"}
    assert set(pd.read_csv(results / "tables" / "copy.csv")["environment"]) == {
        "glibc", "glibc.twin", "quoting"}
    assert (results / "figures" / "hourglass_ladder.png").stat().st_size > 10_000


def test_the_evidence_runs_right_after_the_first_round(tmp_path):
    """A run cut short by --time-limit still holds every configuration once with its proof."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("run_without_snakemake", REPO / "scripts" / "run_without_snakemake.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    config = small_config(tmp_path / "results")
    config["copy"].update(frameworks=["numpy", "torch"], reps=2)  # torch has evidence
    config["hourglass"]["reps"] = 2
    config = module.load_config(write_config(tmp_path, config))
    names = [task.name for task in module.tasks(config, ["cpu"], str(PYTHON))]
    kinds = ["evidence" if n.startswith("evidence") else n.rsplit(" ", 1)[1] for n in names]
    first_evidence = kinds.index("evidence")
    assert set(kinds[:first_evidence]) == {"rep0"}
    assert kinds.count("rep0") == first_evidence and kinds.count("evidence") >= 1
    assert set(kinds[first_evidence:]) == {"evidence", "rep1"}
    assert kinds[first_evidence:].index("rep1") == kinds.count("evidence")


def test_a_job_past_its_timeout_is_killed_with_its_children_and_fails(tmp_path):
    """--task-timeout: a hung job (here an interpreter that sleeps before it runs a job) is
    killed with its whole process group, counted as failed, and no later job starts past
    --time-limit; nothing is written for it."""
    hung = tmp_path / "hung_python"
    pids = tmp_path / "pids"
    hung.write_text(f'#!/bin/sh\n[ "$1" = -c ] && exec {PYTHON} "$@"  # the probe of modules\n'
                    f'echo $$ >> {pids}\nsleep 60\nexec {PYTHON} "$@"\n')
    hung.chmod(0o755)
    config = small_config(tmp_path / "results")
    del config["hourglass"]  # no TensorFlow to probe: the hung job is the subject
    done = run_without_snakemake("--configfile", write_config(tmp_path, config), "--devices", "cpu",
                     "--python", hung, "--task-timeout", "1", "--time-limit", "0.5")
    assert done.returncode == 1, done.stdout + done.stderr
    assert re.search(r"FAILED \(timed out, see \S+\.log\)", done.stdout)
    assert "1 failed" in done.stdout and "time limit of 0.5 s reached" in done.stdout
    (pid,) = pids.read_text().split()
    with pytest.raises(ProcessLookupError):
        os.kill(int(pid), 0)
    assert not (tmp_path / "results" / "runs").exists()


@pytest.mark.skipif(bool(machine.gpus()), reason="checks the machine without a GPU")
def test_without_a_gpu_every_gpu_job_is_skipped_saying_so(tmp_path):
    config = small_config(tmp_path / "results")
    config["copy"].update(frameworks=["torch", "torch_pinned"], devices=["cpu", "gpu"],
                          limit={"frameworks": ["copyto", "memcpy_pinned"],
                                 "environments": ["glibc"]})
    config["hourglass"].update(devices=["gpu"])
    done = run_without_snakemake("--configfile", write_config(tmp_path, config), "--python", PYTHON)
    assert done.returncode == 1, done.stderr  # nothing measured
    assert "skip: copy torch_pinned glibc gpu random: torch sees no GPU here" in done.stdout
    assert "skip: hourglass torch eager glibc gpu: torch sees no GPU here" in done.stdout
    assert re.search(r"skip: hourglass tensorflow \S+ glibc gpu: no TensorFlow GPU build",
                     done.stdout)
    assert "0 ran, 0 failed" in done.stdout and "no config.yaml written" in done.stdout
    assert not (tmp_path / "results" / "runs").exists()


def test_gpu_results_build_tables_and_figures(tiny_run, tmp_path):
    """What a GPU run writes, aggregated where there is no GPU: CPU runs of this machine (the
    tiny run's PyTorch ones) relabelled as GPU runs (a test fixture, never a result) go
    through the table, summary and figure rules: the GPU's limit comes from memcpy_pinned,
    the GPU round trips get their own panels, float32 steps on the GPU are compared with
    TF32's peak, and each device's hourglass rows get their own rungs."""
    import shutil

    results = tmp_path / "results"
    config = load_yaml(TINY)
    config.update(results=str(results), environments={"glibc": {}})
    config["copy"].update(frameworks=["torch"], environments=["glibc"],
                          limit={"frameworks": ["copyto"], "environments": ["glibc"]})
    config["hourglass"].pop("tensorflow")
    wanted = ["copy/torch/glibc/", "copy/torch/glibc.twin/", "copy/copyto/glibc/", "faults/",
              "hourglass/torch/", "peak/"]
    for path in (tiny_run[0] / "results" / "runs").rglob("*.json.gz"):
        relative = path.relative_to(tiny_run[0] / "results" / "runs")
        if any(str(relative).startswith(w) for w in wanted):
            (results / "runs" / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(path, results / "runs" / relative)
    shutil.copytree(tiny_run[0] / "results/traces/hourglass/torch",
                    results / "traces/hourglass/torch")
    fake_gpu = [{"name": "test fixture GPU", "driver": "0"}]
    relabel = {"torch": ["torch", "torch_pinned"], "copyto": ["memcpy_pinned"]}
    gpu_peaks = {"float32": 1.0, "tf32": 2.0, "bfloat16": 4.0}  # GFLOP/s, by the samples below
    for path in list((results / "runs").rglob("*.json.gz")):
        run = load_result(path)
        run["machine"]["gpus"] = fake_gpu
        labels = dict(run["labels"])
        names = relabel.get(labels.get("framework"), []) if run["experiment"] == "copy" else [None]
        for name in names:
            new = {**labels, "device": "gpu", **({"framework": name} if name else {})}
            gpu_run = {**run, "device": "gpu", "labels": [[k, v] for k, v in new.items()],
                       "configuration": "/".join(new.values())}
            if run["experiment"] == "peak":
                gpu_run["order"] = list(gpu_peaks)
                gpu_run["cases"] = {p: {"position": i, "first_seconds": 1.0, "info": {
                    "library": "torch", "precision": p, "n": 1000, "flops": 2e9 * g},
                    "samples": {**run["cases"]["torch"]["samples"], "seconds": [2.0]}}
                    for i, (p, g) in enumerate(gpu_peaks.items())}
            target = results / "runs" / run["experiment"] / gpu_run["configuration"] / path.name
            target.parent.mkdir(parents=True, exist_ok=True)
            write_json(target, gpu_run)
    (results / "traces/hourglass/torch/eager/glibc/gpu").mkdir(parents=True)
    for trace in (results / "traces/hourglass/torch/eager/glibc/cpu").iterdir():
        (results / "traces/hourglass/torch/eager/glibc/gpu" / trace.name).write_text(
            trace.read_text())
    config["copy"].update(frameworks=["torch", "torch_pinned"], devices=["cpu", "gpu"],
                          limit={"frameworks": ["copyto", "memcpy_pinned"],
                                 "environments": ["glibc"]})
    config["hourglass"]["devices"] = ["cpu", "gpu"]
    configfile = write_config(tmp_path, config, "gpu.yaml")
    # the GPU's evidence would need a GPU: these rules only aggregate
    aggregated = subprocess.run(
        workflow.command(configfile, directory=tmp_path, aggregate_only=True, extra=[
            "--", *[results / f for f in ("figures/copy_step.png", "figures/hourglass_ladder.png",
                                          "figures/hourglass_gap.png", "tables/summary.csv")]]),
        capture_output=True, text=True, cwd=tmp_path)
    assert aggregated.returncode == 0, aggregated.stdout[-3000:] + aggregated.stderr[-3000:]
    copy_table = pd.read_csv(results / "tables" / "copy.csv")
    gpu = copy_table[copy_table["device"] == "gpu"]
    assert set(gpu["framework"]) == {"torch", "torch_pinned", "memcpy_pinned"}
    assert set(gpu["limit_source"]) == {"memcpy_pinned/glibc"}
    assert set(copy_table[copy_table["device"] == "cpu"]["limit_source"]) == {"copyto/glibc"}
    assert set(gpu["gpu"]) == {"test fixture GPU (driver 0)"}
    steps = pd.read_csv(results / "tables" / "hourglass.csv")
    gpu_steps = steps[steps["device"] == "gpu"]
    assert set(gpu_steps["peak_precision"]) == {"tf32"} and (gpu_steps["peak_gflops"] == 2).all()
    assert set(steps[steps["device"] == "cpu"]["peak_precision"]) == {"float32"}
    # two devices: one block of rungs each, labelled with its device
    assert set(steps["label"]) == {f"[{d}] torch {v}" for d in ("cpu", "gpu")
                                   for v in ("eager", "eager (A/A twin)")}
    assert steps.groupby("label")["rung"].nunique().eq(1).all() and steps["rung"].nunique() == 4
    assert (results / "figures" / "hourglass_gap.png").stat().st_size > 10_000  # per device
    summary = pd.read_csv(results / "tables" / "summary.csv")
    assert {"cpu", "gpu"} <= set(summary["device"])
    assert (results / "figures" / "copy_step.png").stat().st_size > 10_000


def test_the_measured_config_lists_exactly_what_is_missing_and_validates(tmp_path):
    """A node that ran everything it was asked: the config it writes validates, lists nothing
    under not_measured, and the workflow then expects exactly the files that are there."""
    from knobs import config_check, experiments

    results = tmp_path / "results"
    config = small_config(results)
    del config["hourglass"]  # the copy step's processes are enough, and quicker
    configfile = write_config(tmp_path, config)
    done = run_without_snakemake("--configfile", configfile, "--devices", "cpu", "--python", PYTHON,
                     env={"PYTHONPATH": str(tmp_path / "none")})
    assert done.returncode == 0, done.stdout + done.stderr
    measured = config_check.fill_defaults(load_yaml(results / "config.yaml"))
    config_check.check_schema(measured)
    expected = {job.run(str(results)) for job in experiments.jobs(measured)}
    present = {str(p) for p in (results / "runs").rglob("*.json.gz")}
    assert expected == present and measured["not_measured"] == []


def test_what_another_device_would_measure_is_listed_as_not_measured(tmp_path):
    """Asked for the CPU only, the node lists the GPU's runs and the GPU-only framework's
    evidence under not_measured, so that `make paper` expects neither."""
    results = tmp_path / "results"
    config = small_config(results)
    del config["hourglass"]  # the copy step's devices are the subject
    config["copy"].update(frameworks=["numpy", "torch_pinned"], devices=["cpu", "gpu"],
                          limit={"frameworks": ["copyto", "memcpy_pinned"],
                                 "environments": ["glibc"]})
    done = run_without_snakemake("--configfile", write_config(tmp_path, config), "--devices", "cpu",
                     "--python", PYTHON)
    assert done.returncode == 0, done.stdout + done.stderr
    missing = load_yaml(results / "config.yaml")["not_measured"]
    assert "evidence/copy/torch_pinned.txt" in missing
    assert "runs/copy/torch_pinned/glibc/gpu/random/rep0.json.gz" in missing
    assert not any("numpy" in path for path in missing)


def test_a_module_only_on_this_shells_pythonpath_is_not_there_for_the_jobs(tmp_path, monkeypatch):
    # The measured processes inherit an allowlist and the config's pass_env, not PYTHONPATH:
    # a module found only through it would fail every job, so the probe says so up front.
    (tmp_path / "only_on_pythonpath.py").write_text("__version__ = '1.0'\n")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    monkeypatch.syspath_prepend(str(tmp_path))  # as PYTHONPATH puts it on run_without_snakemake's own path
    import run_without_snakemake

    missing = run_without_snakemake.probe(str(PYTHON), {"only_on_pythonpath"})["only_on_pythonpath"]
    assert "ModuleNotFoundError" in missing["error"]
    assert "add PYTHONPATH to the config's pass_env" in missing["hint"]
    passed = run_without_snakemake.probe(str(PYTHON), {"only_on_pythonpath"}, pass_env=["PYTHONPATH"])
    assert passed["only_on_pythonpath"] == {"version": "1.0"}
    nowhere = run_without_snakemake.probe(str(PYTHON), {"knobs_missing_everywhere"})
    assert "hint" not in nowhere["knobs_missing_everywhere"]  # no fix to name there
