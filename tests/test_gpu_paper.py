"""scripts/gpu_paper.sh: a node without Snakemake runs the same commands the rules would,
skips with a reason what it cannot run, and writes a config of what it measured, which the
workflow then aggregates without running anything."""

import os
import re
import subprocess

import pandas as pd
import pytest

from conftest import PYTHON, REPO, SNAKEMAKE, load_yaml, snakemake, write_config
from knobs import machine

GPU_PAPER = REPO / "scripts" / "gpu_paper.sh"
AGGREGATE = ["copy_table", "hourglass_table", "summary_table", "report_config",
             "figures_copy", "figures_hourglass", "all"]


def small_config(results):
    return {
        "results": str(results),
        "environments": {"glibc": {}, "quoting": {"env": {"KNOBS_PROBE": "a b; $(x)"}}},
        "copy": {"frameworks": ["numpy"], "environments": ["glibc", "quoting"],
                 "batches": [1, 2], "image": [3, 16, 16], "reps": 1, "warmup": 1, "calls": 3,
                 "limit": {"frameworks": ["copyto"], "environments": ["glibc"]}},
        "hourglass": {"stacks": 1, "resolution": 64, "batch": 2, "features": 16, "joints": 4,
                      "reps": 1, "warmup": 1, "steps": 2, "threads": 1,
                      "tensorflow": {"seed": {"execution": "function", "input": "resident",
                                              "batch_norm": "fused", "data_format": "NHWC",
                                              "environment": "glibc"}},
                      "torch": {"variants": ["eager"]}},
    }


def gpu_paper(*args, env=None):
    return subprocess.run([str(GPU_PAPER), *map(str, args)], capture_output=True, text=True,
                          env={**os.environ, "PYTHON": str(PYTHON), **(env or {})})


def test_it_runs_the_commands_the_rules_run(tmp_path):
    """Same interpreter, launcher, script, arguments and outputs, word for word."""
    configfile = write_config(tmp_path, small_config(tmp_path / "results"))
    done = snakemake(tmp_path, "-n", "-p", configfile=configfile)
    theirs = {line.removeprefix("Shell command: ").split(" > ")[0]
              for line in (done.stdout + done.stderr).splitlines()
              if re.search(r"(copy_run|hourglass_run|matmul_peak|copy_evidence)\.py", line)}
    ours = gpu_paper("--configfile", configfile, "--devices", "cpu", "--python", PYTHON,
                     "--dry-run")
    assert ours.returncode == 0, ours.stderr
    mine = {line.split(": ", 2)[2] for line in ours.stdout.splitlines()
            if line.startswith("would run: ")}
    assert len(theirs) == 6 and mine == theirs  # 3 copy (1 the limit), 1 peak, 2 hourglass


def test_what_the_node_cannot_run_is_skipped_and_the_rest_aggregates(tmp_path):
    """TensorFlow made unimportable: its job is skipped with the reason, everything else runs
    standalone, the config written describes what ran, and the workflow builds the tables
    and figures from it without running any benchmark."""
    results = tmp_path / "results"
    config = small_config(results)
    config["environments"]["absent"] = {"preload": ["libknobs_absent.so.1"]}
    config["copy"]["environments"].append("absent")
    configfile = write_config(tmp_path, config)
    poison = tmp_path / "poison"
    poison.mkdir()
    (poison / "tensorflow.py").write_text("raise ImportError('no TensorFlow on this node')\n")
    (poison / "jsonschema.py").write_text("raise ImportError('no jsonschema on this node')\n")
    done = gpu_paper("--configfile", configfile, "--devices", "cpu", "--python", PYTHON,
                     env={"PYTHONPATH": str(poison)})
    assert done.returncode == 0, done.stdout + done.stderr
    assert "jsonschema is not installed here" in done.stdout
    assert re.search(r"skip: hourglass tensorflow \S+ glibc cpu: tensorflow is not "
                     r"importable here \(ImportError: no TensorFlow on this node\)", done.stdout)
    assert "skip: copy numpy absent cpu random: libknobs_absent.so.1 is not installed here" \
        in done.stdout
    assert "5 ran, 0 failed, 2 skipped" in done.stdout  # 3 copy, 1 peak, 1 torch
    assert "left out of" in done.stdout and "copy.environments: absent" in done.stdout
    measured = load_yaml(results / "config.yaml")
    assert "tensorflow" not in measured["hourglass"] and "torch" in measured["hourglass"]
    assert measured["copy"]["environments"] == ["glibc", "quoting"]
    assert (results / "logs" / "hourglass_peak" / "cpu" / "rep0.log").exists()
    runs = sorted((results / "runs").rglob("*.json"))
    mtimes = {path: path.stat().st_mtime_ns for path in runs}

    aggregated = subprocess.run(
        [str(SNAKEMAKE), "-s", str(REPO / "Snakefile"), "--directory", str(tmp_path),
         "--configfile", str(results / "config.yaml"), "--cores", "1",
         "--allowed-rules", *AGGREGATE], capture_output=True, text=True, cwd=tmp_path)
    assert aggregated.returncode == 0, aggregated.stdout[-3000:] + aggregated.stderr[-3000:]
    assert set(re.findall(r"rule (\w+):", aggregated.stdout + aggregated.stderr)) <= set(AGGREGATE)
    assert all(path.stat().st_mtime_ns == t for path, t in mtimes.items())
    steps = pd.read_csv(results / "tables" / "hourglass.csv")
    assert set(steps["framework"]) == {"torch"}
    assert set(pd.read_csv(results / "tables" / "copy.csv")["environment"]) == {"glibc", "quoting"}
    assert (results / "figures" / "hourglass_ladder.png").stat().st_size > 10_000


@pytest.mark.skipif(bool(machine.gpus()), reason="checks the machine without a GPU")
def test_without_a_gpu_every_gpu_job_is_skipped_saying_so(tmp_path):
    config = small_config(tmp_path / "results")
    config["copy"].update(frameworks=["torch", "torch_pinned"], devices=["cpu", "gpu"],
                          limit={"frameworks": ["copyto", "memcpy_pinned"],
                                 "environments": ["glibc"]})
    config["hourglass"].update(devices=["gpu"])
    done = gpu_paper("--configfile", write_config(tmp_path, config), "--python", PYTHON)
    assert done.returncode == 1, done.stderr  # nothing measured
    assert "skip: copy torch_pinned glibc gpu random: torch sees no GPU here" in done.stdout
    assert "skip: hourglass torch eager glibc gpu: torch sees no GPU here" in done.stdout
    assert re.search(r"skip: hourglass tensorflow \S+ glibc gpu: no TensorFlow GPU build",
                     done.stdout)
    assert "0 ran, 0 failed" in done.stdout and "no config.yaml written" in done.stdout
    assert not (tmp_path / "results" / "runs").exists()


def test_gpu_results_build_tables_and_figures(tmp_path):
    """What a GPU run writes, aggregated where there is no GPU: CPU runs of this machine
    relabelled as GPU runs (a test fixture, never a result) go through the table, summary
    and figure rules: the GPU's limit comes from memcpy_pinned, the GPU round trips get
    their own panels, float32 steps on the GPU are compared with TF32's peak, and each
    device's hourglass rows get their own rungs."""
    import json

    results = tmp_path / "results"
    config = small_config(results)
    config["environments"] = {"glibc": {}}
    config["copy"].update(frameworks=["torch"], environments=["glibc"])
    config["hourglass"].pop("tensorflow")
    done = gpu_paper("--configfile", write_config(tmp_path, config), "--devices", "cpu",
                     "--python", PYTHON)
    assert done.returncode == 0, done.stdout + done.stderr
    fake_gpu = [{"name": "test fixture GPU", "driver": "0"}]
    relabel = {"torch": ["torch", "torch_pinned"], "copyto": ["memcpy_pinned"]}
    for path in list((results / "runs").rglob("*.json")):
        run = json.loads(path.read_text())
        run["machine"]["gpus"] = fake_gpu
        names = relabel.get(run["framework"], []) if run["experiment"] == "copy" else [None]
        for name in names:
            gpu_run = {**run, "device": "gpu", **({"framework": name} if name else {})}
            if run["experiment"] == "peak":
                gpu_run["peaks"] = {"float32": 1.0, "tf32": 2.0, "bfloat16": 4.0}
            parts = list(path.relative_to(results).parts)
            parts[parts.index("cpu")] = "gpu"
            if name:
                parts[2] = name
            target = results.joinpath(*parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(json.dumps(gpu_run))
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
        [str(SNAKEMAKE), "-s", str(REPO / "Snakefile"), "--directory", str(tmp_path),
         "--configfile", str(configfile), "--cores", "1", "--allowed-rules", *AGGREGATE,
         "--", *[str(results / f) for f in ("figures/copy_step.png",
                                            "figures/hourglass_ladder.png",
                                            "tables/summary.csv")]],
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
    assert set(steps["label"]) == {"[cpu] torch eager", "[gpu] torch eager"}
    assert steps.groupby("label")["rung"].nunique().eq(1).all() and steps["rung"].nunique() == 2
    summary = pd.read_csv(results / "tables" / "summary.csv")
    assert {"cpu", "gpu"} <= set(summary["device"])
    assert (results / "figures" / "copy_step.png").stat().st_size > 10_000


def test_the_measured_config_keeps_every_complete_configuration_and_validates():
    """config/paper.yaml on a node with no TensorFlow (first) and no tcmalloc (second): what
    ran stays, what did not goes, and the cut-down config is one the workflow accepts."""
    from knobs import config_check, jobs

    schema = REPO / "config" / "schema.yaml"
    paper = config_check.fill_defaults(load_yaml(REPO / "config" / "paper.yaml"), schema)

    def check(config):
        config_check.check_schema(config, schema)
        config_check.check_references(config, available_bytes=1 << 40)

    on_gpu = lambda path: re.search(r"/gpu/(b\d|rep)", path)  # the device part of a run's path
    no_tf = lambda path: on_gpu(path) and "tensorflow" not in path or "/evidence/" in path
    measured, dropped = jobs.measured_config(paper, no_tf)
    check(measured)
    copy = measured["copy"]
    assert copy["devices"] == ["gpu"] and copy["limit"]["frameworks"] == ["memcpy_pinned"]
    assert copy["frameworks"] == ["pytensor_jax", "torch", "torch_pinned", "torch_pinned_async"]
    assert "copy.frameworks: numpy (runs on no measured device)" in dropped
    assert "tensorflow" not in measured["hourglass"]
    assert measured["hourglass"]["torch"] == paper["hourglass"]["torch"]

    no_tcmalloc = lambda path: "tcmalloc" not in path
    measured, dropped = jobs.measured_config(paper, no_tcmalloc)
    check(measured)
    tf = measured["hourglass"]["tensorflow"]
    assert tf["ladder"] == paper["hourglass"]["tensorflow"]["ladder"][:-1]
    assert tf["ablate"] is False and tf["variations"] == [{"environment": "gpu_private"}]
    assert measured["copy"]["environments"] == ["glibc", "glibc_tuned"]
    assert measured["copy"]["limit"]["environments"] == ["glibc"]
    assert measured["copy"]["limit"]["frameworks"] == ["copyto", "numpy", "memcpy_pinned"]
