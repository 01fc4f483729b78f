"""More processes where verdicts are inconclusive: `more_reps` gives the named configurations
more processes (in rounds past the experiment's `reps`, nothing else changes), and
scripts/resolve.py asks for them for a verdict's configuration and the one it is compared
with."""

import subprocess

import pandas as pd
import yaml

from conftest import PYTHON, SCRIPTS, TINY, load_yaml
from knobs import experiments
from knobs.config_check import fill_defaults



def tiny(**extra):
    return fill_defaults({**load_yaml(TINY), **extra})


def test_more_reps_adds_processes_to_the_named_configuration_only():
    before = {job.run("r") for job in experiments.jobs(tiny())}
    more = tiny(more_reps={"copy/torch/tcmalloc/cpu/random": 3})
    after = {job.run("r") for job in experiments.jobs(more)}
    assert after - before == {f"r/runs/copy/torch/tcmalloc/cpu/random/rep{k}.json.gz"
                              for k in (1, 2)}
    assert before <= after
    # the added reps run in rounds of their own, after every configuration's first round
    order = experiments.schedule(experiments.jobs(more))
    first_round = max(order[run[1:]] for run in before)
    assert all(order[run[1:]] > first_round for run in after - before)


def _verdicts(rows):
    columns = ["experiment", "kind", "label", "configuration", "reference", "case", "ratio",
               "ratio_low", "ratio_high", "noise_floor", "verdict", "median", "processes",
               "processes_to_resolve"]
    return pd.DataFrame([dict(zip(columns, row)) for row in rows])


def test_resolve_asks_for_the_verdicts_processes_on_both_sides_within_the_limit(tmp_path):
    verdicts = _verdicts([
        # inconclusive, 6 would do: torch/tcmalloc and its baseline torch/glibc get 6
        ("copy", "vs baseline", "x", "torch/tcmalloc/cpu/random", "environment=glibc", 2,
         0.96, 0.92, 1.01, 0.05, "inconclusive", 1e-3, 1, 6),
        # the same configuration at another batch asks for 4: the larger stays
        ("copy", "vs baseline", "x", "torch/tcmalloc/cpu/random", "environment=glibc", 1,
         0.96, 0.92, 1.01, 0.05, "inconclusive", 1e-3, 1, 4),
        # more than the limit, and a ratio on the edge: left
        ("copy", "vs baseline", "x", "numpy/tcmalloc/cpu/random", "environment=glibc", 1,
         1.04, 0.9, 1.2, 0.05, "inconclusive", 1e-3, 1, 40),
        ("copy", "vs baseline", "x", "numpy/quoting/cpu/random", "environment=glibc", 1,
         1.05, 0.9, 1.2, 0.05, "inconclusive", 1e-3, 1, None),
        # resolved: nothing to do
        ("copy", "vs baseline", "x", "numpy/quoting/cpu/random", "environment=glibc", 2,
         0.5, 0.45, 0.55, 0.05, "faster", 1e-3, 1, 0),
        # a hourglass pair names its reference by path
        ("hourglass", "rung", "+ batch_norm=fused",
         "tensorflow/session-feed_dict-fused-NHWC/glibc/cpu",
         "tensorflow/session-feed_dict-unfused-NHWC/glibc/cpu", "train",
         1.03, 0.97, 1.1, 0.05, "inconclusive", 0.1, 1, 5),
    ])
    (tmp_path / "tables").mkdir()
    verdicts.to_csv(tmp_path / "tables" / "verdicts.csv", index=False)
    (tmp_path / "config_used.yaml").write_text(yaml.safe_dump(tiny()))
    done = subprocess.run([str(PYTHON), str(SCRIPTS / "resolve.py"), str(tmp_path), "--most", "12"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert yaml.safe_load(done.stdout) == {"more_reps": {
        "copy/torch/tcmalloc/cpu/random": 6, "copy/torch/glibc/cpu/random": 6,
        "hourglass/tensorflow/session-feed_dict-fused-NHWC/glibc/cpu": 5,
        "hourglass/tensorflow/session-feed_dict-unfused-NHWC/glibc/cpu": 5}}
    assert "5 inconclusive verdicts; 3 would take at most 12" in done.stderr
    # what it printed is a config the workflow takes
    experiments.jobs(tiny(**yaml.safe_load(done.stdout)))


def test_resolve_names_what_is_missing(tmp_path):
    done = subprocess.run([str(PYTHON), str(SCRIPTS / "resolve.py"), str(tmp_path)],
                          capture_output=True, text=True)
    assert done.returncode != 0 and "make run" in done.stderr


def test_resolve_within_minutes_takes_the_cheapest_verdicts_and_leaves_the_rest(tmp_path):
    """Each process is counted at its configuration's median wall time in the tables: with
    3 minutes, torch's pair (5 more processes each, 10 s a process: 100 s) fits, numpy's
    (7 more each: 140 s more) would not, whatever order the verdicts come in."""
    verdicts = _verdicts([
        ("copy", "vs baseline", "x", "numpy/tcmalloc/cpu/random", "environment=glibc", 1,
         0.96, 0.92, 1.01, 0.05, "inconclusive", 1e-3, 1, 8),
        ("copy", "vs baseline", "x", "torch/tcmalloc/cpu/random", "environment=glibc", 1,
         0.96, 0.92, 1.01, 0.05, "inconclusive", 1e-3, 1, 6),
    ])
    (tmp_path / "tables").mkdir()
    verdicts.to_csv(tmp_path / "tables" / "verdicts.csv", index=False)
    pd.DataFrame([dict(configuration=f"{f}/{e}/cpu/random", rep=0, started=start,
                       finished=finish)
                  for f in ("numpy", "torch") for e in ("glibc", "tcmalloc")
                  for start, finish in [("2026-12-04T10:00:00+00:00", "2026-12-04T10:00:10+00:00")]
                  * 2]).to_csv(tmp_path / "tables" / "copy.csv", index=False)
    (tmp_path / "config_used.yaml").write_text(yaml.safe_dump(tiny()))
    done = subprocess.run([str(PYTHON), str(SCRIPTS / "resolve.py"), str(tmp_path), "--most", "12",
                           "--minutes", "3"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert yaml.safe_load(done.stdout) == {"more_reps": {
        "copy/torch/tcmalloc/cpu/random": 6, "copy/torch/glibc/cpu/random": 6}}
    assert "1 are left" in done.stderr and "about 2 minutes of processes" in done.stderr
