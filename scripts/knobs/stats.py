"""Statistics over processes: medians and ratios with intervals from a hierarchical bootstrap
(resample the processes, then the samples within each resampled process), so that the
variance between processes, usually the larger part, is in every interval; and the rule
that calls a difference. Used by the summary table and the comparison of two result sets;
numpy and pandas only.

Kalibera and Jones, "Rigorous benchmarking in reasonable time" (2013): measure at every level
that varies and give intervals for ratios from the whole hierarchy.
"""

import numpy as np
import pandas as pd

RESAMPLES = 2000
LEVEL = 0.95
VERDICTS = ("faster", "slower", "no effect measured")


def _padded(processes):
    """Per-process samples as one array padded with NaN, and each process's count."""
    counts = np.array([len(p) for p in processes])
    data = np.full((len(processes), counts.max()), np.nan)
    for row, samples in enumerate(processes):
        data[row, :len(samples)] = samples
    return data, counts


def resampled_medians(processes, resamples=RESAMPLES, rng=None):
    """Medians of `resamples` hierarchical bootstrap resamples: draw as many processes as
    there are, with replacement; from each drawn process, as many of its samples as it has,
    with replacement; take the median of all drawn samples."""
    rng = np.random.default_rng(0) if rng is None else rng
    data, counts = _padded([np.asarray(p, float) for p in processes])
    chosen = rng.integers(len(counts), size=(resamples, len(counts)))
    width = counts.max()
    picks = np.floor(rng.random((resamples, len(counts), width))
                     * counts[chosen][..., None]).astype(int)
    values = data[chosen[..., None], picks]
    values[np.arange(width) >= counts[chosen][..., None]] = np.nan  # a process's own count
    return np.nanmedian(values.reshape(resamples, -1), axis=1)


def _interval(values, level=LEVEL):
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(values, [tail, 100 - tail])
    return float(low), float(high)


def median_interval(processes, resamples=RESAMPLES, seed=0):
    """The median of all samples and its hierarchical bootstrap interval."""
    pooled = np.concatenate([np.asarray(p, float) for p in processes])
    medians = resampled_medians(processes, resamples, np.random.default_rng(seed))
    return (float(np.median(pooled)), *_interval(medians))


def ratio_interval(numerator, denominator, resamples=RESAMPLES, seed=0):
    """median(numerator) / median(denominator), each a list of per-process samples, and the
    interval of the ratio, resampling both hierarchies independently."""
    rng = np.random.default_rng(seed)
    top = resampled_medians(numerator, resamples, rng)
    bottom = resampled_medians(denominator, resamples, rng)
    ratio = (np.median(np.concatenate(numerator)) / np.median(np.concatenate(denominator)))
    return (float(ratio), *_interval(top / bottom))


def band(noise, threshold):
    """Half-width of the band around 1 in which no difference is called: the threshold, or the
    A/A pair's interval where that reaches further (`noise`: (ratio, low, high) or None)."""
    if noise is None:
        return threshold
    _, low, high = noise
    return max(threshold, high - 1, 1 / low - 1 if low > 0 else np.inf)


def verdict(low, high, width):
    """A ratio of times (this / reference) with its interval: faster only when the whole
    interval lies below 1 / (1 + width), slower only when above 1 + width."""
    if high < 1 / (1 + width):
        return "faster"
    if low > 1 + width:
        return "slower"
    return "no effect measured"


def coefficient_of_variation(samples):
    a = np.asarray(samples, float)
    return float(np.std(a, ddof=1) / np.mean(a)) if a.size > 1 else float("nan")


def processes_of(group):
    """Per-process sample arrays of one configuration's rows (a process is one rep)."""
    return [rows["seconds"].to_numpy() for _, rows in group.groupby("rep")]


def summarize(table, keys, baseline, twin_suffix=".twin", threshold=0.05, cv_threshold=0.10):
    """One row per configuration (`keys`): samples and processes, the median with its
    interval, the spread; and against the baseline (the configuration equal to this one but
    for the keys `baseline` names, which take its values): the time ratio and speedup with
    intervals, the A/A noise floor of that baseline, and the verdict."""
    groups = {name: processes_of(group) for name, group in table.groupby(keys)}
    key_of = lambda config: tuple(config[k] for k in keys)
    rows = []
    for name, processes in groups.items():
        config = dict(zip(keys, name))
        pooled = np.concatenate(processes)
        median, low, high = median_interval(processes)
        medians = [np.median(p) for p in processes]
        row = {**config, "n": pooled.size, "processes": len(processes), "median": median,
               "ci_low": low, "ci_high": high, "cv": coefficient_of_variation(pooled),
               "process_cv": coefficient_of_variation(medians) if len(medians) > 1 else np.nan}
        row["noisy"] = bool(row["cv"] > cv_threshold)
        reference = {**config, **baseline}
        twin = ({**reference, "environment": reference["environment"] + twin_suffix}
                if "environment" in reference else None)
        if key_of(reference) in groups:
            ratio = ratio_interval(processes, groups[key_of(reference)])
            noise = (ratio_interval(groups[key_of(twin)], groups[key_of(reference)])
                     if twin and key_of(twin) in groups else None)
            width = band(noise, threshold)
            call = verdict(ratio[1], ratio[2], width) if key_of(reference) != name else VERDICTS[2]
            row.update(baseline="/".join(f"{k}={v}" for k, v in baseline.items()),
                       ratio=ratio[0], ratio_low=ratio[1], ratio_high=ratio[2],
                       speedup=1 / ratio[0], speedup_low=1 / ratio[2], speedup_high=1 / ratio[1],
                       noise_floor=width, verdict=call, significant=call != VERDICTS[2])
        rows.append(row)
    return pd.DataFrame(rows)
