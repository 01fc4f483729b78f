#!/usr/bin/env python3
"""Compare two result sets (two machines, two versions, two dates), configuration by
configuration, as pyperf's compare_to does: the ratio of medians with a bootstrap interval,
a Mann-Whitney test, and a flag on each significant change.

    compare.py results/paper results --out results/comparison

Reads each set's tidy tables (`<set>/tables/{copy,hourglass}.csv`); writes
`comparison.csv` and `comparison.png` under --out, and says what was compared and what was
left out because only one set has it.
"""

import argparse
import os
import sys

import pandas as pd

from knobs.stats import bootstrap_ratio_of_medians, mann_whitney_p

# What names a configuration in each experiment's table; everything else is a measurement or
# a description of where it ran.
KEYS = {
    "copy": ["framework", "environment", "device", "input", "batch"],
    "hourglass": ["framework", "variant", "environment", "device", "phase", "stacks",
                  "resolution", "batch"],
}


def load(result_set, experiment):
    path = os.path.join(result_set, "tables", f"{experiment}.csv")
    if not os.path.exists(path):
        return None
    table = pd.read_csv(path, low_memory=False)
    return table[table["seconds"].notna()]


def compare(before, after, keys, threshold, alpha=0.05):
    groups_before = {k: g["seconds"].to_numpy() for k, g in before.groupby(keys)}
    groups_after = {k: g["seconds"].to_numpy() for k, g in after.groupby(keys)}
    common = sorted(set(groups_before) & set(groups_after), key=str)
    rows = []
    for key in common:
        a, b = groups_before[key], groups_after[key]
        ratio, low, high = bootstrap_ratio_of_medians(b, a)
        p = mann_whitney_p(a, b)
        significant = p < alpha and not low <= 1 <= high and abs(ratio - 1) >= threshold
        change = "same" if not significant else ("slower" if ratio > 1 else "faster")
        rows.append({**dict(zip(keys, key)), "median_before": float(pd.Series(a).median()),
                     "median_after": float(pd.Series(b).median()), "ratio": ratio,
                     "ratio_low": low, "ratio_high": high, "p_value": p, "change": change,
                     "n_before": a.size, "n_after": b.size})
    only_before = sorted(set(groups_before) - set(groups_after), key=str)
    only_after = sorted(set(groups_after) - set(groups_before), key=str)
    return pd.DataFrame(rows), only_before, only_after


def describe(table):
    first = table.iloc[0]
    return f"{first['host']} ({first['cpu']})"


def plot(comparison, path, title):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    comparison = comparison.sort_values("ratio").reset_index(drop=True)
    labels = comparison["label"]
    colours = comparison["change"].map({"same": "0.55", "slower": "tab:red",
                                        "faster": "tab:blue"})
    fig, ax = plt.subplots(figsize=(9, 0.22 * len(comparison) + 1.8))
    for y, row in comparison.iterrows():
        ax.errorbar(row["ratio"], y, xerr=[[row["ratio"] - row["ratio_low"]],
                                          [row["ratio_high"] - row["ratio"]]],
                    fmt="o", ms=3, capsize=2, color=colours[y])
    ax.axvline(1, color="0.3", lw=1)
    ax.set_yticks(range(len(labels)), labels, fontsize=6)
    ax.set_xscale("log")
    ax.set_xlabel("time after / time before (ratio of medians, 95% bootstrap CI; "
                  "red slower, blue faster, grey no significant change)")
    ax.set_title(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=130)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", help="a result set: a folder holding tables/")
    parser.add_argument("after")
    parser.add_argument("--out", required=True)
    parser.add_argument("--threshold", type=float, default=0.05,
                        help="smallest relative change reported as one (default 5%%)")
    args = parser.parse_args(argv)
    parts, report = [], []
    for experiment, keys in KEYS.items():
        before, after = load(args.before, experiment), load(args.after, experiment)
        if before is None or after is None:
            missing = [s for s, t in ((args.before, before), (args.after, after)) if t is None]
            report.append(f"{experiment}: not compared, no table in {', '.join(missing)}")
            continue
        table, only_before, only_after = compare(before, after, keys, args.threshold)
        report.append(f"{experiment}: {describe(before)} -> {describe(after)}: "
                      f"{len(table)} configurations compared, {len(only_before)} only before, "
                      f"{len(only_after)} only after")
        for name, left in (("only in " + args.before, only_before),
                           ("only in " + args.after, only_after)):
            for key in left[:20]:
                report.append(f"  left out ({name}): {dict(zip(keys, key))}")
            if len(left) > 20:
                report.append(f"  ... and {len(left) - 20} more {name}")
        if len(table):
            table.insert(0, "experiment", experiment)
            table["label"] = table[keys].astype(str).agg(" ".join, axis=1)
            parts.append(table)
    print("\n".join(report))
    if not parts:
        sys.exit("compare: the two result sets share no configuration; nothing to compare")
    comparison = pd.concat(parts, ignore_index=True)
    os.makedirs(args.out, exist_ok=True)
    comparison.to_csv(os.path.join(args.out, "comparison.csv"), index=False)
    plot(comparison, os.path.join(args.out, "comparison.png"),
         f"{args.after} against {args.before}")
    changed = comparison[comparison["change"] != "same"]
    print(f"{len(changed)} significant changes of {len(comparison)}: "
          f"{(changed['change'] == 'slower').sum()} slower, "
          f"{(changed['change'] == 'faster').sum()} faster")


if __name__ == "__main__":
    main()
