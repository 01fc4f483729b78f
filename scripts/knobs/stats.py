"""Statistics over processes: medians and ratios with intervals from a hierarchical bootstrap
(resample the processes, then the samples within each resampled process), so that the
variance between processes, usually the larger part, is in every interval; ratios between
configurations measured in the same rounds resample the rounds together (a blocked design);
and the rule that calls a difference. Used by the summary table and the comparison of two result sets;
numpy and pandas only.

Kalibera and Jones, "Rigorous benchmarking in reasonable time" (2013): measure at every level
that varies and give intervals for ratios from the whole hierarchy.
"""

import numpy as np
import pandas as pd

RESAMPLES = 2000
LEVEL = 0.95
# Resolved verdicts say where the whole interval lies; `inconclusive` is an interval that
# crosses an edge (more processes may tell); `reference` is the baseline against itself.
VERDICTS = ("faster", "slower", "no effect", "inconclusive", "reference")


def _padded(processes):
    """Per-process samples as one array padded with NaN, and each process's count."""
    counts = np.array([len(p) for p in processes])
    data = np.full((len(processes), counts.max()), np.nan)
    for row, samples in enumerate(processes):
        data[row, :len(samples)] = samples
    return data, counts


def choose(strata, resamples, rng):
    """Indices of resampled processes, `resamples` x len(strata): each process drawn with
    replacement from its own stratum (the phase order it ran in), so that a design balanced
    over orders stays balanced; from all processes where a stratum has only one."""
    strata = list(strata)
    groups = {}
    for index, stratum in enumerate(strata):
        groups.setdefault(stratum, []).append(index)
    if len(groups) == 1 or min(map(len, groups.values())) < 2:
        return rng.integers(len(strata), size=(resamples, len(strata)))
    chosen = np.empty((resamples, len(strata)), dtype=int)
    for members in groups.values():
        members = np.array(members)
        chosen[:, members] = members[rng.integers(len(members), size=(resamples, len(members)))]
    return chosen


def resampled_medians(processes, resamples=RESAMPLES, rng=None, chosen=None):
    """Medians of `resamples` hierarchical bootstrap resamples: draw as many processes as
    there are, with replacement (or those `chosen`: resamples x processes indices); from each
    drawn process, as many of its samples as it has, with replacement; take the median of all
    drawn samples."""
    rng = np.random.default_rng(0) if rng is None else rng
    data, counts = _padded([np.asarray(p, float) for p in processes])
    if chosen is None:
        chosen = rng.integers(len(counts), size=(resamples, len(counts)))
    width = counts.max()
    picks = np.floor(rng.random((resamples, len(counts), width))
                     * counts[chosen][..., None]).astype(int)
    values = data[chosen[..., None], picks]
    if (counts == width).all():  # no padding: the plain median (nanmedian's, many times faster)
        return np.median(values.reshape(resamples, -1), axis=1)
    values[np.arange(width) >= counts[chosen][..., None]] = np.nan  # a process's own count
    return np.nanmedian(values.reshape(resamples, -1), axis=1)


def _interval(values, level=LEVEL):
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(values, [tail, 100 - tail])
    return float(low), float(high)


def median_interval(processes, resamples=RESAMPLES, seed=0, strata=None):
    """The median of all samples and its hierarchical bootstrap interval (`strata`: each
    process's stratum, e.g. the position its case ran in)."""
    rng = np.random.default_rng(seed)
    pooled = np.concatenate([np.asarray(p, float) for p in processes])
    chosen = choose(strata if strata is not None else [0] * len(processes), resamples, rng)
    medians = resampled_medians(processes, resamples, rng, chosen)
    return (float(np.median(pooled)), *_interval(medians))


def ratio_interval(numerator, denominator, resamples=RESAMPLES, seed=0, paired=True,
                   strata=None):
    """median(numerator) / median(denominator), each {rep: samples of that process}, and the
    interval of the ratio. Paired (where both were measured in the same rounds): the rounds
    are resampled together, so what a round shares (a slow minute of the machine) cancels, as
    in a blocked design, and within the strata (`strata`: {rep: the position the case ran
    in}) so that a design balanced over phase orders stays balanced; otherwise both
    hierarchies are resampled independently (two result sets measured at different times)."""
    rng = np.random.default_rng(seed)
    rounds = sorted(set(numerator) & set(denominator), key=str)
    ratio = (np.median(np.concatenate(list(numerator.values())))
             / np.median(np.concatenate(list(denominator.values()))))
    if paired and len(rounds) >= 2:
        ratio = (np.median(np.concatenate([numerator[r] for r in rounds]))
                 / np.median(np.concatenate([denominator[r] for r in rounds])))
        chosen = choose([(strata or {}).get(r, 0) for r in rounds], resamples, rng)
        top = resampled_medians([numerator[r] for r in rounds], resamples, rng, chosen)
        bottom = resampled_medians([denominator[r] for r in rounds], resamples, rng, chosen)
    else:
        top = resampled_medians(list(numerator.values()), resamples, rng)
        bottom = resampled_medians(list(denominator.values()), resamples, rng)
    return (float(ratio), *_interval(top / bottom))


def band(noise, threshold):
    """Half-width of the band around 1 in which no difference is called: the threshold, or how
    far the A/A pair's ratio (the baseline against itself, `noise`: (ratio, low, high) or
    None) strays from 1 where that is further. The A/A's interval is the check that the
    intervals are honest: it should hold 1."""
    if noise is None:
        return threshold
    ratio = noise[0]
    return max(threshold, ratio - 1, 1 / ratio - 1 if ratio > 0 else np.inf)


def _regions(width, threshold):
    """(verdict, low edge, high edge) on the ratio's axis: an effect beyond the band (the
    threshold widened by the A/A pair, `width`), no effect within the threshold alone. A noisy
    A/A pair makes an effect harder to call and never makes `no effect` easier."""
    threshold = width if threshold is None else min(threshold, width)
    return [("faster", 0, 1 / (1 + width)), ("no effect", 1 / (1 + threshold), 1 + threshold),
            ("slower", 1 + width, np.inf)]


def verdict(low, high, width, threshold=None):
    """A ratio of times (this / reference) with its interval: `faster` when the whole interval
    lies below 1 / (1 + width), `slower` when above 1 + width, `no effect` when inside
    1 / (1 + threshold) to 1 + threshold (an equivalence test; the threshold is `width` where
    not given), else `inconclusive`. Two runs can then disagree without contradicting each
    other through `inconclusive`: a verdict at an edge is not forced to one side by chance."""
    if not (np.isfinite(low) and np.isfinite(high)):
        return "inconclusive"
    (_, _, fast), (_, bottom, top), (_, slow, _) = _regions(width, threshold)
    if high < fast:
        return "faster"
    if low > slow:
        return "slower"
    if low >= bottom and high <= top:
        return "no effect"
    return "inconclusive"


RESOLVED = ("faster", "slower", "no effect")


def contradicts(one, other):
    """Whether two verdicts on the same ratio cannot both be right: both resolved and
    different (`inconclusive` contradicts nothing; nor does `no effect measured`, the earlier
    two-way rule's name for every interval not wholly outside the band)."""
    return one in RESOLVED and other in RESOLVED and one != other


MANY = 100_000
POWER = (1.96 + 0.84) / 1.96  # z of the 95% interval plus z of an 80% chance, over the first


def processes_to_resolve(ratio, low, high, width, processes, threshold=None):
    """About how many processes would settle an inconclusive verdict with a chance of 80%, if
    the ratio stays where it is and the interval narrows as 1 / sqrt(processes) (on the log
    scale): for each edge the interval crosses, the ratio's distance to the edge against the
    interval's reach on that side, the reach widened by POWER for the chance. 0 where
    resolved; None where no number would do: a ratio between the regions (beyond the
    threshold but within the A/A-widened band), on an edge, or needing over MANY processes."""
    if not all(np.isfinite([ratio, low, high])) or ratio <= 0 or low <= 0:
        return None
    if verdict(low, high, width, threshold) != "inconclusive":
        return 0
    regions = _regions(width, threshold)
    if not any(bottom < ratio < top for _, bottom, top in regions):
        return None
    centre, needed = np.log(ratio), [processes]
    edges = {edge for _, bottom, top in regions for edge in (bottom, top) if 0 < edge < np.inf}
    for edge in np.log(sorted(edges)):
        if np.log(low) < edge < np.log(high):
            room = abs(edge - centre)
            reach = POWER * (np.log(high) - centre if edge > centre else centre - np.log(low))
            if room == 0 or processes * (reach / room) ** 2 > MANY:
                return None
            needed.append(int(np.ceil(processes * (reach / room) ** 2)))
    return max(needed)


def coefficient_of_variation(samples):
    a = np.asarray(samples, float)
    return float(np.std(a, ddof=1) / np.mean(a)) if a.size > 1 else float("nan")


def processes_of(group, by_rep=None):
    """{rep: that process's samples} of one configuration's rows; rep k ran in round k
    (`by_rep`: the rows already grouped by rep, where the caller has them)."""
    return {rep: rows["seconds"].to_numpy() for rep, rows in by_rep or group.groupby("rep")}


def positions_of(group, by_rep=None):
    """{rep: the position the case ran in, in that process} (None where not recorded)."""
    if "position" not in group:
        return None
    return {rep: rows["position"].iloc[0] for rep, rows in by_rep or group.groupby("rep")}


# ---- Processes of two kinds ----------------------------------------------------------------
# Where a large output lands (layout randomization, README "Processes of two kinds") decides how
# it faults, so some configurations' processes come in kinds that each process draws. With few
# processes all may show one kind at a case, and a second run the other: a verdict there is
# withheld until enough processes make a missed kind unlikely.
FAULT_SECONDS = 1e-6  # about one 4 KiB fault (the fault probe: 1.0 to 1.6 us on the reference)
UNSEEN_KIND_PROCESSES = 14  # a kind that 20% of processes show is missed by all: 0.8**14 < 5%


def fault_kinds(table, keys, case, threshold):
    """Per configuration and case (`keys`): `two kinds` where its processes' median faults per
    sample differ by more than the threshold's share of its time (at FAULT_SECONDS a fault),
    `faulting` where they agree on faults that large, else `alike`; and the configurations
    (the keys before `case`; the ones after it are the case's sizes) with two kinds at some
    case."""
    kinds = {}
    if "minor_faults" not in table or case not in keys:
        return kinds, set()
    for name, group in table.groupby(keys):
        faults = group.groupby("rep")["minor_faults"].median()
        budget = threshold * group["seconds"].median() / FAULT_SECONDS
        kinds[name] = ("two kinds" if faults.max() - faults.min() > budget
                       else "faulting" if faults.median() > budget else "alike")
    at = keys.index(case)
    mixed = {name[:at] for name, kind in kinds.items() if kind == "two kinds"}
    return kinds, mixed


def settling(group, threshold, by_rep=None):
    """How many of one configuration's processes were still settling when the clock started:
    their first timed sample faulted (more than the threshold's share of the configuration's
    median time, at FAULT_SECONDS a fault) and none of their second half did. Their warm-up
    was too short (PyTorch's aligned outputs under glibc: README "Where each output's memory
    comes from"); the median hides them, the spread does not."""
    if "minor_faults" not in group:
        return 0
    budget = threshold * group["seconds"].median() / FAULT_SECONDS
    count = 0
    for _, process in by_rep or group.groupby("rep"):
        ordered = process.sort_values("sample") if "sample" in process else process
        faulted = (ordered["minor_faults"] > budget).to_numpy()
        count += bool(faulted[0] and not faulted[len(faulted) // 2:].any())
    return count


def summarize(table, keys, baseline, twin_suffix=".twin", threshold=0.05, cv_threshold=0.10,
              kinds_by=None):
    """One row per configuration (`keys`): samples and processes, the median with its
    interval, the spread; and against the baseline (the configuration equal to this one but
    for the keys `baseline` names, which take its values): the time ratio and speedup with
    intervals, the A/A noise floor of that baseline, and the verdict, withheld
    (`inconclusive`) where either side may hide a kind of process (`fault_kinds`: it faults
    alike at this case but in two kinds at another case, the column `kinds_by`, with fewer
    than UNSEEN_KIND_PROCESSES; None: no such rule); and how many processes were `settling`."""
    groups, orders, settled = {}, {}, {}
    for name, group in table.groupby(keys):
        by_rep = list(group.groupby("rep"))  # once: the three below read the same processes
        groups[name], orders[name] = processes_of(group, by_rep), positions_of(group, by_rep)
        settled[name] = settling(group, threshold, by_rep)
    floors = {}  # the A/A pair's ratio, the same for every configuration of its baseline

    def noise_of(twin, reference, strata):
        key = (twin, reference, tuple(sorted(strata.items(), key=str)))
        if key not in floors:
            floors[key] = ratio_interval(groups[twin], groups[reference], strata=strata)
        return floors[key]

    kinds, mixed = fault_kinds(table, keys, kinds_by, threshold)
    at = keys.index(kinds_by) if kinds_by in keys else None
    hides_a_kind = lambda name: (kinds.get(name) == "faulting" and len(groups[name])
                                 < UNSEEN_KIND_PROCESSES and name[:at] in mixed)
    key_of = lambda config: tuple(config[k] for k in keys)
    rows = []
    for name, by_rep in groups.items():
        config = dict(zip(keys, name))
        processes = list(by_rep.values())
        pooled = np.concatenate(processes)
        strata = orders[name] or {}
        median, low, high = median_interval(processes, strata=[strata.get(r, 0) for r in by_rep])
        medians = [np.median(p) for p in processes]
        row = {**config, "n": pooled.size, "processes": len(processes), "median": median,
               "ci_low": low, "ci_high": high, "cv": coefficient_of_variation(pooled),
               "process_cv": coefficient_of_variation(medians) if len(medians) > 1 else np.nan}
        row["noisy"] = bool(row["cv"] > cv_threshold)
        row["process_kinds"] = kinds.get(name, "")
        row["hides_a_kind"] = bool(kinds) and hides_a_kind(name)
        row["settling"] = settled[name]
        reference = {**config, **baseline}
        twin = ({**reference, "environment": reference["environment"] + twin_suffix}
                if "environment" in reference else None)
        if key_of(reference) in groups:
            ratio = ratio_interval(by_rep, groups[key_of(reference)], strata=strata)
            noise = (noise_of(key_of(twin), key_of(reference), strata)
                     if twin and key_of(twin) in groups else None)
            # the A/A pair itself is judged by the threshold: its own ratio sets the band
            width = threshold if twin and key_of(twin) == name else band(noise, threshold)
            call = (verdict(ratio[1], ratio[2], width, threshold) if key_of(reference) != name
                    else "reference")
            withheld = call != "reference" and bool(kinds) and (
                hides_a_kind(name) or hides_a_kind(key_of(reference)))
            call = "inconclusive" if withheld else call
            row.update(baseline="/".join(f"{k}={v}" for k, v in baseline.items()),
                       ratio=ratio[0], ratio_low=ratio[1], ratio_high=ratio[2],
                       speedup=1 / ratio[0], speedup_low=1 / ratio[2], speedup_high=1 / ratio[1],
                       noise_floor=width, verdict=call, significant=call in ("faster", "slower"),
                       withheld_for_kinds=withheld)
        rows.append(row)
    return pd.DataFrame(rows)
