"""Verdicts from the data: every knob's effect as a ratio of times with its interval over
processes, and `faster`, `slower`, `no effect` or `inconclusive` by the rule of knobs/stats.py,
the band around 1 being the threshold or the experiment's A/A noise floor where that is wider;
for an inconclusive one, about how many processes would resolve it (`withheld_for_kinds`: an
interval that resolves, from processes that may all be of one kind: knobs/stats.py).

Kinds of row: `A/A` (a baseline against its twin: the noise floor itself), `vs baseline`
(every configuration against its experiment's baseline), `fastest` (the fastest configuration
measured, per case and device), and the kinds of pair an experiment's own section names
(Experiment.comparisons: the hourglass's `rung` against the rung before, ...).
"""

import pandas as pd

from knobs import stats
from knobs.experiments import TWIN


def _name(row, labels):
    return "/".join(str(row[c]) for c in labels)


def from_summary(summary, experiment, labels, case):
    """`A/A` and `vs baseline` rows, read from the summary."""
    rows = summary[(summary["experiment"] == experiment) & summary["ratio"].notna()]
    found = []
    for _, row in rows.iterrows():
        twin = str(row.get("environment", "")).endswith(TWIN)
        if row["verdict"] == "reference":
            continue  # the baseline against itself
        found.append({"experiment": experiment, "kind": "A/A" if twin else "vs baseline",
                      "label": _name(row, labels), "configuration": _name(row, labels),
                      "reference": row["baseline"], "case": row[case],
                      **{k: row[k] for k in ("ratio", "ratio_low", "ratio_high",
                                             "noise_floor", "verdict")},
                      "median": row["median"], "processes": row["processes"],
                      "withheld_for_kinds": bool(row.get("withheld_for_kinds", False))})
    return found


def pairs(experiment, table, summary, comparisons, labels, case, threshold):
    """Each pair an experiment names (`comparisons`: a configuration and its reference, each
    some of its label columns), at every value of its other labels and every case, paired by
    round as the summary's ratios are."""
    ok = table[table["seconds"].notna()]
    grouped = {}  # by the columns a comparison names: usually the same for all of them

    def groups_by(keys):
        if keys not in grouped:
            parts = list(ok.groupby(list(keys)))
            grouped[keys] = ({key: stats.processes_of(g) for key, g in parts},
                             {key: stats.positions_of(g) for key, g in parts})
        return grouped[keys]

    found = []
    for number, comparison in enumerate(comparisons):
        named = list(comparison["configuration"])
        free = [c for c in labels if c not in named] + [case]
        groups, orders = groups_by(tuple(named + free))
        floor = summary[summary["experiment"] == experiment].groupby(free)["noise_floor"].max()
        mine_named = tuple(comparison["configuration"][c] for c in named)
        theirs_named = tuple(comparison["reference"][c] for c in named)
        for rest in sorted({key[len(named):] for key in groups}):
            mine, theirs = groups.get((*mine_named, *rest)), groups.get((*theirs_named, *rest))
            if mine is None or theirs is None:
                continue
            strata = orders.get((*mine_named, *rest))
            ratio, low, high = stats.ratio_interval(mine, theirs, seed=number, strata=strata)
            width = floor.get(rest if len(free) > 1 else rest[0], threshold)
            found.append({"experiment": experiment, "kind": comparison["kind"],
                          "label": comparison["label"],
                          "configuration": "/".join(map(str, (*mine_named, *rest[:-1]))),
                          "reference": "/".join(map(str, (*theirs_named, *rest[:-1]))),
                          "case": rest[-1], "ratio": ratio, "ratio_low": low,
                          "ratio_high": high, "noise_floor": width,
                          "verdict": stats.verdict(low, high, width, threshold),
                          "median": float(pd.Series([s for p in mine.values() for s in p]).median()),
                          "processes": len(mine)})
    return found


def fastest(summary, experiment, labels, case):
    """The fastest configuration measured, per case (and device), twins aside."""
    rows = summary[(summary["experiment"] == experiment) & summary["ratio"].notna()]
    if "environment" in labels:
        rows = rows[~rows["environment"].astype(str).str.endswith(TWIN)]
    by = [case] + (["device"] if "device" in labels else [])
    found = []
    for _, group in rows.groupby(by):
        row = group.loc[group["median"].idxmin()]
        found.append({"experiment": experiment, "kind": "fastest",
                      "label": _name(row, labels), "configuration": _name(row, labels),
                      "reference": row["baseline"], "case": row[case],
                      **{k: row[k] for k in ("ratio", "ratio_low", "ratio_high", "noise_floor",
                                             "verdict")},
                      "median": row["median"], "processes": row["processes"]})
    return found


def _to_resolve(row, threshold):
    """stats.processes_to_resolve; at least UNSEEN_KIND_PROCESSES where withheld for kinds."""
    needed = stats.processes_to_resolve(row.ratio, row.ratio_low, row.ratio_high,
                                        row.noise_floor, row.processes, threshold)
    return max(needed or 0, stats.UNSEEN_KIND_PROCESSES) if row.withheld_for_kinds else needed


def build(summary, tables, settings, comparisons, threshold):
    """verdicts.csv: every experiment's rows (`settings`: {experiment: {labels, case}};
    `comparisons`: {experiment: the pairs its section names})."""
    found = []
    kinds = ["A/A", "fastest"]
    for experiment, setting in settings.items():
        found += from_summary(summary, experiment, setting["labels"], setting["case"])
        found += fastest(summary, experiment, setting["labels"], setting["case"])
        named = comparisons.get(experiment, [])
        if named:
            found += pairs(experiment, tables[experiment], summary, named, setting["labels"],
                           setting["case"], threshold)
        kinds += [c["kind"] for c in named if c["kind"] not in kinds]
    order = {kind: i for i, kind in enumerate([*kinds, "vs baseline"])}
    table = pd.DataFrame(found)
    if "withheld_for_kinds" not in table:
        table["withheld_for_kinds"] = False
    table["withheld_for_kinds"] = table["withheld_for_kinds"].fillna(False).astype(bool)
    table["processes_to_resolve"] = [_to_resolve(r, threshold) for r in table.itertuples()]
    table["processes_to_resolve"] = table["processes_to_resolve"].astype("Int64")
    return table.sort_values(["experiment", "kind", "case"], key=lambda c: c.map(order)
                             if c.name == "kind" else c, kind="stable")
