"""The tiny end-to-end run: two frameworks, environments, batches -> table, figure, report."""

import re
import sys
from pathlib import Path

import pandas as pd
import pytest

from conftest import (AGGREGATING_RULES, REPO, SNAKEFMT, TINY, dry_run, load_yaml, snakemake,
                      write_config)
from knobs import results, workflow


def test_tiny_run_writes_the_tidy_table(tiny_run):
    workdir, _ = tiny_run
    config = load_yaml(TINY)["copy"]
    table = pd.read_csv(workdir / "results/tables/copy.csv")
    for column in ["experiment", "framework", "environment", "device", "batch", "input",
                   "rep", "sample", "seconds", "minor_faults", "bytes", "gbps",
                   "limit_gbps", "host", "cpu", "framework_version", "glibc", "thp_enabled",
                   "cpu_seconds", "major_faults", "voluntary_switches", "involuntary_switches",
                   "knob_proofs", "other_cpus", "steal_share", "disturbed", "machine_kind"]:
        assert column in table.columns, column
    runs = table.groupby(["framework", "environment", "batch", "rep"]).size()
    assert (runs == config["calls"]).all()
    # the grid asked for, each baseline's A/A twin, and the copy-limit references
    expected = {(f, e) for f in config["frameworks"] for e in config["environments"]
                if f in load_yaml(TINY)["environments"][e].get("frameworks", [f])}
    expected |= {(f, "glibc.twin") for f in config["frameworks"]}
    expected |= {(f, e) for f in ["copyto", "numpy"] for e in ["glibc", "tcmalloc"]}
    assert set(map(tuple, table[["framework", "environment"]].drop_duplicates().values)) == expected
    assert (table["cpu_seconds"] >= 0).all() and table["other_cpus"].notna().all()
    assert set(table["batch"]) == set(config["batches"])
    assert table["limit_gbps"].notna().all()
    # written to 6 significant digits
    assert (table["gbps"] * table["seconds"] * 1e9 / table["bytes"] - 1).abs().max() < 2e-5
    tcmalloc = table[table["environment"] == "tcmalloc"]
    assert tcmalloc["preloads"].str.contains("libtcmalloc").all()
    assert (tcmalloc["knob_proofs"] == "libtcmalloc.so.4=effect").all()
    quoting = table[table["environment"] == "quoting"]
    assert (quoting["knob_proofs"] == "KNOBS_PROBE=presence").all()


def test_quoted_environment_value_runs_nothing_and_arrives_whole(tiny_run):
    workdir, _ = tiny_run
    assert not list(workdir.rglob("PWNED*")) and not list(REPO.rglob("PWNED*"))
    run = results.load(next((workdir / "results/runs/copy/numpy/quoting").rglob("*.json.gz")))
    value = load_yaml(TINY)["environments"]["quoting"]["env"]["KNOBS_PROBE"]
    assert run["knobs"]["set"]["KNOBS_PROBE"] == value == run["environ"]["KNOBS_PROBE"]


def test_figure_and_report(tiny_run):
    workdir, _ = tiny_run
    png = workdir / "results/figures/copy_step.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 20_000
    assert (workdir / "results/figures/copy_step.svg").stat().st_size > 20_000
    snakemake(workdir, "--cores", "1", "--report", "results/report.html", configfile=TINY)
    html = (workdir / "results/report.html").read_text(errors="replace")
    assert "copy_step.png" in html and "The copy step" in html


def test_second_run_reruns_nothing(tiny_run):
    workdir, _ = tiny_run
    done = snakemake(workdir, "--cores", "1", "--dry-run", configfile=TINY)
    assert "Nothing to be done" in done.stdout + done.stderr


def test_lint_and_format_are_clean():
    lint = snakemake(REPO, "--lint", check=False)
    assert lint.returncode == 0 and "Lints for" not in lint.stdout, lint.stdout + lint.stderr
    import subprocess

    fmt = subprocess.run([str(SNAKEFMT), "--check", str(REPO)],
                         capture_output=True, text=True)
    assert fmt.returncode == 0, fmt.stderr


def test_tiny_hourglass_run_writes_tables_traces_and_figures(tiny_run):
    workdir, _ = tiny_run
    config = load_yaml(TINY)["hourglass"]
    steps = pd.read_csv(workdir / "results/tables/hourglass.csv")
    for column in ["framework", "variant", "environment", "device", "phase", "batch", "stacks",
                   "resolution", "params", "rep", "sample", "seconds", "flops", "gflops",
                   "peak_gflops", "fraction_of_peak", "label", "rung", "build_seconds",
                   "first_seconds", "process_to_first_step_seconds"]:
        assert column in steps.columns, column
    assert set(steps["phase"]) == {"forward", "train"}
    assert steps["params"].nunique() == 1  # the same network in both frameworks
    per_config = steps.groupby(["configuration", "phase"]).size()
    assert (per_config == config["steps"]).all() and len(per_config) == 2 * 4  # and the twin
    assert "torch eager (A/A twin)" in set(steps["label"])
    assert steps["peak_gflops"].gt(0).all() and steps["fraction_of_peak"].between(0, 1.5).all()
    assert set(pd.read_csv(workdir / "results/tables/peak.csv")["n"]) == {config["peak_size"]}
    ops = pd.read_csv(workdir / "results/tables/hourglass_ops.csv")
    convolution = ops[ops["category"] == "convolution"].groupby("framework")["seconds"].sum()
    assert set(convolution.index) == {"tensorflow", "torch"} and (convolution > 0).all()
    traces = list((workdir / "results/traces/hourglass").rglob("*.json"))
    assert len(traces) == 4 and all(t.stat().st_size > 1000 for t in traces)
    for figure in ["hourglass_ladder", "hourglass_ops"]:
        assert (workdir / f"results/figures/{figure}.png").stat().st_size > 20_000


def test_rerunning_one_configuration_touches_only_its_files_and_what_is_built_from_them(tiny_run):
    workdir, _ = tiny_run
    runs = sorted((workdir / "results/runs").rglob("*.json.gz"))
    built = [workdir / f"results/{p}" for p in ("tables/copy.csv", "figures/copy_step.png",
                                                 "tables/hourglass.csv")]
    before = {path: path.stat().st_mtime_ns for path in runs + built}
    target = workdir / "results/runs/copy/torch/tcmalloc/cpu/random/rep0.json.gz"
    # what depends on it, up to these two (the other figures would follow as well)
    snakemake(workdir, "--cores", "1", "results/tables/copy.csv", "results/figures/copy_step.png",
              "--forcerun", str(target.relative_to(workdir)), configfile=TINY)
    changed = {path for path in runs if path.stat().st_mtime_ns != before[path]}
    assert changed == {target}  # one process measured both batches of that configuration
    copy_table, copy_figure, hourglass_table = built
    assert copy_table.stat().st_mtime_ns > before[copy_table]
    assert copy_figure.stat().st_mtime_ns > before[copy_figure]
    assert hourglass_table.stat().st_mtime_ns == before[hourglass_table]  # other runs only


@pytest.mark.skipif(bool(__import__("knobs.machine").machine.gpus()),
                    reason="checks the machine without a GPU")
def test_gpu_jobs_on_a_machine_without_a_gpu_fail_before_any_job(tmp_path):
    """The plan dry-runs anywhere; a real run stops before its first job, naming the fix."""
    config = load_yaml(TINY)
    del config["hourglass"]
    config["copy"].update(frameworks=["numpy", "torch"], devices=["cpu", "gpu"],
                          limit={"frameworks": ["copyto", "memcpy_pinned"],
                                 "environments": ["glibc"]})
    configfile = write_config(tmp_path, config)
    dry_run(configfile, tmp_path)
    done = snakemake(tmp_path, "--cores", "1", configfile=configfile, check=False)
    assert done.returncode != 0
    message = done.stdout + done.stderr
    assert "need a GPU" in message and "nvidia-smi found no GPU" in message
    assert "scripts/run_without_snakemake.sh" in message
    assert not (tmp_path / "results").exists()


def test_one_function_builds_every_snakemake_command_line():
    """knobs/workflow.py alone spells Snakemake's program and its rule list: the scripts and
    tests call it (a second copy would drift: another lock, another set of rules)."""
    spelled = re.compile(r'"-m",\s*"snakemake"|bin" / "snakemake"|/ "snakemake"|'
                         r'"snakemake"\)|\[\s*"snakemake"|"--allowed-rules"|"--until"')
    where = [path.relative_to(REPO) for path in [*(REPO / "scripts").rglob("*.py"),
                                                 *(REPO / "tests").rglob("*.py")]
             if path.name != "workflow.py" and path != Path(__file__)
             and spelled.search(path.read_text())]
    assert where == []
    words = workflow.command("a.yaml", "b.yaml", aggregate_only=True, until=["table"])
    assert words[:3] == [sys.executable, "-m", "snakemake"]
    assert words[words.index("--allowed-rules") + 1:][:len(AGGREGATING_RULES)] == list(
        AGGREGATING_RULES)
    assert words[-3:] == ["--configfile", "a.yaml", "b.yaml"]  # before `extra`, nothing else
