"""The one runner: a benchmark of your own is one module and a config section. A toy written
into a temporary folder runs end to end through Snakemake under two environments, in rounds,
with every knob proven, its own counters per sample, a table, a figure and a summary."""

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml

from conftest import PYTHON, REPO, SCRIPTS, run_benchmark, snakemake, write_config
from knobs import disturbance, results

TOY = '''
import numpy as np


class Benchmark:
    """A toy of your own model: a matrix product and a sum, in the dtype the grid names."""

    cases = ["matmul", "sum"]

    def __init__(self, params, device, seed):
        rng = np.random.default_rng(seed)
        self.a = rng.random((params["n"], params["n"])).astype(params["dtype"])

    def setup(self, case):
        a = self.a
        return (lambda: a @ a) if case == "matmul" else (lambda: float(a.sum()))

    def evidence(self):
        return {"dtype": str(self.a.dtype)}
'''


@pytest.fixture(scope="module")
def toy_run(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("toy")
    (workdir / "benchmarks").mkdir()
    (workdir / "benchmarks" / "toy.py").write_text(TOY)
    config = {
        "environments": {"glibc": {}, "tuned": {"env": {
            "MALLOC_MMAP_THRESHOLD_": "1073741824", "MALLOC_TRIM_THRESHOLD_": "2147483648"},
            "require_effect": True}},
        "benchmarks": {"toy": {"module": "benchmarks/toy.py", "params": {"n": 64},
                               "grid": {"dtype": ["float32", "float64"]},
                               "environments": ["glibc", "tuned"], "baseline": "glibc",
                               "reps": 2, "warmup": 1, "samples": 5}},
    }
    done = snakemake(workdir, "--cores", "1", configfile=write_config(workdir, config))
    return workdir, done


def test_a_toy_benchmark_gets_rows_a_figure_and_a_summary(toy_run):
    workdir, _ = toy_run
    table = pd.read_csv(workdir / "results/tables/toy.csv")
    # 2 dtypes x (2 environments + glibc's A/A twin) x 2 processes x 2 cases x 5 samples
    assert len(table) == 2 * 3 * 2 * 2 * 5
    assert set(table["environment"]) == {"glibc", "tuned", "glibc.twin"}
    assert set(table["dtype"]) == {"float32", "float64"} and set(table["case"]) == {"matmul", "sum"}
    assert table.loc[table["case"] == "sum", "value"].notna().all()  # the step's number
    assert (table["cpu_seconds"] >= 0).all() and (table["minor_faults"] >= 0).all()
    figure = workdir / "results/figures/toy.png"
    assert figure.read_bytes()[:4] == b"\x89PNG" and figure.stat().st_size > 20_000
    summary = pd.read_csv(workdir / "results/tables/summary.csv")
    toy = summary[summary["experiment"] == "toy"]
    assert len(toy) == 2 * 3 * 2 and toy["verdict"].notna().all()
    assert (toy["processes"] == 2).all()


def test_every_result_proves_its_knobs_and_matches_the_schema(toy_run):
    workdir, _ = toy_run
    runs = sorted((workdir / "results/runs/toy").rglob("*.json.gz"))
    assert len(runs) == 2 * 3 * 2
    for path in runs:
        run = results.read(path)  # checked against config/result.schema.yaml
        assert run["format"] == results.FORMAT and run["status"] == "ok"
        assert run["evidence"]["dtype"] == dict(run["labels"])["dtype"]
        proofs = run["knobs"]["proofs"]
        if run["environment"] == "tuned":
            assert {k: p["proof"] for k, p in proofs.items()} == {
                "MALLOC_MMAP_THRESHOLD_": "effect", "MALLOC_TRIM_THRESHOLD_": "effect"}
        else:
            assert proofs == {} and "MALLOC_MMAP_THRESHOLD_" not in run["environ"]


@pytest.mark.parametrize("where, value, said", [
    ("seconds", -1.0, "less than the minimum of 0"),
    ("minor_faults", 2.5, "is not of type 'integer', 'null'"),
    ("cpu_seconds", "fast", "is not of type 'number', 'null'"),
])
def test_a_bad_sample_anywhere_in_a_result_is_refused(toy_run, tmp_path, where, value, said):
    """Each per-sample list is checked through the elements that stand for it (the least and
    the greatest of each type): a bad value is caught wherever it sits."""
    workdir, _ = toy_run
    run = results.load(next((workdir / "results/runs/toy").rglob("*.json.gz")))
    samples = run["cases"][run["order"][0]]["samples"][where]
    samples[len(samples) // 2] = value  # neither the first nor the last
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(run))
    with pytest.raises(results.ResultError, match=f"samples/{where}/\\(a sample\\): .*{said}"):
        results.read(bad)


def test_processes_run_in_rounds_in_a_shuffled_order(toy_run):
    """Rep k of every configuration runs before any rep k+1 (Snakemake orders the jobs by
    priority), and the order inside a round is not the configurations' own order."""
    workdir, _ = toy_run
    table = pd.read_csv(workdir / "results/tables/toy.csv")
    processes = table.drop_duplicates(["configuration", "rep"]).sort_values("started")
    assert list(processes["rep"]) == sorted(processes["rep"])
    first_round = list(processes[processes["rep"] == 0]["configuration"])
    assert first_round != sorted(first_round)


def test_editing_your_benchmark_reruns_its_measurements(toy_run):
    workdir, _ = toy_run
    config = workdir / "config.yaml"
    done = snakemake(workdir, "--cores", "1", "--dry-run", configfile=config)
    assert "Nothing to be done" in done.stdout + done.stderr
    module = workdir / "benchmarks" / "toy.py"
    module.write_text(module.read_text() + "\n")
    done = snakemake(workdir, "--cores", "1", "--dry-run", configfile=config)
    assert re.search(r"benchmark_run\s+12\b", done.stdout), done.stdout  # every run again


def test_a_result_of_another_format_is_refused_naming_the_fix(tmp_path):
    old = tmp_path / "set" / "runs" / "copy" / "x.json"
    old.parent.mkdir(parents=True)
    old.write_text(json.dumps({"experiment": "copy", "samples": {"seconds": [1.0]}}))
    with pytest.raises(results.ResultError, match="format-1 result.*convert_results.py"):
        results.read(old)
    done = subprocess.run([str(PYTHON), str(SCRIPTS / "convert_results.py"), "--check",
                           str(tmp_path / "set")], capture_output=True, text=True)
    assert done.returncode != 0 and "Convert them first" in done.stderr


def test_a_disturbed_process_is_measured_again_once_and_stays_flagged(tmp_path):
    """Another process keeps one of the two CPUs busy: the first attempt is flagged and
    measured again; the second, disturbed too, is kept with its reason and the first's."""
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(0.5)
        done, out = run_benchmark(tmp_path, "glibc", batches=(1024,), samples=400)
    finally:
        busy.kill()
    assert done.returncode == 0, done.stderr
    run = results.read(out, validate=False)
    process = run["process"]
    assert "other processes used" in process["disturbed"]
    assert len(process["previous_attempts"]) == 1
    assert "measuring again" in done.stderr


LEAVES_A_FILE = '''
import tempfile


class Benchmark:
    """Writes a temporary file meant to be deleted at exit, as TensorFlow's autograph does."""

    cases = ["noop"]

    def __init__(self, params, device, seed):
        with tempfile.NamedTemporaryFile(suffix=".py", delete=False) as handle:
            self.left = handle.name

    def setup(self, case):
        return lambda: None

    def evidence(self):
        return {"left": self.left}
'''


def test_the_measured_process_leaves_nothing_in_the_callers_temporary_folder(tmp_path):
    """It skips its teardown, so it writes into a temporary folder of its own, removed once
    it has ended."""
    benchmark, out, caller_tmp = tmp_path / "leaves.py", tmp_path / "run.json", tmp_path / "tmp"
    benchmark.write_text(LEAVES_A_FILE)
    caller_tmp.mkdir()
    done = subprocess.run(
        [str(PYTHON), str(SCRIPTS / "run_benchmark.py"), "--experiment", "toy", "--benchmark",
         str(benchmark), "--environment", "glibc", "--samples", "2", "--out", str(out)],
        capture_output=True, text=True, env={"PATH": "/usr/bin:/bin", "TMPDIR": str(caller_tmp)})
    assert done.returncode == 0, done.stderr
    left = results.read(out, validate=False)["evidence"]["left"]
    assert left.startswith(str(caller_tmp / "knobs-measured-"))  # the process's own folder
    assert not Path(left).exists() and list(caller_tmp.iterdir()) == []


@pytest.mark.parametrize("record,flagged", [
    ({"other_cpus": 0.02, "other_cpu_seconds": 0.2}, None),
    ({"other_cpus": 0.9, "other_cpu_seconds": 2.0}, "other processes used 0.90 CPUs"),
    ({"other_cpus": 0.4, "other_cpu_seconds": 0.02}, None),  # two stray ticks, a short process
    ({"steal_share": 0.2, "steal_seconds": 1.0}, "the hypervisor stole 20.0%"),
])
def test_disturbance_verdict(record, flagged):
    quiet = {"other_cpus": 0.0, "other_cpu_seconds": 0.0, "steal_share": 0.0, "steal_seconds": 0}
    verdict = disturbance.verdict({**quiet, **record})
    assert verdict is None if flagged is None else flagged in verdict


def test_the_benchmark_interface_is_documented_and_the_finder_names_what_it_knows():
    from knobs import benchmarks, finder

    for word in ("def __init__(self, params, device, seed)", "def setup(self, case)",
                 "cases", "def evidence(self)", "def trace(self, path)", "Unavailable"):
        assert word in benchmarks.__doc__
    with pytest.raises(FileNotFoundError, match="by name: copy, faults, hourglass, peak"):
        finder.load("nowhere.py")


def test_a_benchmark_may_watch_its_warm_up_calls_but_not_the_first_or_the_timed_ones():
    from knobs.runner import measure

    calls, watched = [], []
    step = lambda: calls.append(len(calls))  # noqa: E731
    record = measure(step, 3, 4, warm=lambda s: watched.append(s()))
    assert len(calls) == 7 and len(watched) == 2  # calls 2 and 3 of the warm-up
    assert len(record["samples"]["seconds"]) == 4


def test_replicate_runs_a_config_twice_into_one_set_and_compares_them(tmp_path):
    """scripts/replicate.py: INTO and INTO/second, each with its config pointed there (a
    config without `results:` gets one), both runs' times, the comparison; never over runs."""
    (tmp_path / "benchmarks").mkdir()
    (tmp_path / "benchmarks" / "toy.py").write_text(TOY)
    config = tmp_path / "toy.yaml"
    config.write_text("# my toy\n" + yaml.safe_dump({
        "environments": {"glibc": {}},
        "benchmarks": {"toy": {"module": "benchmarks/toy.py",
                               "params": {"n": 32, "dtype": "float32"},
                               "environments": ["glibc"], "baseline": "glibc",
                               "reps": 2, "warmup": 1, "samples": 3}}}))
    command = [str(PYTHON), str(SCRIPTS / "replicate.py"), str(config), "set", "--",
               "-s", str(REPO / "Snakefile")]
    done = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    for folder in ("set", "set/second"):
        written = (tmp_path / folder / "config.yaml").read_text()
        assert written.startswith("# my toy\n") and yaml.safe_load(written)["results"] == folder
        runs = tmp_path / folder / "runs" / "toy" / "glibc" / "cpu"
        assert (runs / "rep0.json.gz").exists() and (runs / "rep1.json.gz").exists()
    times = pd.read_csv(tmp_path / "set" / "run_times.csv")
    assert list(times["run"]) == ["set", "set/second"] and (times["seconds"] >= 0).all()
    assert (tmp_path / "set" / "aa" / "comparison.csv").exists()
    assert "toy" in (tmp_path / "set" / "aa" / "compare.txt").read_text()
    again = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path)
    assert again.returncode != 0 and "set holds files already" in again.stderr
