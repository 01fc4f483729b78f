"""Statistics over processes on synthetic samples with known answers, and the comparison of two
result sets."""

import subprocess

import numpy as np
import pandas as pd
import pytest
import yaml

from conftest import PYTHON, SCRIPTS
from knobs import stats


def processes(rng, median, count=8, between=0.05, within=0.02, samples=20):
    """`count` processes whose own medians vary by `between` (relative sd) around `median`,
    each with `samples` samples varying by `within` around its own median."""
    return [median * (1 + between * rng.standard_normal())
            * (1 + within * rng.standard_normal(samples)) for _ in range(count)]


def test_the_interval_over_processes_covers_the_true_median_where_steps_alone_do_not():
    """With variance between processes, an interval over the steps of all processes alike is
    far too narrow; the hierarchical one covers the true median about as often as it says."""
    rng = np.random.default_rng(7)
    hierarchical = naive = 0
    for trial in range(60):
        measured = processes(rng, 1.0, count=10)
        _, low, high = stats.median_interval(measured, resamples=400, seed=trial)
        hierarchical += low <= 1.0 <= high
        flat = [np.concatenate(measured)]  # one "process": the steps' spread only
        _, low, high = stats.median_interval(flat, resamples=400, seed=trial)
        naive += low <= 1.0 <= high
    assert hierarchical >= 48  # a 95% interval: about 57 of 60, never far fewer
    assert naive <= 40  # the old interval, over steps only, misses much more often


def test_unequal_processes_resample_each_with_its_own_count():
    medians = stats.resampled_medians([np.ones(50), np.full(2, 3.0)], resamples=300)
    # the short process weighs as a process, not by its two samples: half the resampled
    # sets are mostly threes
    assert (medians == 3.0).mean() > 0.15 and (medians == 1.0).mean() > 0.15


@pytest.mark.parametrize("shift,expected", [(1.0, "no effect"), (0.9, "faster"),
                                            (1.1, "slower")])
def test_one_distribution_is_called_the_same_and_a_true_ten_percent_shift_is_found(shift,
                                                                                  expected):
    """The verdict rule on 40 synthetic configurations with process-level variance: two sets
    drawn from one distribution are called the same (at most 5% called changed), and a true
    10% shift is found in nearly all."""
    rng = np.random.default_rng(int(shift * 100))
    calls = []
    for configuration in range(40):
        before = dict(enumerate(processes(rng, 1.0, count=6, between=0.02)))
        after = dict(enumerate(processes(rng, shift, count=6, between=0.02)))
        _, low, high = stats.ratio_interval(after, before, resamples=500, seed=configuration,
                                            paired=False)  # two runs: nothing shared
        calls.append(stats.verdict(low, high, 0.05 if shift == 1.0 else 0.0))
    share = calls.count(expected) / len(calls)
    assert share >= 0.95, calls


def test_rounds_resampled_together_cancel_what_a_round_shares():
    """The machine drifts from round to round (here by up to 30%), the same for every
    configuration of a round: resampling the rounds together finds a true 10% difference
    that resampling each configuration's processes apart cannot tell from noise."""
    rng = np.random.default_rng(5)
    drift = 1 + 0.3 * rng.random(5)
    base = {k: d * (1 + 0.01 * rng.standard_normal(20)) for k, d in enumerate(drift)}
    knob = {k: 0.9 * d * (1 + 0.01 * rng.standard_normal(20)) for k, d in enumerate(drift)}
    ratio, low, high = stats.ratio_interval(knob, base)
    assert low <= 0.9 <= high and high - low < 0.03
    assert stats.verdict(low, high, 0.05) == "faster"
    _, low, high = stats.ratio_interval(knob, base, paired=False)
    assert stats.verdict(low, high, 0.05) == "inconclusive"


def _table(rng):
    rows = []
    for environment, median, between in [("base", 1.0, 0.01), ("base.twin", 1.0, 0.01),
                                         ("fast", 0.5, 0.01), ("same", 1.02, 0.01),
                                         ("noisy", 1.0, 0.3)]:
        for rep, samples in enumerate(processes(rng, median, count=5, between=between)):
            rows += [{"experiment": "x", "environment": environment, "case": "step",
                      "rep": rep, "seconds": s} for s in samples]
    return pd.DataFrame(rows)


def test_summary_calls_the_real_difference_only_and_reports_the_noise_floor():
    summary = stats.summarize(_table(np.random.default_rng(3)), ["experiment", "environment",
                                                                 "case"],
                              baseline={"environment": "base"}).set_index("environment")
    assert summary.loc["fast", "verdict"] == "faster" and summary.loc["fast", "significant"]
    assert 1.9 < summary.loc["fast", "speedup"] < 2.1
    assert summary.loc["fast", "ratio_low"] <= summary.loc["fast", "ratio"] <= summary.loc[
        "fast", "ratio_high"]
    assert summary.loc["same", "verdict"] == "no effect"  # 2%: inside the band
    assert summary.loc["noisy", "verdict"] == "inconclusive"
    assert summary.loc["base", "ratio"] == 1.0 and summary.loc["base", "verdict"] == "reference"
    assert (summary["processes"] == 5).all() and (summary["n"] == 100).all()
    assert summary.loc["noisy", "process_cv"] > 5 * summary.loc["base", "process_cv"]
    # the twin is the baseline measured again: its ratio is the noise floor, at least 5%
    assert summary.loc["fast", "noise_floor"] >= 0.05
    assert abs(summary.loc["base.twin", "ratio"] - 1) < 0.05


def test_an_a_a_pair_that_strays_from_1_widens_the_band_no_effect_may_hide_in():
    assert stats.band(None, 0.05) == 0.05
    assert stats.band((1.02, 0.9, 1.2), 0.05) == 0.05
    assert stats.band((1.1, 0.95, 1.2), 0.05) == pytest.approx(0.1)
    assert stats.band((0.8, 0.7, 0.9), 0.05) == pytest.approx(0.25)
    assert stats.verdict(0.8, 0.87, 0.2) == "inconclusive"  # crosses 1 / 1.2
    assert stats.verdict(0.8, 0.82, 0.2) == "faster"
    assert stats.verdict(0.85, 1.1, 0.2) == "no effect"


def test_a_noisy_a_a_pair_makes_an_effect_harder_to_call_and_no_effect_no_easier():
    # band 15% from the A/A pair, threshold 5%
    assert stats.verdict(0.80, 0.85, 0.15, 0.05) == "faster"
    assert stats.verdict(0.88, 0.92, 0.15, 0.05) == "inconclusive"  # beyond 5%, within 15%
    assert stats.verdict(0.90, 1.10, 0.15, 0.05) == "inconclusive"  # not within 5%
    assert stats.verdict(0.97, 1.03, 0.15, 0.05) == "no effect"
    assert stats.verdict(0.8, 1.3, 0.05) == "inconclusive"  # crosses both edges
    assert stats.verdict(float("nan"), float("nan"), 0.05) == "inconclusive"
    # a ratio between the regions, or no ratio, can never be settled
    assert stats.processes_to_resolve(0.9, 0.85, 0.95, 0.15, 5, 0.05) is None
    assert stats.processes_to_resolve(float("nan"), 0.8, 1.1, 0.05, 5) is None
    assert stats.processes_to_resolve(0.99, 0.9, 1.1, 0.05, 5) > 5


def test_only_resolved_verdicts_that_differ_contradict():
    assert stats.contradicts("faster", "no effect") and stats.contradicts("faster", "slower")
    assert not stats.contradicts("faster", "inconclusive")
    assert not stats.contradicts("inconclusive", "no effect")
    assert not stats.contradicts("slower", "slower")
    assert not stats.contradicts("no effect measured", "faster")  # the earlier rule's label
    assert not stats.contradicts(float("nan"), "faster")


def test_two_runs_of_one_distribution_never_contradict_where_the_effect_sits_on_the_edge():
    """A true effect of exactly the threshold (5% faster) is where a two-way rule flips
    between runs; the four-way rule may leave it inconclusive, but two runs' resolved verdicts
    do not contradict each other (nearly never: each interval may miss, 5% of the time)."""
    rng = np.random.default_rng(11)
    contradictions = inconclusive = 0
    for configuration in range(30):
        base = [dict(enumerate(processes(rng, 1.0, count=6))) for _ in range(2)]
        knob = [dict(enumerate(processes(rng, 1 / 1.05, count=6))) for _ in range(2)]
        calls = [stats.verdict(*stats.ratio_interval(k, b, resamples=400, seed=configuration,
                                                     paired=False)[1:], 0.05)
                 for k, b in zip(knob, base)]
        contradictions += stats.contradicts(*calls)
        inconclusive += calls.count("inconclusive")
    assert contradictions <= 1
    assert inconclusive >= 40  # the edge is where most are left open


def test_the_processes_to_resolve_an_inconclusive_verdict_do_resolve_it():
    """A true 10% speedup measured in 6 noisy processes is often inconclusive; measured again
    in the number of processes the estimate asks for (an 80% chance, were the first ratio the
    true one), it is called faster in most trials, taken over several first measurements (an
    estimate from a ratio further from the edge than the truth asks for too few)."""
    shares = []
    for first in range(8):
        rng = np.random.default_rng(first)
        knob, base = (dict(enumerate(processes(rng, m, count=6, between=0.08))) for m in (0.9, 1))
        ratio, low, high = stats.ratio_interval(knob, base, paired=False)
        needed = stats.processes_to_resolve(ratio, low, high, 0.05, 6)
        if stats.verdict(low, high, 0.05) != "inconclusive" or needed is None or needed > 250:
            continue
        assert needed > 6
        calls = [stats.verdict(*stats.ratio_interval(
            *(dict(enumerate(processes(rng, m, count=needed, between=0.08))) for m in (0.9, 1)),
            resamples=300, seed=trial, paired=False)[1:], 0.05) for trial in range(10)]
        shares.append(calls.count("faster") / len(calls))
    assert len(shares) >= 4 and np.median(shares) >= 0.7, shares
    assert stats.processes_to_resolve(0.5, 0.45, 0.55, 0.05, 3) == 0  # resolved already


def _result_set(root, rng, slower=1.0, extra=None, kind="machine A"):
    rows = []
    for batch in (1, 2):
        median = 0.01 * batch * (slower if batch == 2 else 1.0)
        for rep, samples in enumerate(processes(rng, median, count=4, between=0.01)):
            rows += [dict(experiment="copy", framework="numpy", environment="glibc",
                          device="cpu", input="random", batch=batch, bytes=batch * 100,
                          rep=rep, sample=i, seconds=s, host="h", cpu="c", machine_kind=kind)
                     for i, s in enumerate(samples)]
    if extra:
        rows += [dict(rows[0], environment=extra)]
    (root / "tables").mkdir(parents=True)
    pd.DataFrame(rows).to_csv(root / "tables" / "copy.csv", index=False)
    config = {"environments": {"glibc": {}, "tcmalloc": {"preload": ["libtcmalloc.so.4"]}},
              "copy": {"frameworks": ["numpy"], "environments": ["glibc", "tcmalloc"],
                       "batches": [1, 2]}}
    (root / "config_used.yaml").write_text(yaml.safe_dump(config))
    return root


def compare(before, after, out):
    return subprocess.run([str(PYTHON), str(SCRIPTS / "compare.py"), str(before), str(after),
                           "--out", str(out)], capture_output=True, text=True)


def test_compare_flags_the_changed_configuration_and_names_what_it_left_out(tmp_path):
    rng = np.random.default_rng(11)
    before = _result_set(tmp_path / "before", rng, extra="tcmalloc")
    after = _result_set(tmp_path / "after", rng, slower=2.0)
    done = compare(before, after, tmp_path / "out")
    assert done.returncode == 0, done.stderr
    assert "2 configurations compared, 1 only before" in done.stdout
    assert "tcmalloc" in done.stdout and "DIFFERENT KINDS" not in done.stdout
    table = pd.read_csv(tmp_path / "out" / "comparison.csv").set_index("batch")
    assert table.loc[2, "change"] == "slower" and 1.9 < table.loc[2, "ratio"] < 2.1
    assert table.loc[1, "change"] == "same"
    assert (table["processes_before"] == 4).all()
    assert (tmp_path / "out" / "comparison.png").stat().st_size > 10_000


def test_compare_says_when_two_sets_come_from_different_kinds_of_machine(tmp_path):
    rng = np.random.default_rng(12)
    before = _result_set(tmp_path / "before", rng, kind="Xeon, family 6 model 143, avx512f")
    after = _result_set(tmp_path / "after", rng, kind="EPYC, family 25 model 17, avx2")
    done = compare(before, after, tmp_path / "out")
    assert done.returncode == 0, done.stderr
    assert "DIFFERENT KINDS OF MACHINE" in done.stdout and "model 143" in done.stdout
    assert not pd.read_csv(tmp_path / "out" / "comparison.csv")["same_kind_of_machine"].any()


def test_compare_refuses_sets_with_nothing_in_common(tmp_path):
    before = _result_set(tmp_path / "before", np.random.default_rng(1))
    after = tmp_path / "after"
    (after / "tables").mkdir(parents=True)
    (after / "config_used.yaml").write_text((before / "config_used.yaml").read_text())
    done = compare(before, after, tmp_path / "out")
    assert done.returncode != 0 and "no table in" in done.stdout + done.stderr


def test_compare_puts_both_verdicts_side_by_side_and_names_contradictions(tmp_path):
    rng = np.random.default_rng(13)
    sets = [_result_set(tmp_path / name, rng) for name in ("before", "after")]
    calls = {"before": ["faster", "faster", "no effect"],
             "after": ["inconclusive", "no effect", "no effect"]}
    for root in sets:
        pd.DataFrame({"experiment": "copy", "kind": "vs baseline", "label": ["a", "b", "c"],
                      "configuration": ["a", "b", "c"], "case": 16, "ratio": 0.9,
                      "ratio_low": 0.85, "ratio_high": 0.95,
                      "verdict": calls[root.name]}).to_csv(root / "tables" / "verdicts.csv",
                                                           index=False)
    done = compare(*sets, tmp_path / "out")
    assert done.returncode == 0, done.stderr
    assert "1 of 3 the same in both sets, 1 contradict" in done.stdout
    assert "CONTRADICTS: copy vs baseline b" in done.stdout
    table = pd.read_csv(tmp_path / "out" / "verdicts.csv").set_index("label")
    assert table["contradicts"].tolist() == [False, True, False]
    assert {"ratio_low_before", "ratio_high_after"} <= set(table.columns)


def _copies(root, rng, factor, faults):
    """A result set of five frameworks' copies at two sizes; `factor(framework, batch)` scales
    a copy's time, `faults(framework, batch)` gives its minor faults per call."""
    frameworks = ["numpy", "torch", "theano", "pytensor", "tensorflow"]
    rows = [dict(experiment="copy", framework=name, environment="glibc", device="cpu",
                 input="random", batch=batch, bytes=batch * 8192, rep=rep, sample=i, seconds=s,
                 minor_faults=faults(name, batch), host="h", cpu="c", machine_kind="A")
            for name in frameworks for batch in (1, 2)
            for rep, samples in enumerate(processes(rng, 0.01 * batch * factor(name, batch),
                                                    count=4, between=0.01))
            for i, s in enumerate(samples)]
    (root / "tables").mkdir(parents=True)
    pd.DataFrame(rows).to_csv(root / "tables" / "copy.csv", index=False)
    config = {"environments": {"glibc": {}},
              "copy": {"frameworks": frameworks, "environments": ["glibc"], "batches": [1, 2]}}
    (root / "config_used.yaml").write_text(yaml.safe_dump(config))
    return root


def test_compare_sets_a_shift_every_copy_of_one_size_shares_aside_but_not_one_copys_own(
        tmp_path):
    """Between two runs on one VM every copy of one size can move at once (the cache it gets);
    beyond the machine, that is no change, while one copy that moved more than the others of
    its size and kind still is, and a copy whose page kind changed is not set against others."""
    rng = np.random.default_rng(14)
    before = _copies(tmp_path / "before", rng, lambda name, batch: 1.0, lambda name, batch: 0)
    after = _copies(tmp_path / "after", rng,
                    lambda name, batch: 1.0 if batch == 1 else 2.25 if name == "numpy" else 1.5,
                    lambda name, batch: 16 if (name, batch) == ("torch", 1) else 0)
    done = compare(before, after, tmp_path / "out")
    assert done.returncode == 0, done.stderr
    table = pd.read_csv(tmp_path / "out" / "comparison.csv").set_index(["framework", "batch"])
    size_two = table.xs(2, level="batch")
    assert (size_two["change"] == "slower").all()
    assert size_two["change_beyond_machine"].to_dict() == {
        "numpy": "slower", "pytensor": "same", "tensorflow": "same", "theano": "same",
        "torch": "same"}
    # at size one torch faulted after, not before, which leaves four: too few to share a move
    assert table.xs(1, level="batch")["machine_ratio"].isna().all()
    assert "changes beyond the machine: 1 of 10" in done.stdout


def _kinds_table(rng, count):
    """`thp` faults in two kinds of process at batch 16 (211 or 722 faults per call, as where a
    38.5 MB output lands decides) and alike at batch 2, where every process faults 155 times
    and is 3x slower than `base`; `fresh` faults alike everywhere (no kinds)."""
    rows = []
    for environment, batch, median, faults in [
            ("base", 2, 1e-3, lambda rep: 0), ("base", 16, 4e-3, lambda rep: 0),
            ("thp", 2, 3e-3, lambda rep: 155), ("thp", 16, 4e-3, lambda rep: (211, 722)[rep % 2]),
            ("fresh", 2, 3e-3, lambda rep: 155), ("fresh", 16, 9e-3, lambda rep: 9409)]:
        for rep, samples in enumerate(processes(rng, median, count=count)):
            rows += [{"environment": environment, "batch": batch, "bytes": batch << 20,
                      "rep": rep, "seconds": s, "minor_faults": faults(rep)} for s in samples]
    return pd.DataFrame(rows)


@pytest.mark.parametrize("count", [3, stats.UNSEEN_KIND_PROCESSES])
def test_a_verdict_that_may_hide_a_kind_of_process_waits_for_enough_processes(count):
    summary = stats.summarize(_kinds_table(np.random.default_rng(5), count),
                              ["environment", "batch", "bytes"],  # a case's size after it
                              baseline={"environment": "base"},
                              kinds_by="batch").set_index(["environment", "batch"])
    assert summary.loc[("thp", 16), "process_kinds"] == "two kinds"
    assert summary.loc[("thp", 2), "process_kinds"] == "faulting"
    few = count < stats.UNSEEN_KIND_PROCESSES
    # alike at batch 2 from processes that come in kinds: withheld while few
    assert summary.loc[("thp", 2), "hides_a_kind"] == few
    assert summary.loc[("thp", 2), "withheld_for_kinds"] == few
    assert summary.loc[("thp", 2), "verdict"] == ("inconclusive" if few else "slower")
    # the same faults in a configuration without kinds: called at once
    assert summary.loc[("fresh", 2), "verdict"] == "slower"
    assert not summary.loc[("fresh", 2), "withheld_for_kinds"]
    # verdicts.csv says why, and how many processes would settle it
    from knobs import verdicts

    table = verdicts.build(summary.reset_index().assign(experiment="x"), {},
                           {"x": {"labels": ["environment"], "case": "batch"}}, {}, 0.05)
    row = table[(table["label"] == "thp") & (table["case"] == 2)].iloc[0]
    assert row["withheld_for_kinds"] == few
    assert row["processes_to_resolve"] == (stats.UNSEEN_KIND_PROCESSES if few else 0)


def test_processes_whose_first_samples_fault_and_then_stop_are_counted_as_settling():
    """PyTorch's aligned outputs under glibc: some processes fault in their first timed calls
    (glibc grows its heap), then never; a process faulting on every call is not settling."""
    rows = []
    courses = {0: [800] * 4 + [0] * 16, 1: [0] * 20, 2: [800] * 20, 3: [800] * 3 + [0] * 17,
               4: [0] * 5 + [800] + [0] * 14, 5: [800] * 12 + [0] * 8}
    for rep, faults in courses.items():
        rows += [{"environment": "glibc", "batch": 2, "rep": rep, "sample": sample,
                  "seconds": 1e-4 * (10 if f else 1), "minor_faults": f}
                 for sample, f in reversed(list(enumerate(faults)))]  # order by `sample`
    table = pd.DataFrame(rows)
    assert stats.settling(table, 0.05) == 2  # reps 0 and 3; 4 began clean, 5 still faulting
    summary = stats.summarize(table, ["environment", "batch"], baseline={})
    assert summary["settling"].tolist() == [2]
    assert stats.settling(table.drop(columns="minor_faults"), 0.05) == 0
