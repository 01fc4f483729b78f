"""Statistics on raw samples: medians with bootstrap intervals, spread, and significance.

Used by the summary table and the comparison of two result sets; numpy, pandas and scipy only.
"""

import numpy as np
import pandas as pd
from scipy.stats import mannwhitneyu

RESAMPLES = 2000
LEVEL = 0.95


def _percentiles(values, level=LEVEL):
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(values, [tail, 100 - tail])
    return float(low), float(high)


def bootstrap_median(samples, resamples=RESAMPLES, seed=0, level=LEVEL):
    """Median and a percentile bootstrap interval of the median."""
    a = np.asarray(samples, float)
    medians = np.median(np.random.default_rng(seed).choice(a, (resamples, a.size)), axis=1)
    return (float(np.median(a)), *_percentiles(medians, level))


def bootstrap_ratio_of_medians(numerator, denominator, resamples=RESAMPLES, seed=0,
                               level=LEVEL):
    """Median(numerator) / median(denominator) and a percentile bootstrap interval,
    resampling each sample set independently."""
    rng = np.random.default_rng(seed)
    a, b = np.asarray(numerator, float), np.asarray(denominator, float)
    ratios = (np.median(rng.choice(a, (resamples, a.size)), axis=1)
              / np.median(rng.choice(b, (resamples, b.size)), axis=1))
    return (float(np.median(a) / np.median(b)), *_percentiles(ratios, level))


def coefficient_of_variation(samples):
    a = np.asarray(samples, float)
    return float(np.std(a, ddof=1) / np.mean(a)) if a.size > 1 else float("nan")


def mann_whitney_p(a, b):
    """Two-sided Mann-Whitney U test: do the two sample sets come from one distribution?"""
    return float(mannwhitneyu(a, b, alternative="two-sided").pvalue)


def summarize(table, keys, baseline, cv_threshold=0.10, alpha=0.05):
    """One row per configuration (`keys`): n, median with its interval, CV and a noisy flag;
    and against the baseline (the configuration equal to this one except for the keys that
    `baseline` names, which take its values): speedup = baseline median / median, its
    interval, the Mann-Whitney p-value, and whether the difference is significant."""
    rows = []
    groups = {name: group["seconds"].to_numpy() for name, group in table.groupby(keys)}
    for name, seconds in groups.items():
        config = dict(zip(keys, name if isinstance(name, tuple) else (name,)))
        median, low, high = bootstrap_median(seconds)
        row = {**config, "n": seconds.size, "median": median, "ci_low": low, "ci_high": high,
               "cv": coefficient_of_variation(seconds)}
        row["noisy"] = bool(row["cv"] > cv_threshold)
        reference = tuple({**config, **baseline}[k] for k in keys)
        reference = reference if len(keys) > 1 else reference[0]
        if reference in groups:
            speedup, s_low, s_high = bootstrap_ratio_of_medians(groups[reference], seconds)
            p = mann_whitney_p(seconds, groups[reference]) if reference != name else 1.0
            row.update(baseline="/".join(f"{k}={v}" for k, v in baseline.items()),
                       speedup=speedup, speedup_low=s_low, speedup_high=s_high, p_value=p,
                       significant=bool(p < alpha and not s_low <= 1 <= s_high))
        rows.append(row)
    return pd.DataFrame(rows)
