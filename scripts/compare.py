#!/usr/bin/env python3
"""Compare two result sets (two machines, two versions, two dates), configuration by
configuration, as pyperf's compare_to does: the ratio of medians (after / before) with an
interval from a hierarchical bootstrap over processes, and a change called only when that
interval lies wholly outside 1 +- the threshold, `same` only when it lies wholly inside, else
`inconclusive`: the rule of the summary's verdicts.

    compare.py results/paper results --out results/comparison

Reads each set's tidy tables and its config_used.yaml (which names what identifies a measured
configuration); writes `comparison.csv` and `comparison.png` under --out, and says which
machines are compared, whether they are of one kind, and what was left out because only one
set has it; where both sets have verdicts, `verdicts.csv` puts each knob's verdict in both
side by side and says where they contradict each other (both resolved, and different).
"""

import argparse
import os
import sys

import pandas as pd
import yaml

from knobs import config_check, experiments, figures, stats
from knobs.tables import probe_kind

SCHEMA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "config", "schema.yaml")


def keys_of(result_set):
    """{experiment: the table columns that name one measured thing} of a result set."""
    path = os.path.join(result_set, "config_used.yaml")
    if not os.path.exists(path):
        sys.exit(f"compare: {path} is missing: a result set is a folder the workflow wrote "
                 "(tables/ and config_used.yaml)")
    with open(path) as handle:
        config = config_check.fill_defaults(yaml.safe_load(handle), SCHEMA)
    return {name: x.keys() for name, x in experiments.experiments(config).items()
            if not x.reference}


def load(result_set, experiment):
    path = os.path.join(result_set, "tables", f"{experiment}.csv")
    if not os.path.exists(path):
        return None
    table = pd.read_csv(path, low_memory=False)
    return table[table["seconds"].notna()]


def change_of(low, high, threshold):
    """The verdict rule between two sets: `same` where the summary would say `no effect`."""
    call = stats.verdict(low, high, threshold)
    return "same" if call == "no effect" else call


def compare(before, after, keys, threshold):
    groups_before = {k: stats.processes_of(g) for k, g in before.groupby(keys)}
    groups_after = {k: stats.processes_of(g) for k, g in after.groupby(keys)}
    common = sorted(set(groups_before) & set(groups_after), key=str)
    rows = []
    for number, key in enumerate(common):
        a, b = groups_before[key], groups_after[key]
        ratio, low, high = stats.ratio_interval(b, a, seed=number, paired=False)  # two times
        change = change_of(low, high, threshold)
        rows.append({**dict(zip(keys, key)), "median_before": float(pd.Series(
            [s for p in a.values() for s in p]).median()), "median_after": float(pd.Series(
                [s for p in b.values() for s in p]).median()), "ratio": ratio, "ratio_low": low,
            "ratio_high": high, "change": change, "processes_before": len(a),
            "processes_after": len(b)})
    only_before = sorted(set(groups_before) - set(groups_after), key=str)
    only_after = sorted(set(groups_after) - set(groups_before), key=str)
    return pd.DataFrame(rows), only_before, only_after


WARM = ("warm", "warm4k")  # the fault probe's copy into a warm buffer (named warm before 4 KiB/2 MiB)


def machine_copy(before, after, threshold):
    """{bytes: (ratio, change)} of the fault probe's copy into a warm buffer, run in every round
    of both sets: how the machine's own copy at each size moved between them; {} where a set
    has no such probe."""
    tables = [load(s, "faults") for s in (before, after)]
    if any(t is None or "case" not in t for t in tables):
        return {}
    warm = [t[probe_kind(t).isin(WARM)] for t in tables]
    moved = {}
    for number, nbytes in enumerate(sorted(set(warm[0]["bytes"]) & set(warm[1]["bytes"]))):
        a, b = (stats.processes_of(w[w["bytes"] == nbytes]) for w in warm)
        ratio, low, high = stats.ratio_interval(b, a, seed=number, paired=False)
        moved[nbytes] = (ratio, change_of(low, high, threshold))
    return moved


def machines(table):
    return sorted(table["machine_kind"].dropna().unique()) if "machine_kind" in table else [
        f"{table.iloc[0]['cpu']} (kind not recorded)"]


def compare_verdicts(before, after):
    """Each knob verdict of both sets, side by side (kind, label, configuration, case)."""
    paths = [os.path.join(s, "tables", "verdicts.csv") for s in (before, after)]
    if not all(os.path.exists(p) for p in paths):
        return None
    keys = ["experiment", "kind", "label", "configuration", "case"]
    a, b = (pd.read_csv(p, low_memory=False).astype({"case": str}) for p in paths)
    joined = a.merge(b, on=keys, suffixes=("_before", "_after"))
    joined = joined[joined["kind"] != "fastest"]
    joined["same_verdict"] = joined["verdict_before"] == joined["verdict_after"]
    joined["contradicts"] = [stats.contradicts(a, b) for a, b in
                             zip(joined["verdict_before"], joined["verdict_after"])]
    columns = ("ratio", "ratio_low", "ratio_high", "noise_floor", "verdict")
    return joined[keys + [f"{c}_{s}" for c in columns for s in ("before", "after")
                          if f"{c}_{s}" in joined] + ["same_verdict", "contradicts"]]


def plot(comparison, path, title):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    comparison = comparison.sort_values("ratio").reset_index(drop=True)
    colours = comparison["change"].map({"same": "0.55", "slower": "tab:red",
                                        "faster": "tab:blue", "inconclusive": "tab:orange"})
    fig, ax = plt.subplots(figsize=(9, 0.22 * len(comparison) + 1.8))
    for y, row in comparison.iterrows():
        ax.errorbar(row["ratio"], y, xerr=[[row["ratio"] - row["ratio_low"]],
                                          [row["ratio_high"] - row["ratio"]]],
                    fmt="o", ms=3, capsize=2, color=colours[y])
    ax.axvline(1, color="0.3", lw=1)
    ax.set_yticks(range(len(comparison)), comparison["label"], fontsize=6)
    ax.set_xscale("log")
    ax.set_xlabel("time after / time before (ratio of medians, 95% interval over processes;\n"
                  "red slower, blue faster, grey the same, orange inconclusive)")
    ax.set_ylim(-1, len(comparison))
    ax.set_title(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=130, bbox_inches="tight")  # the longest labels overrun tight_layout


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", help="a result set: a folder holding tables/")
    parser.add_argument("after")
    parser.add_argument("--out", required=True)
    parser.add_argument("--threshold", type=float, default=0.05,
                        help="smallest relative change called one (default 5%%)")
    args = parser.parse_args(argv)
    parts, report = [], []
    keys = {**keys_of(args.after), **keys_of(args.before)}
    moved = machine_copy(args.before, args.after, args.threshold)  # once, for every copy row
    for experiment, columns in keys.items():
        before, after = load(args.before, experiment), load(args.after, experiment)
        if before is None or after is None:
            missing = [s for s, t in ((args.before, before), (args.after, after)) if t is None]
            report.append(f"{experiment}: not compared, no table in {', '.join(missing)}")
            continue
        kinds = (machines(before), machines(after))
        if kinds[0] != kinds[1]:
            report.append(f"{experiment}: DIFFERENT KINDS OF MACHINE: a change may be the "
                          f"machine's:\n  before: {'; '.join(kinds[0])}\n  after:  "
                          f"{'; '.join(kinds[1])}")
        table, only_before, only_after = compare(before, after, columns, args.threshold)
        report.append(f"{experiment}: {before.iloc[0]['host']} -> {after.iloc[0]['host']}: "
                      f"{len(table)} configurations compared, {len(only_before)} only before, "
                      f"{len(only_after)} only after")
        for name, left in (("only in " + args.before, only_before),
                           ("only in " + args.after, only_after)):
            for key in left[:20]:
                report.append(f"  left out ({name}): {dict(zip(columns, key))}")
            if len(left) > 20:
                report.append(f"  ... and {len(left) - 20} more {name}")
        if len(table):
            table["same_kind_of_machine"] = kinds[0] == kinds[1]
            if "bytes" in table and moved:  # a copy of this size: did the machine's copy move?
                table["machine_copy_ratio"] = table["bytes"].map(
                    lambda n: moved.get(n, (float("nan"), None))[0])
                table["machine_copy_change"] = table["bytes"].map(
                    lambda n: moved.get(n, (None, None))[1])
            table["label"] = table[columns].astype(str).agg(" ".join, axis=1)
            parts.append(table)
    print("\n".join(report))
    if not parts:
        sys.exit("compare: the two result sets share no configuration; nothing to compare")
    comparison = pd.concat(parts, ignore_index=True)
    os.makedirs(args.out, exist_ok=True)
    comparison.to_csv(os.path.join(args.out, "comparison.csv"), index=False)
    plot(comparison, os.path.join(args.out, "comparison.png"),
         f"{args.after} against {args.before}")
    changed = comparison[comparison["change"].isin(["faster", "slower"])]
    print(f"{len(changed)} changes called of {len(comparison)} ({len(changed) / len(comparison):.0%}): "
          f"{(changed['change'] == 'slower').sum()} slower, "
          f"{(changed['change'] == 'faster').sum()} faster; "
          f"{(comparison['change'] == 'inconclusive').sum()} inconclusive")
    if len(changed) and comparison.get("machine_copy_change", pd.Series()).notna().any():
        with_machine = changed[changed["machine_copy_change"] == changed["change"]]
        print(f"{len(with_machine)} of the {len(changed)} changes are copies at a size where the "
              "machine's own copy (the fault probe's copy into a warm buffer) changed the same "
              "way (more likely the machine's doing than the code's)")
    verdicts = compare_verdicts(args.before, args.after)
    if verdicts is not None:
        verdicts.to_csv(os.path.join(args.out, "verdicts.csv"), index=False)
        print(f"knob verdicts: {verdicts['same_verdict'].sum()} of {len(verdicts)} the same in "
              f"both sets, {verdicts['contradicts'].sum()} contradict each other")
        for row in verdicts[~verdicts["same_verdict"]].itertuples():
            print(f"  {'CONTRADICTS' if row.contradicts else 'differs'}: {row.experiment} "
                  f"{row.kind} {row.label} ({row.case}): "
                  f"{row.verdict_before} ({row.ratio_before:.3f}) -> {row.verdict_after} "
                  f"({row.ratio_after:.3f})")


if __name__ == "__main__":
    main()
