#!/usr/bin/env python3
"""Write the README's result tables and sentences from the shipped result set's tables, so
that prose can never disagree with the numbers.

    readme_results.py            rewrite every block between <!-- BEGIN generated: NAME -->
                                 and <!-- END generated: NAME --> in README.md
    readme_results.py --check    fail, naming the block, if any is not what the tables say

Reads results/paper/tables/ (summary, verdicts, copy, faults, hourglass) and, where present,
results/paper/aa/ (two default runs compared by `make compare`).
"""

import argparse
import re
import sys
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parent.parent
TWIN = ".twin"


def ms(seconds):
    value = 1e3 * seconds
    return f"{value:.3g}" if value < 100 else f"{value:.0f}"


def interval(row, prefix="ratio"):
    return f"{row[prefix]:.2f}x [{row[prefix + '_low']:.2f}, {row[prefix + '_high']:.2f}]"


class Tables:
    def __init__(self, root):
        self.root = root
        read = lambda name: pd.read_csv(root / "tables" / f"{name}.csv", low_memory=False)
        self.summary, self.verdicts = read("summary"), read("verdicts")
        self.copy, self.hourglass = read("copy"), read("hourglass")
        self.faults = read("faults") if (root / "tables" / "faults.csv").exists() else None
        self.machine = self.copy.iloc[0]

    def copy_point(self, framework, environment, batch):
        rows = self.summary[(self.summary["experiment"] == "copy")
                            & (self.summary["framework"] == framework)
                            & (self.summary["environment"] == environment)
                            & (self.summary["batch"] == batch)]
        return rows.iloc[0] if len(rows) else None

    def copy_faults(self, framework, environment, batch):
        rows = self.copy[(self.copy["framework"] == framework)
                         & (self.copy["environment"] == environment)
                         & (self.copy["batch"] == batch)]
        return rows["minor_faults"].median() if len(rows) else None


def machine_line(t):
    m = t.machine
    processes = t.summary["processes"]
    return (f"{m['cpu']} ({m['machine_kind'].split(', ', 1)[1] if 'machine_kind' in m else ''}), "
            f"glibc {m['glibc'].split()[-1]}, kernel {m['kernel']}, THP `{m['thp_enabled']}`; "
            f"{processes.min()}-{processes.max()} processes per configuration, run in rounds")


def copy_table(t):
    lines = ["| framework | glibc b8 -> b16 (ms, step) | faults/call b16 (glibc) | tcmalloc b16 "
             "| glibc_tuned b16 | huge pages b16 |", "|---|---|---|---|---|---|"]
    frameworks = [f for f in dict.fromkeys(t.copy["framework"]) if f != "copyto"]
    for framework in frameworks:
        b8, b16 = t.copy_point(framework, "glibc", 8), t.copy_point(framework, "glibc", 16)
        if b8 is None or b16 is None:
            continue
        cells = [f"{ms(b8['median'])} -> {ms(b16['median'])} (**{b16['median'] / b8['median']:.1f}x**)",
                 f"{t.copy_faults(framework, 'glibc', 16):,.0f}"]
        for environment in ("tcmalloc", "glibc_tuned"):
            row = t.copy_point(framework, environment, 16)
            cells.append("-" if row is None else
                         f"{ms(row['median'])} ({row['ratio']:.2f}x, {row['verdict']})")
        huge = [(e, t.copy_point(framework, e, 16)) for e in ("hugepages_off", "torch_thp")]
        cells.append("; ".join(f"`{e}`: {ms(r['median'])}, {t.copy_faults(framework, e, 16):,.0f} "
                               "faults" for e, r in huge if r is not None) or "-")
        lines.append(f"| {framework} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def fault_costs(t):
    if t.faults is None:
        return "No fault probe in this result set."
    probe = t.faults[t.faults["minor_faults"] > 0]
    per = (probe["seconds"] / probe["minor_faults"]).groupby(probe["case"])
    text = {case: f"{1e6 * values.median():.3g} us" for case, values in per}
    model = t.copy[(t.copy["device"] == "cpu") & t.copy["predicted_seconds"].notna()]
    points = model.groupby(["framework", "environment", "batch"]).agg(
        measured=("seconds", "median"), predicted=("predicted_seconds", "median"),
        faults=("minor_faults", "median"))
    error = points["measured"] / points["predicted"] - 1
    faulting = points[points["faults"] > 0]
    faulting_error = faulting["measured"] / faulting["predicted"] - 1
    return (f"One minor fault costs {text.get('4k', '?')} for a 4 KiB page and "
            f"{text.get('2m', '?')} for a 2 MiB huge page here (the probe's median). With "
            f"these, the model (copy limit + faults x cost) predicts {(error.abs() <= 0.15).mean():.0%} "
            f"of the {len(points)} CPU configurations within 15%, and "
            f"{(faulting_error.abs() <= 0.15).mean():.0%} of the {len(faulting)} that fault "
            "on every call.")


def noise(t):
    aa = t.verdicts[t.verdicts["kind"] == "A/A"]
    lines = []
    for experiment, rows in aa.groupby("experiment"):
        far = (rows["ratio_high"] - 1).combine(1 / rows["ratio_low"] - 1, max)
        lines.append(f"- **{experiment}**: the baseline against its A/A twin, over "
                     f"{len(rows)} cases: ratios {rows['ratio'].min():.3f} to "
                     f"{rows['ratio'].max():.3f}; the widest interval reaches "
                     f"+-{far.max():.1%}, the median one +-{far.median():.1%}; all "
                     f"`{rows['verdict'].iloc[0]}`" if (rows["verdict"] == "no effect measured").all()
                     else f"- **{experiment}**: A/A verdicts: "
                     + ", ".join(f"{k} {v}" for k, v in rows["verdict"].value_counts().items()))
    flagged = pd.concat([t.copy, t.hourglass]).drop_duplicates(["configuration", "rep"])
    disturbed = flagged["disturbed"].notna().sum()
    lines.append(f"- processes flagged as disturbed: {disturbed} of {len(flagged)}; the most "
                 f"other processes used during one: {flagged['other_cpus'].max():.2f} CPUs, the "
                 f"most steal: {flagged['steal_share'].max():.1%}")
    return "\n".join(lines)


def hourglass_table(t):
    summary = t.summary[t.summary["experiment"] == "hourglass"]
    verdicts = t.verdicts[t.verdicts["experiment"] == "hourglass"]
    steps = t.hourglass[t.hourglass["status"] == "ok"]
    lines = ["| configuration | train (ms) | vs baseline | against the rung before | forward (ms) "
             "| CPU ms / train step | faults / train step | share of peak |",
             "|---|---|---|---|---|---|---|---|"]
    for (rung, label, configuration), rows in steps.groupby(["rung", "label", "configuration"]):
        framework, variant, environment = rows.iloc[0][["framework", "variant", "environment"]]
        pick = lambda phase: summary[(summary["framework"] == framework)
                                     & (summary["variant"] == variant)
                                     & (summary["environment"] == environment)
                                     & (summary["phase"] == phase)].iloc[0]
        train, forward = pick("train"), pick("forward")
        before = verdicts[(verdicts["kind"].isin(["rung", "ablation", "variation", "torch variant",
                                                  "torch environment"]))
                          & (verdicts["label"] == label) & (verdicts["case"] == "train")]
        against = (f"{interval(before.iloc[0])} {before.iloc[0]['verdict']}" if len(before)
                   else "-")
        trained = rows[rows["phase"] == "train"]
        lines.append(
            f"| {label} | {ms(train['median'])} [{ms(train['ci_low'])}, {ms(train['ci_high'])}] "
            f"| {interval(train)} {train['verdict']} | {against} | {ms(forward['median'])} "
            f"| {ms(trained['cpu_seconds'].median())} | {trained['minor_faults'].median():,.0f} "
            f"| {trained['fraction_of_peak'].median():.0%} |")
    return "\n".join(lines)


def hourglass_sentences(t):
    verdicts = t.verdicts[(t.verdicts["experiment"] == "hourglass")
                          & (t.verdicts["case"] == "train")]
    lines = []
    fastest = verdicts[verdicts["kind"] == "fastest"]
    if len(fastest):
        row = fastest.iloc[0]
        lines.append(f"- The fastest train step measured: `{row['configuration']}`, "
                     f"{ms(row['median'])} ms, {interval(row)} of the baseline: {row['verdict']}.")
    for kind, title in (("rung", "Each rung against the rung before"),
                        ("ablation", "Each knob taken back from the last rung"),
                        ("variation", "Variations of the last rung"),
                        ("torch variant", "PyTorch's knobs"),
                        ("torch environment", "PyTorch under another allocator")):
        rows = verdicts[verdicts["kind"] == kind]
        if len(rows):
            lines.append(f"- {title} (train step): " + "; ".join(
                f"{r['label']}: {interval(r)}, **{r['verdict']}**" for _, r in rows.iterrows())
                + ".")
    return "\n".join(lines)


def ruler(t):
    steps = t.hourglass[(t.hourglass["status"] == "ok") & (t.hourglass["phase"] == "train")]
    base = steps[steps["configuration"].str.startswith("torch/eager/glibc/")]
    seed = steps[steps["label"].str.startswith("seed")]
    if base.empty or seed.empty:
        return "The ruler needs the TensorFlow seed and PyTorch eager under glibc."
    wall, cpu = seed["seconds"].median(), seed["cpu_seconds"].median()
    torch_wall = base["seconds"].median()
    return (f"TensorFlow's seed setup (`{seed.iloc[0]['variant']}`) takes {ms(wall)} ms per "
            f"train step by the wall clock and {ms(cpu)} ms of process CPU time; PyTorch eager "
            f"takes {ms(torch_wall)} ms by the wall clock. By the wall clock TensorFlow is "
            f"**{wall / torch_wall:.2f}x** PyTorch; measured the seed's way (TensorFlow's CPU "
            f"time against PyTorch's wall time) it is **{cpu / torch_wall:.2f}x**: the ruler "
            f"alone moves the answer by {cpu / wall:.2f}x, against the seed's 2.09x.")


def aa_comparison(t):
    folder = t.root / "aa"
    if not (folder / "comparison.csv").exists():
        return "Not measured in this result set."
    comparison = pd.read_csv(folder / "comparison.csv")
    changed = comparison[comparison["change"] != "same"]
    text = (f"Two default runs of the same code on this machine, compared with `make compare`: "
            f"{len(changed)} of {len(comparison)} configurations called changed "
            f"({len(changed) / len(comparison):.1%})")
    if (folder / "verdicts.csv").exists():
        verdicts = pd.read_csv(folder / "verdicts.csv")
        text += (f"; {verdicts['same_verdict'].sum()} of {len(verdicts)} knob verdicts the same "
                 "in both")
        differ = verdicts[~verdicts["same_verdict"]]
        if len(differ):
            text += " (" + "; ".join(f"{r.label}, {r.case}: {r.verdict_before} -> "
                                     f"{r.verdict_after}" for r in differ.itertuples()) + ")"
    return text + "."


BLOCKS = {"machine": machine_line, "copy-table": copy_table, "fault-costs": fault_costs,
          "noise": noise, "hourglass-table": hourglass_table,
          "hourglass-verdicts": hourglass_sentences, "ruler": ruler, "aa": aa_comparison}


def render(readme, tables):
    def replace(match):
        name = match.group(1)
        return (f"<!-- BEGIN generated: {name} -->\n{BLOCKS[name](tables).strip()}\n"
                f"<!-- END generated: {name} -->")

    return re.sub(r"<!-- BEGIN generated: ([\w-]+) -->.*?<!-- END generated: \1 -->", replace,
                  readme, flags=re.S)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--set", default=str(REPO / "results" / "paper"))
    parser.add_argument("--readme", default=str(REPO / "README.md"))
    args = parser.parse_args(argv)
    readme = Path(args.readme).read_text()
    updated = render(readme, Tables(Path(args.set)))
    if args.check:
        if updated != readme:
            stale = [name for name in BLOCKS if f"generated: {name}" in readme
                     and re.search(rf"<!-- BEGIN generated: {name} -->.*?<!-- END", readme, re.S)
                     .group(0) != re.search(rf"<!-- BEGIN generated: {name} -->.*?<!-- END",
                                            updated, re.S).group(0)]
            sys.exit(f"README.md disagrees with {args.set}'s tables in: {', '.join(stale)}; "
                     "run python scripts/readme_results.py")
        return 0
    Path(args.readme).write_text(updated)
    return 0


if __name__ == "__main__":
    sys.exit(main())
