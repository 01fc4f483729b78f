"""A run's time budget (knobs/budget.py, scripts/run.py): its fewest rounds measured as the
calibration, then as many more as their times say fit, said and recorded."""

import subprocess

import pandas as pd
import pytest
import yaml

from conftest import PYTHON, REPO, write_config

from knobs import budget

# Two rounds measured: 300 s by the clock, their processes 240 s of it (a share of 1.25); the
# first paid for warming caches, so the second's 40 s per experiment (50 s on the clock) is
# what a later round costs. `slow` has 3 rounds at most, `quick` 5.
MEASURED = 300.0
SPENT = [{"slow": 80.0, "quick": 80.0}, {"slow": 40.0, "quick": 40.0}]
REPS = {"slow": 3, "quick": 5}


@pytest.mark.parametrize("minutes, rounds, seconds", [
    (7, 3, 400),  # round 3 holds both: 100 s
    (7.5, 4, 450),  # rounds 4 and 5 hold `quick` alone: 50 s each
    (9, 5, 500),
    (100, 5, 500),  # never past the most reps
    (1, 2, 300),  # never fewer than the rounds measured, though over the budget
])
def test_rounds_that_fit_the_budget(minutes, rounds, seconds):
    assert budget.rounds_that_fit(MEASURED, SPENT, REPS, minutes) == (rounds, seconds)


def test_rounds_measured_before_cost_what_their_processes_took():
    # nothing to measure now (2 s of Snakemake): a round still costs its processes' 80 s
    assert budget.rounds_that_fit(2.0, SPENT, REPS, 5.5) == (3, 320)


BENCHMARK = '''
import numpy as np


class Benchmark:
    def __init__(self, params, device, seed):
        self.a = np.random.default_rng(seed).random(1000)

    def setup(self, case):
        return lambda: float(self.a.sum())
'''


def make_run(config):
    return subprocess.run([str(PYTHON), str(REPO / "scripts" / "run.py"), str(config)],
                          capture_output=True, text=True, cwd=REPO)


def test_a_run_under_a_budget_measures_the_rounds_that_fit_and_keeps_them(tmp_path):
    (tmp_path / "tiny.py").write_text(BENCHMARK)
    config = write_config(tmp_path, {
        "results": str(tmp_path / "results"), "budget": {"minutes": 0.01, "fewest_rounds": 2},
        "benchmarks": {"tiny": {"module": str(tmp_path / "tiny.py"), "runtime": "numpy",
                                "environments": ["glibc"], "reps": 6, "samples": 3}}})
    done = make_run(config)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    said = "budget 0.01 min of measuring: the first 2 round(s) took"
    assert said in done.stdout and "so 2 round(s) of at most 6" in done.stdout
    assert "(over the budget: the fewest rounds it allows)" in done.stdout
    results = tmp_path / "results"
    runs = sorted(p.name for p in (results / "runs" / "tiny" / "glibc" / "cpu").iterdir())
    assert runs == ["rep0.json.gz", "rep1.json.gz"]  # two rounds of six
    chosen = (results / budget.ROUNDS_FILE).read_text()
    assert chosen.startswith(f"# {said}")
    assert yaml.safe_load(chosen) == {"budget": {"minutes": 0.01, "fewest_rounds": 2},
                                      "rounds": 2}
    assert yaml.safe_load((results / "config_used.yaml").read_text())["rounds"] == 2
    summary = pd.read_csv(results / "tables" / "summary.csv")
    assert set(summary["processes"]) == {2}
    again = make_run(config)  # the same budget: the same rounds, nothing measured
    assert again.returncode == 0 and "2 round(s), as chosen before" in again.stdout
    assert "benchmark_run" not in again.stdout + again.stderr
