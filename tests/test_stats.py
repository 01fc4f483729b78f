"""Statistics on synthetic samples with known answers, and the comparison of two result sets."""

import subprocess

import numpy as np
import pandas as pd

from conftest import PYTHON, SCRIPTS
from knobs import stats

RNG = np.random.default_rng(42)


def test_bootstrap_interval_covers_the_true_median():
    covered = 0
    for trial in range(40):
        samples = np.random.default_rng(trial).normal(10.0, 1.0, 60)
        _, low, high = stats.bootstrap_median(samples, resamples=500, seed=trial)
        covered += low <= 10.0 <= high
    assert covered >= 34  # a 95% interval: about 38 of 40, never far fewer


def _table():
    rows = []
    for environment, scale, spread in [("base", 1.0, 0.01), ("fast", 0.5, 0.01),
                                       ("same", 1.0, 0.01), ("noisy", 1.0, 0.3)]:
        values = RNG.normal(scale, spread * scale, 40).clip(min=0.05)  # "same": base's law
        rows += [{"framework": "f", "environment": environment, "seconds": v} for v in values]
    return pd.DataFrame(rows)


def test_summary_flags_noise_and_finds_the_real_difference_only():
    summary = stats.summarize(_table(), ["framework", "environment"],
                              baseline={"environment": "base"}).set_index("environment")
    assert summary.loc["noisy", "noisy"] and not summary.loc["base", "noisy"]
    assert summary.loc["fast", "significant"]
    assert 1.9 < summary.loc["fast", "speedup"] < 2.1
    assert summary.loc["fast", "speedup_low"] <= summary.loc["fast", "speedup"] <= summary.loc["fast", "speedup_high"]
    assert not summary.loc["same", "significant"]
    assert summary.loc["base", "speedup"] == 1.0 and not summary.loc["base", "significant"]
    assert (summary["n"] == 40).all()


def _result_set(root, slower=1.0, extra=None):
    rows = []
    for batch in (1, 2):
        for sample in range(30):
            seconds = 0.01 * batch * (slower if batch == 2 else 1.0) * (1 + 0.01 * RNG.standard_normal())
            rows.append(dict(framework="numpy", environment="glibc", device="cpu",
                             input="random", batch=batch, sample=sample, seconds=seconds,
                             host="h", cpu="c"))
    if extra:
        rows += [dict(rows[0], environment=extra)]
    (root / "tables").mkdir(parents=True)
    pd.DataFrame(rows).to_csv(root / "tables" / "copy.csv", index=False)
    return root


def test_compare_flags_the_changed_configuration_and_names_what_it_left_out(tmp_path):
    before = _result_set(tmp_path / "before", extra="tcmalloc")
    after = _result_set(tmp_path / "after", slower=2.0)
    done = subprocess.run([str(PYTHON), str(SCRIPTS / "compare.py"), str(before), str(after),
                           "--out", str(tmp_path / "out")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "2 configurations compared, 1 only before" in done.stdout
    assert "tcmalloc" in done.stdout and "hourglass: not compared" in done.stdout
    table = pd.read_csv(tmp_path / "out" / "comparison.csv").set_index("batch")
    assert table.loc[2, "change"] == "slower" and 1.9 < table.loc[2, "ratio"] < 2.1
    assert table.loc[1, "change"] == "same"
    assert (tmp_path / "out" / "comparison.png").stat().st_size > 10_000


def test_compare_refuses_sets_with_nothing_in_common(tmp_path):
    before = _result_set(tmp_path / "before")
    after = tmp_path / "after"
    (after / "tables").mkdir(parents=True)
    done = subprocess.run([str(PYTHON), str(SCRIPTS / "compare.py"), str(before), str(after),
                           "--out", str(tmp_path / "out")], capture_output=True, text=True)
    assert done.returncode != 0 and "no table in" in done.stdout + done.stderr
