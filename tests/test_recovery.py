"""Interrupted or damaged, the same command recovers (scripts/run.py, knobs/recovery.py): a run
whose Snakemake was killed, a result file cut short, a measured process that kills itself.
Each runs a tiny NumPy benchmark of the test's own through `make run`'s script."""

import gzip
import json
import os
import shutil
import signal
import subprocess
import time

import pandas as pd
import pytest

from conftest import PYTHON, REPO, write_config

from knobs import recovery, results

BENCHMARK = '''
import os, signal, time
import numpy as np


class Benchmark:
    """A sum over a random array. `hold` (a folder): every process but the first waits until
    the test writes `release` there (a kill lands while a process runs, however slow the
    machine); `die_in_rep`: that process kills itself as the out-of-memory killer would kill
    it; `fail_in_rep`: that one raises."""

    def __init__(self, params, device, seed):
        if "hold" in params:
            hold = params["hold"]
            open(os.path.join(hold, f"started.{os.getpid()}"), "w").close()
            started = [n for n in os.listdir(hold) if n.startswith("started.")]
            while len(started) > 1 and not os.path.exists(os.path.join(hold, "release")):
                time.sleep(0.05)
        if params.get("die_in_rep") == seed:
            os.kill(os.getpid(), signal.SIGKILL)
        if params.get("fail_in_rep") == seed:
            raise RuntimeError("out of ideas")
        self.a = np.random.default_rng(seed).random(params["size"])

    def setup(self, case):
        return lambda: float(self.a.sum())
'''


def config_of(tmp_path, reps=3, **params):
    if not (tmp_path / "tiny_sum.py").exists():  # a copied set's module keeps its time
        (tmp_path / "tiny_sum.py").write_text(BENCHMARK)
    return write_config(tmp_path, {"results": str(tmp_path / "results"), "benchmarks": {
        "tiny_sum": {"module": str(tmp_path / "tiny_sum.py"), "runtime": "numpy",
                     "params": {"size": 1000, **params}, "environments": ["glibc"],
                     "reps": reps, "warmup": 1, "samples": 3}}})


def make_run(config, *words, **kwargs):
    """`make run CONFIG=...` (`words`: `--report-only` for `make report`), as the Makefile runs
    it (from the repository)."""
    return subprocess.run([str(PYTHON), str(REPO / "scripts" / "run.py"), str(config), *words],
                          capture_output=True, text=True, cwd=REPO, **kwargs)


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """A finished run of two processes, made once: each test copies it (times kept, as a
    cloned set has them) rather than measuring its own."""
    folder = tmp_path_factory.mktemp("finished")
    assert make_run(config_of(folder, reps=2)).returncode == 0
    return folder


def copy_of(finished, tmp_path):
    shutil.copytree(finished, tmp_path, dirs_exist_ok=True)
    return config_of(tmp_path, reps=2)


def run_files(tmp_path):
    return {p: p.stat().st_mtime_ns for p in (tmp_path / "results" / "runs").rglob("*.json.gz")}


def test_a_run_killed_with_sigkill_recovers_with_the_same_command(tmp_path):
    hold = tmp_path / "hold"
    hold.mkdir()
    config = config_of(tmp_path, reps=2, hold=str(hold))
    started = subprocess.Popen([str(PYTHON), str(REPO / "scripts" / "run.py"), str(config)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=REPO)
    results_dir = str(tmp_path / "results")
    deadline = time.time() + 120

    def running():
        return recovery.running_on(results_dir, workdir=REPO)

    # Snakemake killed while a measured process runs, after one has finished
    while time.time() < deadline and not (run_files(tmp_path) and any(
            what == "a measured process" for _, what, _ in running())):
        time.sleep(0.1)
    snakemake = [pid for pid, what, _ in running() if what == "Snakemake"]
    assert snakemake, "no Snakemake process to kill"
    os.kill(snakemake[0], signal.SIGKILL)
    assert started.wait(timeout=30) == 128 + signal.SIGKILL  # said as a shell says it
    assert not (tmp_path / "results" / "not_measured.yaml").exists()  # nothing called failed
    # its measured process goes on: the same command names it and starts nothing
    refused = make_run(config)
    assert refused.returncode != 0
    assert "a measured process (pid" in refused.stderr and "still running on it" in refused.stderr
    (hold / "release").touch()
    while running() and time.time() < deadline:
        time.sleep(0.2)
    before = run_files(tmp_path)
    done = make_run(config)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "removed the lock an interrupted run left" in done.stdout
    # what finished after Snakemake died is kept, though Snakemake had marked it incomplete
    assert "kept 1 result(s) that finished after their run was interrupted" in done.stdout
    after = run_files(tmp_path)
    assert len(after) == 4 and (tmp_path / "results" / "report.html").exists()
    assert {p: after[p] for p in before} == before  # nothing measured is measured again


def test_a_cut_short_result_is_named_kept_aside_and_its_process_alone_measured_again(
        finished, tmp_path):
    config = copy_of(finished, tmp_path)
    files = run_files(tmp_path)
    cut = sorted(files)[0]
    text = cut.read_bytes()
    cut.write_bytes(text[:len(text) // 2])
    with pytest.raises(results.DamagedResult) as error:  # as the tables read it: one line
        results.read(cut)
    assert str(error.value).startswith(f"{cut}: damaged result file: cut short")
    assert "\n" not in str(error.value) and f"{cut.name}.damaged" in str(error.value)
    done = make_run(config)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert f"{cut}: damaged result file (cut short" in done.stdout
    assert (cut.parent / f"{cut.name}.damaged").read_bytes() == text[:len(text) // 2]
    after = run_files(tmp_path)
    assert after[cut] != files[cut] and results.read(cut)["format"] == results.FORMAT
    assert {p: t for p, t in after.items() if p != cut} == {
        p: t for p, t in files.items() if p != cut}


def test_a_set_written_before_runs_were_compressed_is_compressed_and_nothing_measured_again(
        finished, tmp_path):
    config = copy_of(finished, tmp_path)
    packed = run_files(tmp_path)
    contents = {path: gzip.decompress(path.read_bytes()) for path in packed}
    for path, text in contents.items():  # the layout of a set before this change
        plain = path.with_name(path.name.removesuffix(".gz"))
        plain.write_bytes(text)
        os.utime(plain, ns=(packed[path], packed[path]))
        path.unlink()
    done = make_run(config)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert f"compressed {len(packed)} run file(s)" in done.stdout
    assert "benchmark_run" not in done.stdout + done.stderr  # nothing measured again
    assert run_files(tmp_path) == packed  # each file where it was, with its time
    assert {path: gzip.decompress(path.read_bytes()) for path in packed} == contents


def test_the_report_alone_is_written_from_what_is_there_and_measures_nothing(finished, tmp_path):
    """`make report`: the one path left that makes the report without a run (a run makes it
    as it ends)."""
    config = copy_of(finished, tmp_path)
    report = tmp_path / "results" / "report.html"
    report.unlink()
    files = run_files(tmp_path)
    done = make_run(config, "--report-only")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "tiny_sum" in report.read_text(errors="replace")
    assert "benchmark_run" not in done.stdout + done.stderr and run_files(tmp_path) == files


def test_a_gzip_result_cut_short_or_not_gzip_inside_is_named(tmp_path):
    path = tmp_path / "rep0.json.gz"
    results.write_json(path, {"format": 2, "cases": {}})
    whole = path.read_bytes()
    assert gzip.decompress(whole).startswith(b'{\n "cases"')  # one value per line, inside
    path.write_bytes(whole[:len(whole) - 4])
    assert recovery.damage_of(path).startswith("cut short")
    path.write_bytes(whole[:2] + b"not deflate at all")
    assert recovery.damage_of(path).startswith("not a whole gzip file")


@pytest.mark.parametrize("text, what", [
    ("<html>disk quota exceeded</html>\n", "not JSON"),
    ('{\n "format": 2,\n "cases": {}\n}\n}\n', "not JSON"),  # something after the object
    ('{\n "format": 2,\n "seconds": [\n  0.25,\n  1.', "cut short"),  # inside a number
    ('{\n "format": 2,\n "reason": "a lo', "cut short"),  # inside a string
    (json.dumps({"format": 2, "cases": "none"}), "does not match"),
])
def test_not_json_cut_short_and_not_the_schema_each_named(tmp_path, text, what):
    path = tmp_path / "rep0.json"
    path.write_text(text)
    with pytest.raises(results.DamagedResult, match=what):
        results.read(path)
    assert recovery.damage_of(path).startswith(what)


def test_a_second_run_started_at_once_on_the_same_set_stops_naming_the_first(tmp_path):
    config = config_of(tmp_path)
    with recovery.alone_on(str(tmp_path / "results")):
        done = make_run(config)
    assert done.returncode != 0 and "another run of this workflow works on it" in done.stderr
    assert not (tmp_path / "results" / "runs").exists()


def test_a_measured_process_that_dies_is_named_with_its_signal_and_listed_missing(tmp_path):
    config = config_of(tmp_path, reps=4, die_in_rep=1, fail_in_rep=2)
    done = make_run(config)
    assert done.returncode == 1  # a process is missing: said, not hidden
    said = "the measured process was killed by SIGKILL (signal 9"
    assert f"runs/tiny_sum/glibc/cpu/rep1.json.gz: {said}" in done.stdout
    assert "runs/tiny_sum/glibc/cpu/rep2.json.gz: RuntimeError: out of ideas" in done.stdout
    missing = pd.read_csv(tmp_path / "results" / "tables" / "not_measured.csv")
    why = dict(zip(missing["run"], missing["reason"]))
    assert set(why) == {  # reps 1 and 2 of the baseline and of its A/A twin
        f"runs/tiny_sum/{environment}/cpu/rep{rep}.json.gz"
        for environment in ("glibc", "glibc.twin") for rep in (1, 2)}
    assert all(why[run].startswith(said) for run in why if run.endswith("rep1.json.gz"))
    assert all(why[run] == "RuntimeError: out of ideas" for run in why if run.endswith("rep2.json.gz"))
    summary = pd.read_csv(tmp_path / "results" / "tables" / "summary.csv")
    assert dict(zip(summary["environment"], summary["processes"])) == {  # the others went on
        "glibc": 2, "glibc.twin": 2}
    assert "not_measured.csv" in (tmp_path / "results" / "report.html").read_text()
    # the next run measures it again (it dies again: still listed, nothing else remeasured)
    files = run_files(tmp_path)
    again = make_run(config)
    assert again.returncode == 1 and said in again.stdout
    assert run_files(tmp_path) == files


def test_the_signal_line_names_what_most_often_sends_it():
    import run_benchmark  # beside knobs/

    assert "out-of-memory killer" in run_benchmark.death(signal.SIGKILL)
    assert run_benchmark.death(signal.SIGSEGV).startswith(
        "the measured process was killed by SIGSEGV (signal 11: a crash")
    assert "SIGUSR1 (signal 10)" in run_benchmark.death(signal.SIGUSR1)
