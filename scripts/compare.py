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

Where a benchmark says which of its configurations do the same work (its `same_work` hook;
the copy step's: one size, device, page kind and store path, in any framework or allocator),
each is also compared beyond the machine: against the median ratio of the others doing its
work (`change_beyond_machine`). Two runs of the same code are judged by that, since on a VM
the cache a process gets moves between hours for all of one work at once; two machines or two
versions of a framework by `change`, which keeps that in.
"""

import argparse
import functools
import os
import sys

import pandas as pd
import yaml

from knobs import config_check, experiments, finder, stats


def config_of(result_set):
    path = os.path.join(result_set, "config_used.yaml")
    if not os.path.exists(path):
        sys.exit(f"compare: {path} is missing: a result set is a folder the workflow wrote "
                 "(tables/ and config_used.yaml)")
    with open(path) as handle:
        return config_check.fill_defaults(yaml.safe_load(handle))


def keys_of(config):
    """{experiment: the table columns that name one measured thing} of a result set."""
    return {name: x.keys() for name, x in experiments.experiments(config).items()
            if not x.reference}


@functools.lru_cache(maxsize=None)  # read once: the comparison and the verdicts' faults both use it
def load(result_set, experiment):
    path = os.path.join(result_set, "tables", f"{experiment}.csv")
    if not os.path.exists(path):
        return None
    table = pd.read_csv(path, low_memory=False)
    return table[table["seconds"].notna()]


def same_work_of(configs, experiment):
    """The hooks of the experiment's benchmark where they say which configurations do the same
    work (`same_work`), else None."""
    for config in configs:
        found = experiments.experiments(config).get(experiment)
        hooks = finder.plugin(found.plugin) if found is not None else None
        if hooks is not None and hasattr(hooks, "same_work"):
            return hooks
    return None


def change_of(low, high, threshold):
    """The verdict rule between two sets: `same` where the summary would say `no effect`."""
    call = stats.verdict(low, high, threshold)
    return "same" if call == "no effect" else call


def faults_per_call(table, keys):
    """{configuration: median minor faults per timed call} (empty where not recorded)."""
    if "minor_faults" not in table:
        return {}
    return table.groupby(keys)["minor_faults"].median().to_dict()


def compare(before, after, keys, threshold):
    """One row per configuration both sets measured: the ratio of medians (after / before)
    with its interval and change, and the median minor faults per call in each."""
    groups_before = {k: stats.processes_of(g) for k, g in before.groupby(keys)}
    groups_after = {k: stats.processes_of(g) for k, g in after.groupby(keys)}
    faults = (faults_per_call(before, keys), faults_per_call(after, keys))
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
            "processes_after": len(b), "faults_before": faults[0].get(key),
            "faults_after": faults[1].get(key)})
    only_before = sorted(set(groups_before) - set(groups_after), key=str)
    only_after = sorted(set(groups_after) - set(groups_before), key=str)
    return pd.DataFrame(rows), only_before, only_after


MIN_OTHERS = 4  # the fewest others doing the same work whose median move is the machine's


def beyond_machine(table, threshold, work):
    """Each configuration's ratio against the median ratio of the others doing its `work`
    (one key per row, None where it did no work it shares): what moved beyond what all of that
    work moved between the two sets, which on one machine is the machine's doing (the share of
    the cache a VM gets moves between hours). The others' median is taken as known: with
    MIN_OTHERS or more it moves far less than one configuration's ratio."""
    table = table.copy()
    work = pd.Series(list(work), index=table.index)
    ratios = pd.Series(index=table.index, dtype=float)
    for key, rows in work.dropna().groupby(work.dropna()).groups.items():
        if len(rows) <= MIN_OTHERS:
            continue
        for row in rows:
            ratios[row] = table.loc[rows.drop(row), "ratio"].median()
    table["machine_ratio"] = ratios
    for column in ("ratio", "ratio_low", "ratio_high"):
        table[column.replace("ratio", "ratio_beyond_machine")] = table[column] / ratios
    table["change_beyond_machine"] = [
        change_of(low, high, threshold) if pd.notna(m) else change for low, high, m, change in
        zip(table["ratio_beyond_machine_low"], table["ratio_beyond_machine_high"], ratios,
            table["change"])]
    return table


def machines(table):
    return sorted(table["machine_kind"].dropna().unique()) if "machine_kind" in table else [
        f"{table.iloc[0]['cpu']} (kind not recorded)"]


def faults_by_case(result_set, cases):
    """{(experiment, configuration, case): median minor faults per timed call} of a set
    (`cases`: {experiment: its case column}): whether two sets did the same work."""
    found = {}
    for experiment, case in cases.items():
        table = load(result_set, experiment)
        if table is not None and "minor_faults" in table and case in table:
            medians = table.groupby(["configuration", table[case].astype(str)])["minor_faults"]
            found.update({(experiment, *key): value for key, value in medians.median().items()})
    return found


def compare_verdicts(before, after, cases):
    """Each knob verdict of both sets, side by side (kind, label, configuration, case), with
    the configuration's minor faults per call in each set."""
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
    for side, result_set in (("before", before), ("after", after)):
        found = faults_by_case(result_set, cases)
        joined[f"faults_{side}"] = [found.get(key) for key in zip(
            joined["experiment"], joined["configuration"], joined["case"])]
    return joined[keys + [f"{c}_{s}" for c in columns for s in ("before", "after")
                          if f"{c}_{s}" in joined] + ["same_verdict", "contradicts",
                                                      "faults_before", "faults_after"]]


def faults_moved(row):
    """' (faults per call: a -> b)' where the configuration faulted differently in the two
    sets: they did different work, whatever the clock says."""
    before, after = row["faults_before"], row["faults_after"]
    if pd.isna(before) or pd.isna(after) or max(before + 1, after + 1) < 1.25 * min(
            before + 1, after + 1):  # the same within a quarter (+1: a change from none counts)
        return ""
    return f" (faults per call: {before:g} -> {after:g})"


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
        if pd.notna(row.get("machine_ratio")):
            ax.plot(row["machine_ratio"], y, "x", ms=4, color="0.2")
    ax.axvline(1, color="0.3", lw=1)
    labels = [label + ("" if beyond == change else f" ({beyond} beyond the machine)")
              for label, change, beyond in zip(comparison["label"], comparison["change"],
                                                comparison["change_beyond_machine"])]
    ax.set_yticks(range(len(comparison)), labels, fontsize=6)
    ax.set_xscale("log")
    ax.set_xlabel("time after / time before (ratio of medians, 95% interval over processes;\n"
                  "red slower, blue faster, grey the same, orange inconclusive;\n"
                  "x: the median move of the others doing the same work: the machine's)")
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
    configs = [config_of(s) for s in (args.before, args.after)]
    keys = {**keys_of(configs[1]), **keys_of(configs[0])}
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
            hooks = same_work_of(configs, experiment)
            if hooks is not None:
                table = beyond_machine(table, args.threshold, hooks.same_work(table, configs))
            table["label"] = table[columns].astype(str).agg(" ".join, axis=1)
            parts.append(table)
    print("\n".join(report))
    if not parts:
        sys.exit("compare: the two result sets share no configuration; nothing to compare")
    comparison = pd.concat(parts, ignore_index=True)
    if "change_beyond_machine" not in comparison:
        comparison["change_beyond_machine"] = None
    comparison["change_beyond_machine"] = comparison["change_beyond_machine"].fillna(
        comparison["change"])  # no probe copy of its kind to set aside: the change itself
    os.makedirs(args.out, exist_ok=True)
    comparison.to_csv(os.path.join(args.out, "comparison.csv"), index=False)
    plot(comparison, os.path.join(args.out, "comparison.png"),
         f"{args.after} against {args.before}")
    for what, column in (("changes called", "change"),
                         ("changes beyond the machine", "change_beyond_machine")):
        calls = comparison[column]
        changed = calls.isin(["faster", "slower"]).sum()
        print(f"{what}: {changed} of {len(comparison)} ({changed / len(comparison):.0%}): "
              f"{(calls == 'slower').sum()} slower, {(calls == 'faster').sum()} faster; "
              f"{(calls == 'inconclusive').sum()} inconclusive")
    if "machine_ratio" in comparison:
        print(f"  (beyond the machine: {comparison['machine_ratio'].notna().sum()} "
              "configurations set against the median move of the others doing the same work, "
              f"where more than {MIN_OTHERS} share it; every other configuration as called)")
    cases = {name: x.case for c in configs for name, x in experiments.experiments(c).items()}
    verdicts = compare_verdicts(args.before, args.after, cases)
    if verdicts is not None:
        verdicts.to_csv(os.path.join(args.out, "verdicts.csv"), index=False)
        print(f"knob verdicts: {verdicts['same_verdict'].sum()} of {len(verdicts)} the same in "
              f"both sets, {verdicts['contradicts'].sum()} contradict each other")
        for _, row in verdicts[~verdicts["same_verdict"]].iterrows():
            print(f"  {'CONTRADICTS' if row['contradicts'] else 'differs'}: {row['experiment']} "
                  f"{row['kind']} {row['label']} ({row['case']}): "
                  f"{row['verdict_before']} ({row['ratio_before']:.3f}) -> "
                  f"{row['verdict_after']} ({row['ratio_after']:.3f}){faults_moved(row)}")


if __name__ == "__main__":
    main()
