#!/usr/bin/env python3
"""Write the README's result tables and sentences from the shipped result set's tables, so
that prose can never disagree with the numbers.

    readme_results.py            rewrite every block between <!-- BEGIN generated: NAME -->
                                 and <!-- END generated: NAME --> in README.md
    readme_results.py --check    fail, naming the block, if any is not what the tables say

Reads results/paper/tables/ (summary, verdicts, copy, faults, hourglass), where present
results/paper/aa/ (two default runs compared by `make compare`), for the blocks named
`gpu-*` results/paper/gpu/tables/ (the GPU run), for `memcpy-nt` results/paper/memcpy_nt/, for
`layout-*` results/paper/layout/, for `fault-in-copy-*` results/paper/fault_in_copy/, and the
other sets SETS names (torch_copy/, aligned/, store_path_faults/, ...).
"""

import argparse
import collections
import dataclasses
import functools
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from knobs import experiments, figures, stats  # beside this script
from knobs import tables as tidy_tables
from knobs.benchmarks import faults
from knobs.hourglass import SEED_SECONDS
from compare import faults_moved  # scripts/compare.py, beside this script

REPO = Path(__file__).resolve().parent.parent
TWIN = experiments.TWIN


def ms(seconds):
    value = 1e3 * seconds
    return f"{value:.3g}" if value < 100 else f"{value:.0f}"


def interval(row, prefix="ratio"):
    return f"{row[prefix]:.2f}x [{row[prefix + '_low']:.2f}, {row[prefix + '_high']:.2f}]"


class Tables:
    def __init__(self, root):
        import yaml

        self.root = root
        self.config = yaml.safe_load((root / "config_used.yaml").read_text())
        read = lambda name: pd.read_csv(root / "tables" / f"{name}.csv", low_memory=False)
        self.summary, self.verdicts = read("summary"), read("verdicts")
        optional = lambda name: (read(name) if (root / "tables" / f"{name}.csv").exists()
                                 else None)
        self.copy, self.hourglass = optional("copy"), optional("hourglass")
        self.faults, self.ops = optional("faults"), optional("hourglass_ops")
        # the config's own benchmarks that have a table (a set may hold only these)
        self.benchmarks = {name: table for name in self.config.get("benchmarks", {})
                           if (table := optional(name)) is not None}
        measured = [table for table in (self.copy, *self.benchmarks.values()) if table is not None]
        if not measured:
            sys.exit(f"{root}: no table of the copy step or of a benchmark: run make paper")
        self.machine = measured[0].iloc[0]

    def copy_point(self, framework, environment, batch, device="cpu"):
        rows = self.summary[(self.summary["experiment"] == "copy")
                            & (self.summary["framework"] == framework)
                            & (self.summary["environment"] == environment)
                            & (self.summary["device"] == device)
                            & (self.summary["batch"] == batch)]
        return rows.iloc[0] if len(rows) else None

    def copy_faults(self, framework, environment, batch, device="cpu"):
        rows = self.copy[(self.copy["framework"] == framework)
                         & (self.copy["environment"] == environment)
                         & (self.copy["device"] == device)
                         & (self.copy["batch"] == batch)]
        return rows["minor_faults"].median() if len(rows) else None

    def kernel_ms(self, configuration):
        """A GPU configuration's kernel time per traced train step (ms, mean over processes)."""
        rows = self.ops[self.ops["configuration"] == configuration]
        return 1e3 * rows.groupby("rep")["seconds"].sum().mean() if len(rows) else float("nan")


@functools.lru_cache(maxsize=None)
def tables_at(root):
    """One result set's Tables, read once however many blocks ask for it."""
    return Tables(root)


def machine_line(t):
    m = t.machine
    processes = figures.span(t.summary["processes"])
    return (f"{m['cpu']} ({m['machine_kind'].split(', ', 1)[1] if 'machine_kind' in m else ''}), "
            f"glibc {m['glibc'].split()[-1]}, kernel {m['kernel']}, THP `{m['thp_enabled']}`; "
            f"{processes} processes per configuration, run in rounds")


def copy_table(t):
    lines = ["| framework | glibc b8 -> b16 (ms, step) | faults/call b16 (glibc) | tcmalloc b16 "
             "| glibc_tuned b16 | huge pages b16 |", "|---|---|---|---|---|---|"]
    for framework in t.config["copy"]["frameworks"]:
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


def probe_costs(t, page):
    """The fault probe's median cost per fault of one page size, by region size (bytes)."""
    costs = tidy_tables.fault_costs(t.faults)
    return costs[costs["page"] == page].groupby("bytes")["cost"].median()


def fault_costs(t):
    if t.faults is None:
        return "No fault probe in this result set."
    ranges, sized = [], False
    for page, name in (("4k", "a 4 KiB page"), ("2m", "a 2 MiB huge page")):
        cost = probe_costs(t, page)
        if len(cost) == 1:
            ranges.append(f"{1e6 * cost.iloc[0]:.3g} us for {name}")
        elif len(cost):
            sized = True
            ranges.append(f"{1e6 * cost.iloc[0]:.3g} us for {name} in a "
                          f"{cost.index[0] / 1e6:.3g} MB region to {1e6 * cost.iloc[-1]:.3g} us "
                          f"in a {cost.index[-1] / 1e6:.3g} MB one")
    size = ("at each call's own size" if sized else
            f"in one region of {probe_costs(t, '4k').index[0] / 1e6:.3g} MB")
    text = " and ".join(ranges)
    if "predicted_seconds" not in t.copy:  # a probe, but no CPU copies to model
        return summary_of_costs_only(text, size)
    points = model_points(t)
    error = points["measured"] / points["predicted"] - 1
    faulting = points[points["faults"] > 0]
    faulting_error = faulting["measured"] / faulting["predicted"] - 1
    summary = (f"One minor fault costs {text} here (the probe's medians, {size}). With "
               f"these, the model (copy limit + faults x cost) predicts "
               f"{(error.abs() <= 0.15).mean():.0%} of the {len(points)} CPU configurations "
               f"(framework, environment, batch) within 15%, and "
               f"{(faulting_error.abs() <= 0.15).mean():.0%} of the {len(faulting)} that fault.")
    if "in_copy" in points:
        summary += " " + fault_in_copy(t, faulting)
    return summary + "\n\n" + model_misses(t, points.assign(error=error))


def summary_of_costs_only(text, size):
    return f"One minor fault costs {text} here (the probe's medians, {size}); no CPU copy to model."


def model_points(t):
    """Per CPU configuration (framework, environment, batch): the medians of the measured time,
    the model's prediction, faults, and the prediction with a fault's cost inside a copy
    (`in_copy`, where the probe measured it)."""
    model = t.copy[(t.copy["device"] == "cpu") & t.copy["predicted_seconds"].notna()]
    in_copy = ("predicted_in_copy_seconds" in model
               and model["predicted_in_copy_seconds"].notna().any())
    return model.groupby(["framework", "environment", "batch"]).agg(
        measured=("seconds", "median"), predicted=("predicted_seconds", "median"),
        faults=("minor_faults", "median"),
        **({"in_copy": ("predicted_in_copy_seconds", "median")} if in_copy else {}))


def fault_in_copy_of_set(t):
    """The fault inside a copy, for the environments that copy as the probe does (glibc's
    default store path: no GLIBC_TUNABLES)."""
    points = model_points(t) if t.faults is not None else pd.DataFrame()
    if "in_copy" not in points:
        return "Not measured in this result set (its fault probe has no copy cases)."
    default_path = tidy_tables.copies_as_the_probe(t.config["environments"])
    environment = points.index.get_level_values("environment").str.replace(".twin", "")
    faulting = points[(points["faults"] > 0) & environment.isin(default_path)]
    return fault_in_copy(t, faulting)


def fault_in_copy(t, faulting):
    """What a fault costs inside a copy (the probe's copy into fresh pages less its copy into
    pages already there), and how the model does with that cost instead."""
    sizes = []
    for page, name in (("copy4k", "4 KiB"), ("copy2m", "2 MiB")):
        inside, alone = probe_costs(t, page), probe_costs(t, page[4:])
        sizes += [f"{name} at {nbytes / 1e6:.3g} MB: {1e6 * inside[nbytes]:.3g} us against "
                  f"{1e6 * alone[nbytes]:.3g} us touched alone" for nbytes in inside.index
                  if nbytes in alone.index and nbytes >= 16e6]
    error = faulting["measured"] / faulting["in_copy"] - 1
    was = faulting["measured"] / faulting["predicted"] - 1
    return (f"A fault taken inside a copy (the probe's copy into fresh pages less the same "
            f"copy into pages already there, per fault) costs: {'; '.join(sizes)}. With the "
            f"cost inside a copy, the model predicts {(error.abs() <= 0.15).sum()} of the "
            f"{len(faulting)} faulting configurations within 15% (against "
            f"{(was.abs() <= 0.15).sum()} with the touch's cost); by configuration, "
            + "; ".join(f"{f} {e} b{b} {w:+.0%} -> {n:+.0%}" for (f, e, b), w, n
                        in zip(faulting.index, was, error) if abs(w) > 0.15 or abs(n) > 0.15)
            + ".")


def configurations(rows):
    return f"{len(rows)} configuration{'s' * (len(rows) != 1)}"


def model_misses(t, points):
    """Where the model misses by more than 15%, grouped by the term it leaves out."""
    miss = points[points["error"].abs() > 0.15].reset_index()
    tensorflow = miss[miss["framework"] == "tensorflow"]
    partial = miss[miss["environment"].str.startswith("jemalloc") & (miss["faults"] > 0)
                   & (miss["faults"] * 4096 < miss["batch"].map(_bytes(t)))
                   & (miss["error"] < 0)]
    own_kernel = miss[(miss["framework"] == "torch") & (miss["faults"] == 0)]
    in_copy = miss[miss["framework"].isin(MEMCPY_USERS) & (miss["faults"] > 0)]
    small_pages = miss["faults"] * 4096 >= miss["batch"].map(_bytes(t))  # every page faults
    own_path = miss[(miss["framework"] == "torch") & small_pages & (miss["error"] < 0)]
    rest = miss.drop(tensorflow.index.union(partial.index).union(own_kernel.index)
                     .union(in_copy.index).union(own_path.index))
    lines = []
    if len(tensorflow):
        first = t.copy[(t.copy["framework"] == "tensorflow") & (t.copy["batch"] == 1)]
        overhead = first["seconds"].median() - first["limit_seconds"].median()
        lines.append(f"- TensorFlow at batches {sorted(set(tensorflow['batch']))} "
                     f"({configurations(tensorflow)}, "
                     f"{figures.span(tensorflow['error'], '{:+.0%}')}): the term left out is "
                     f"TensorFlow's fixed cost per call (a `tf.function` call and its `DeepCopy` dispatch), "
                     f"{1e3 * overhead:.2f} ms at batch 1 beyond the copy limit, which no fault "
                     "explains (it pays none).")
    if len(partial):
        lines.append(f"- jemalloc at batches {sorted(set(partial['batch']))} "
                     f"({configurations(partial)}, {figures.span(partial['error'], '{:+.0%}')}"
                     f"): it faults {figures.span(partial['faults'], '{:,.0f}')} "
                     "times per call, fewer than the output's 4 KiB pages, and asks for no huge "
                     "pages: it reuses part of a freed extent, where the model assumes a whole "
                     "fresh output.")
    if len(own_kernel):
        lines.append(f"- PyTorch's outputs that do not fault ({configurations(own_kernel)}: "
                     + ", ".join(f"{r.environment} b{r.batch} {r.error:+.0%}"
                                 for r in own_kernel.itertuples())
                     + "): the candidate term is PyTorch's own copy kernel, which is not "
                     "`memcpy` (`config/torch_copy.yaml` and `config/aligned.yaml` measure it "
                     "against `memcpy`, on the machine that runs them); by the spread "
                     "of their processes' medians: " + "; ".join(
                         process_spread(t, r.framework, r.environment, r.batch)
                         for r in own_kernel.itertuples()) + ".")
    if len(in_copy):
        measured = ("the probe measured it in this run (the copy cases)"
                    if "in_copy" in points else
                    "this run's probe did not measure it; the sets that did, and the same "
                    "copies measured again, are under \"A fault inside a copy\" below")
        lines.append(f"- The `memcpy` users' faulting copies ({configurations(in_copy)}, "
                     f"{figures.span(in_copy['error'], '{:+.0%}')}): the "
                     f"term left out is what a fault costs inside a copy ({measured}): "
                     + "; ".join(f"{r.framework} {r.environment} b{r.batch} {r.error:+.0%} "
                                 f"({r.faults:,.0f} faults)" for r in in_copy.itertuples()) + ".")
    if len(own_path):
        lines.append(f"- PyTorch's copies faster than predicted whose every 4 KiB page "
                     f"faults ({configurations(own_path)}, "
                     f"{figures.span(own_path['error'], '{:+.0%}')}): the term left out is "
                     "what a fault costs inside PyTorch's own store path (its kernel stores "
                     "vectors), below a touch's; not measured on this run's machine kind; on "
                     "an Intel Xeon of another model, priced so, such copies come within 15% "
                     "(\"The model with each copy's own fault\", below): " + "; ".join(
                         f"{r.framework} {r.environment} b{r.batch} {r.error:+.0%} "
                         f"({r.faults:,.0f} faults)" for r in own_path.itertuples()) + ".")
    if len(rest):
        huge = ("; PyTorch's with huge pages among their faults: on the Intel Xeon of another "
                "model neither a touch's cost nor a fault's cost inside the vector copy "
                "predicts them better at every batch (\"The model with each copy's own "
                "fault\", below)" if (rest["framework"] == "torch").all() else "")
        lines.append(f"- Not explained ({configurations(rest)}{huge}): "
                     + "; ".join(f"{r.framework} {r.environment} b{r.batch} {r.error:+.0%} "
                                 f"({r.faults:,.0f} faults)" for r in rest.itertuples()) + ".")
    return "\n".join(lines)


def process_spread(t, framework, environment, batch):
    rows = t.copy[(t.copy["framework"] == framework) & (t.copy["environment"] == environment)
                  & (t.copy["batch"] == batch) & (t.copy["device"] == "cpu")]
    medians = rows.groupby("rep")["seconds"].median()
    return (f"{framework} {environment} b{batch} {ms(medians.min())} to {ms(medians.max())} ms "
            f"over {len(medians)} processes")


def _bytes(t):
    return t.copy.groupby("batch")["bytes"].first()


def _counts(verdicts):
    """'30 no effect, 6 inconclusive': how many of each verdict, most first."""
    return ", ".join(f"{n} {v}" for v, n in verdicts.value_counts().items())


def noise(t):
    aa = t.verdicts[t.verdicts["kind"] == "A/A"]
    lines = []
    for experiment, rows in aa.groupby("experiment"):
        far = (rows["ratio_high"] - 1).combine(1 / rows["ratio_low"] - 1, max)
        lines.append(f"- **{experiment}**: the baseline against its A/A twin, over "
                     f"{len(rows)} cases: ratios {rows['ratio'].min():.3f} to "
                     f"{rows['ratio'].max():.3f}; the widest interval reaches "
                     f"+-{far.max():.1%}, the median one +-{far.median():.1%}; "
                     + _counts(rows["verdict"]))
    processes = pd.concat([t.copy, t.hourglass]).drop_duplicates(["configuration", "rep"])
    quiet = processes[processes["disturbed"].isna()]
    span = processes.assign(started=pd.to_datetime(processes["started"]),
                            finished=pd.to_datetime(processes["finished"])).groupby("rep")
    minutes = (span["finished"].max() - span["started"].min()).sum().total_seconds() / 60
    lines.append(
        f"- {len(processes)} copy and hourglass processes in {processes['rep'].max() + 1} rounds, "
        f"{minutes:.0f} minutes of measuring (each round from its first start to its last end, "
        "summed); other processes "
        f"used {quiet['other_cpus'].median():.2f} CPUs during the median undisturbed one "
        f"({quiet['other_cpus'].quantile(0.95):.2f} at the 95th percentile), the hypervisor "
        f"stole at most {processes['steal_share'].max():.1%}; "
        f"{(processes['attempts'] > 1).sum()} processes were measured again because the "
        f"first attempt was disturbed, and {processes['disturbed'].notna().sum()} stayed "
        f"flagged (disturbed twice; the most other processes used during one: "
        f"{processes['other_cpus'].max():.2f} CPUs)")
    verdicts = t.verdicts[t.verdicts["kind"] != "fastest"]
    half = half_width(verdicts["ratio"], verdicts["ratio_low"], verdicts["ratio_high"])
    open_ = verdicts[verdicts["verdict"] == "inconclusive"]
    needed = open_["processes_to_resolve"]
    per_round = minutes / (processes["rep"].max() + 1)
    lines.append(f"- of the {len(verdicts)} verdicts, " + _counts(verdicts["verdict"])
                 + f"; {(half <= 0.05).sum()} have an interval within +-5% of their ratio "
                 f"(median +-{half.median():.1%}, widest +-{half.max():.0%})"
                 + (f". If intervals narrowed as 1/sqrt(processes), the inconclusive ones "
                    f"would take about {needed.median():.0f} processes per configuration, for "
                    "an 80% chance each of being settled if their ratios stay where they are "
                    f"(median; {needed.quantile(0.9):.0f} for 90% of them, about "
                    f"{needed.quantile(0.9) * per_round / 60:.0f} hours of rounds like these; "
                    f"{needed.isna().sum()} no number of processes would settle: a ratio "
                    "beyond the threshold but inside the A/A-widened band, or on an edge)"
                    if len(open_) else ""))
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
    base = steps[steps["configuration"].str.startswith(baseline_prefix(t))]
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


# What each environment does to the copy step's allocation, in a few words; the numbers that
# show it come from the tables.
COPY_MECHANISMS = {
    "glibc": "glibc serves every output past its mmap ceiling with a fresh mapping and unmaps "
             "it on free",
    "glibc_tuned": "the raised mmap and trim thresholds keep outputs in glibc's heap, which it "
                   "no longer gives back",
    "tcmalloc": "tcmalloc keeps freed memory in its page heap",
    "jemalloc": "jemalloc returns freed large extents to the kernel as its decay timers allow",
    "jemalloc_retain": "jemalloc told never to purge (dirty_decay_ms and muzzy_decay_ms -1, "
                       "proven by its own mallctl) keeps its pages",
    "hugepages_off": "numpy's huge-page advice switched off: every 4 KiB page faults",
    "torch_thp": "PyTorch asks for transparent huge pages: a 2 MiB page per fault",
    "onednn_off": "TensorFlow without oneDNN allocates through malloc instead of its BFC pool",
    "memcpy_nt": "glibc's memcpy writes around the cache (non-temporal stores) from the "
                 "threshold it is given",
    "glibc_tuned_nt": "the heap reused, and glibc's memcpy writing around the cache from the "
                      "threshold it is given",
    "memcpy_erms": "glibc's memcpy copies with `rep movsb` at every size",
    "memcpy_vector": "glibc's memcpy copies with vector stores at every size below its "
                     "non-temporal threshold",
}
FRAMEWORK_NOTES = {
    "theano": "allocates through numpy",
    "pytensor_cvm": "allocates through numpy",
    "numpy": "advises huge pages for large arrays",
    "pytensor": "Numba's runtime asks for no huge pages",
    "torch": "asks for no huge pages by default",
    "tensorflow": "keeps a BFC pool with oneDNN on",
}


def why_copy(t):
    """Per framework: the step from batch 8 to 16 under glibc, and what each environment does
    at the batch where it matters (16, or 4 for jemalloc), with faults and verdicts."""
    lines = []
    limit8, limit16 = (t.copy[t.copy["batch"] == b]["limit_seconds"].median() for b in (8, 16))
    lines.append(f"- The copy limit itself (a copy into a buffer already faulted in) goes from "
                 f"{ms(limit8)} to {ms(limit16)} ms from batch 8 to 16 ({limit16 / limit8:.1f}x): "
                 "what is left of a step beyond that is the allocator's.")
    for framework in t.config["copy"]["frameworks"]:
        b8, b16 = t.copy_point(framework, "glibc", 8), t.copy_point(framework, "glibc", 16)
        if b8 is None or b16 is None:
            continue
        parts = [f"glibc {ms(b8['median'])} -> {ms(b16['median'])} ms "
                 f"({b16['median'] / b8['median']:.1f}x), "
                 f"{t.copy_faults(framework, 'glibc', 8):,.0f} -> "
                 f"{t.copy_faults(framework, 'glibc', 16):,.0f} faults per call"]
        for environment in t.config["copy"]["environments"]:
            if environment == "glibc":
                continue
            batch = 4 if environment.startswith("jemalloc") else 16
            row = t.copy_point(framework, environment, batch)
            if row is None or pd.isna(row.get("ratio")):
                continue
            parts.append(f"{environment} (b{batch}: {COPY_MECHANISMS.get(environment, 'its knobs')}): "
                         f"{t.copy_faults(framework, environment, batch):,.0f} faults, "
                         f"{ms(row['median'])} ms, {interval(row)} of glibc, {row['verdict']}")
        note = FRAMEWORK_NOTES.get(framework)
        lines.append(f"- **{framework}**{f' ({note})' if note else ''}: " + "; ".join(parts) + ".")
    return "\n".join(lines)


HOURGLASS_MECHANISMS = {
    "input=feed_dict": "float32 arrays: nothing is converted from float64 on each call",
    "batch_norm=fused": "one FusedBatchNorm op per layer instead of moments and elementwise ops",
    "input=dataset": "the batch comes from an iterator inside the graph instead of a feed",
    "execution=function": "tf.function's executor instead of a Session",
    "input=resident": "the batch is already a tensor: no feed or iterator per call",
    "environment=tcmalloc": "tcmalloc instead of glibc's malloc",
    "environment=jemalloc": "jemalloc instead of glibc's malloc",
    "environment=protobuf_python": "pure-Python protobuf",
    "environment=onednn_off": "TensorFlow without its oneDNN kernels",
    "channels_last": "input and weights in channels-last layout",
    "tcmalloc": "tcmalloc instead of glibc's malloc",
    "jemalloc": "jemalloc instead of glibc's malloc",
}


def _knob(label, kind):
    """The knob a comparison changes: `batch_norm=fused`, `channels_last`, `tcmalloc`."""
    if kind == "torch environment":
        return re.search(r"\((\w+)\)", label).group(1)
    if kind == "torch variant":
        return label.removeprefix("torch ").split()[0]
    return label.removeprefix("+ ").removeprefix("last rung without ").removeprefix("last rung + ")


def why_hourglass(t):
    """Every comparison of the train step with what changed inside it: CPU time, faults and
    the op categories that moved (from the traces)."""
    verdicts = t.verdicts[(t.verdicts["experiment"] == "hourglass")
                          & t.verdicts["kind"].isin(["rung", "ablation", "variation",
                                                     "torch variant", "torch environment"])]
    steps = t.hourglass[(t.hourglass["status"] == "ok") & (t.hourglass["phase"] == "train")]
    per_step = steps.groupby("configuration").agg(cpu=("cpu_seconds", "median"),
                                                  faults=("minor_faults", "median"))
    ops = tidy_tables.ops_by_category(t.ops)
    ops["framework overhead"] = per_step["cpu"].reindex(ops.index) - ops.sum(axis=1)
    lines = []
    for _, row in verdicts[verdicts["case"] == "train"].iterrows():
        mine, theirs = row["configuration"], row["reference"]
        if mine not in per_step.index or theirs not in per_step.index:
            continue
        forward = verdicts[(verdicts["case"] == "forward") & (verdicts["label"] == row["label"])
                           & (verdicts["kind"] == row["kind"])]
        before, after = per_step.loc[theirs], per_step.loc[mine]
        moved = ""
        if mine in ops.index and theirs in ops.index:
            delta = (ops.loc[mine] - ops.loc[theirs]).sort_values(key=abs, ascending=False)
            moved = "; most of it " + ", ".join(f"{name} {1e3 * value:+.0f} ms"
                                                for name, value in delta.head(2).items())
        mechanism = HOURGLASS_MECHANISMS.get(_knob(row["label"], row["kind"]), "")
        lines.append(
            f"- **{row['label']}** ({row['kind']}{': ' + mechanism if mechanism else ''}): "
            f"train {interval(row)}, {row['verdict']}"
            + (f"; forward {interval(forward.iloc[0])}, {forward.iloc[0]['verdict']}"
               if len(forward) else "")
            + f". CPU per train step {ms(before['cpu'])} -> {ms(after['cpu'])} ms{moved}; "
            f"faults per step {before['faults']:,.0f} -> {after['faults']:,.0f}.")
    order = phase_order(t)
    if order:
        lines.append(order)
    return "\n".join(lines)


def baseline_prefix(t):
    """The hourglass baseline's configuration path, less its device: `torch/eager/glibc/`."""
    base = t.config["hourglass"]["baseline"]
    return f"{base['framework']}/{base['variant']}/{base['environment']}/"


def phase_order(t):
    """The forward phase of the baseline when it ran first against when it ran after train."""
    steps = t.hourglass[(t.hourglass["status"] == "ok") & (t.hourglass["phase"] == "forward")
                        & t.hourglass["configuration"].str.startswith(baseline_prefix(t))]
    if steps["position"].nunique() < 2:
        return None
    by = steps.groupby("position").agg(seconds=("seconds", "median"),
                                       faults=("minor_faults", "median"))
    first, after = by.loc[0], by.loc[1]
    text = (f"- **Phase order** ({baseline_prefix(t).strip('/')}): the forward step takes "
            f"{ms(first['seconds'])} ms with {first['faults']:,.0f} faults per step when it runs "
            f"first in its process, {ms(after['seconds'])} ms with {after['faults']:,.0f} faults "
            "after the train steps")
    if first["faults"] > 10 * max(after["faults"], 1):  # the mechanism the faults show
        text += (": freeing the train step's large blocks has raised glibc's mmap threshold "
                 "(it follows the largest block freed, up to 32 MiB), so the forward step's "
                 "buffers come from the heap instead of fresh mappings")
    return text + ". Every ratio above pairs processes of the same round, hence the same order."


def share(row, low, high):
    """A step's faults in ms and as its share, at one cost per fault or a range of them."""
    cost = [low] if low == high else [low, high]
    return (" to ".join(f"{1e3 * row['faults'] * c:.1f}" for c in cost) + " ms = "
            + " to ".join(f"{row['faults'] * c / row['seconds']:.1%}" for c in cost))


def fault_share(t):
    """How much of each hourglass configuration's train step its page faults cost, at the
    fault probe's cost of a 4 KiB fault."""
    if t.faults is None:
        return "No fault probe in this result set."
    cost = probe_costs(t, "4k")
    low, high = cost.min(), cost.max()
    steps = t.hourglass[(t.hourglass["status"] == "ok") & (t.hourglass["phase"] == "train")]
    per = steps.groupby(["framework", "variant", "environment"]).agg(
        faults=("minor_faults", "median"), seconds=("seconds", "median"))
    per = per[~per.index.get_level_values("environment").str.endswith(TWIN)]
    name = [f"{framework} {variant} ({environment})" for framework, variant, environment in per.index]
    few = per["faults"] < 10  # under 0.1 ms: listed together
    parts = [f"{n}: {row['faults']:,.0f} faults, {share(row, low, high)}"
             for n, (_, row), small in zip(name, per.iterrows(), few) if not small]
    if few.any():
        parts.append("fewer than 10 faults per step, so 0.0%: "
                     + ", ".join(n for n, small in zip(name, few) if small))
    at = (f"{1e6 * low:.2f} us" if low == high else
          f"{1e6 * low:.2f} to {1e6 * high:.2f} us (the probe's smallest and largest region)")
    return (f"At {at} per 4 KiB fault, page faults are this much of each median train step: "
            + "; ".join(parts) + ".")


def _listed(rows, column):
    """ (a: 1.2x, slower; ...) of up to ten changed configurations."""
    listed = [f"{r['label']}: {r['ratio']:.2f}x, {r[column]}" for _, r in rows.iterrows()]
    return (" (" + "; ".join(listed[:10])
            + (f"; and {len(listed) - 10} more" if len(listed) > 10 else "") + ")")


def comparison_text(folder, what):
    """What `make compare` found between two runs of the same code (in `folder`)."""
    if not (folder / "comparison.csv").exists():
        return "Not measured in this result set."
    comparison = pd.read_csv(folder / "comparison.csv")
    changed = comparison[comparison["change"].isin(["faster", "slower"])]
    moved = (comparison["ratio"] - 1).abs()
    unsettled = (comparison["change"] == "inconclusive").sum()
    text = (f"{what}, compared with `make compare`: {len(changed)} of {len(comparison)} "
            f"configurations called changed ({len(changed) / len(comparison):.1%})"
            + (f", {unsettled} inconclusive" if unsettled else "")
            + f"; the median configuration moved by {moved.median():.1%}, the most by "
            f"{moved.max():.1%}")
    if len(changed):
        text += _listed(changed, "change")
    if "change_beyond_machine" in comparison:  # compared since copies are set against their size
        beyond = comparison[comparison["change_beyond_machine"].isin(["faster", "slower"])]
        text += (f"; changed beyond the machine (each of {comparison['machine_ratio'].notna().sum()} "
                 "copies set against the median move of the other copies of its size and kind), "
                 f"{len(beyond)} of {len(comparison)} ({len(beyond) / len(comparison):.1%})"
                 + (": the same ones" if len(beyond) and list(beyond["label"]) == list(
                     changed["label"]) else _listed(beyond, "change_beyond_machine")
                    if len(beyond) else ""))
    if (folder / "verdicts.csv").exists():
        verdicts = pd.read_csv(folder / "verdicts.csv")
        if "contradicts" not in verdicts:  # compared before `inconclusive` was a verdict
            return text + (f"; {verdicts['same_verdict'].sum()} of {len(verdicts)} knob verdicts "
                           "the same in both under the earlier two-way rule (`no effect "
                           "measured` for every interval not wholly outside the band; the "
                           "earlier run's intervals were not kept, so its verdicts cannot be "
                           "called again under the current rule).")
        differ = verdicts[~verdicts["same_verdict"]]
        contradicting = verdicts["contradicts"].sum()
        text += (f"; of {len(verdicts)} knob verdicts, {contradicting} "
                 + ("contradicts its counterpart" if contradicting == 1 else "contradict each other")
                 + f", {verdicts['same_verdict'].sum()} are the same in both"
                 + (" and " + _counts(differ["verdict_before"] + " -> "
                                      + differ["verdict_after"]) if len(differ) else ""))
        if verdicts["contradicts"].any():
            text += " (contradicting: " + "; ".join(
                f"{r['label']}, {r['case']}: {r['verdict_before']} -> {r['verdict_after']}"
                + (faults_moved(r) if "faults_before" in r else "")
                for _, r in verdicts[verdicts["contradicts"]].iterrows()) + ")"
    return text + "."


def resolve_comparison(t):
    """The first default run before and after `make resolve` added its processes."""
    return resolve_text(t.root / "resolve")


def resolve_reference(t):
    """The reference run before and after `make resolve` with a bound on its minutes."""
    text = resolve_text(t.root / "resolve" / "reference")
    times = t.root / "resolve" / "reference" / "run_times.csv"
    if times.exists():
        rows = pd.read_csv(times)

        def seconds(start):  # the row whose `what` starts so
            return rows.loc[rows["what"].str.startswith(start), "seconds"].iloc[0]

        medians = ", ".join(
            f"{e} {seconds(f'median {e} process of these configurations, first'):.1f} s "
            f"-> {seconds(f'median {e} process of these configurations, added'):.1f} s"
            for e in ("copy", "hourglass"))
        text += (f" scripts/resolve.py estimated {seconds('estimate') / 60:.0f} min of "
                 f"processes; they took {seconds('the added processes') / 60:.0f} min by their "
                 f"own start and end times (the median process of these configurations, first "
                 f"16 rounds -> added rounds: {medians}), and the Snakemake call "
                 f"{seconds('the snakemake call') / 60:.0f} min.")
    return text


def half_width(ratio, low, high):
    """How far an interval reaches from its ratio, relative, on its wider side."""
    return (high / ratio - 1).combine(1 - low / ratio, max)


def resolve_text(folder):
    """A run before and after `make resolve` (`folder`: its comparison and verdicts)."""
    if not (folder / "verdicts.csv").exists():
        return "Not measured in this result set."
    verdicts = pd.read_csv(folder / "verdicts.csv")
    comparison = pd.read_csv(folder / "comparison.csv")
    names = [c for c in ("experiment", "framework", "variant", "environment", "device", "input")
             if c in comparison]  # one configuration, whatever its cases
    added = comparison[comparison["processes_after"] > comparison["processes_before"]]
    added = added.drop_duplicates(names)
    opened = verdicts[verdicts["verdict_before"] == "inconclusive"]
    before, after = (_counts(verdicts[f"verdict_{s}"]) for s in ("before", "after"))
    within = [(half_width(verdicts[f"ratio_{s}"], verdicts[f"ratio_low_{s}"],
                          verdicts[f"ratio_high_{s}"]) <= 0.05).sum() for s in ("before", "after")]
    return (f"{len(added)} configurations got {int((added['processes_after'] - added['processes_before']).sum())} "
            f"more processes ({figures.span(added['processes_after'].astype(int))} each now, "
            f"{figures.span(added['processes_before'].astype(int))} before). Knob verdicts before: "
            f"{before}; after: {after}. Of the {len(opened)} inconclusive before, "
            + _counts(opened["verdict_after"]) + f" after; {verdicts['contradicts'].sum()} "
            f"verdicts contradict the first ones. Intervals within +-5% of their ratio: "
            f"{within[0]} before, {within[1]} after, of {len(verdicts)}.")


def aa_third(t):
    return comparison_text(t.root / "aa" / "third",
                           "The second default run against a third, an hour later")


def counts_of(counts, totals):
    """'4 and 0 of 162' where both runs have as many verdicts, else '4 of 162 and 0 of 160'."""
    if len(set(totals)) == 1:
        return " and ".join(map(str, counts)) + f" of {totals[0]}"
    return " and ".join(f"{count} of {total}" for count, total in zip(counts, totals))


def timed_pair(folder, what):
    """Two default `make run`s back to back, each timed from start to report (run_times.csv),
    and where each run's own verdicts are kept (first_verdicts.csv, second_verdicts.csv), how
    many the rule for processes of two kinds withheld in each."""
    text = comparison_text(folder, what)
    if (folder / "run_times.csv").exists():
        times = pd.read_csv(folder / "run_times.csv")
        text += (" `make run` took " + " and ".join(
            f"{int(s // 60)} min {int(s % 60)} s" for s in times["seconds"])
            + " from its start to the report.")
    runs = [pd.read_csv(folder / f"{run}_verdicts.csv") for run in ("first", "second")
            if (folder / f"{run}_verdicts.csv").exists()]
    if runs:
        withheld = [v[v["withheld_for_kinds"]] for v in runs]
        text += (" Verdicts withheld for processes of two kinds: "
                 + counts_of([len(w) for w in withheld], [len(v) for v in runs]) + " ("
            + "; ".join(sorted({f"{r['label']} {r['case']}" for w in withheld
                                for _, r in w.iterrows()}))
            + ").")
    return text


def aa_timed(t):
    return timed_pair(t.root / "aa" / "timed",
                      "Two default `make run`s of the same code, back to back")


def aa_kinds(t):
    return timed_pair(t.root / "aa" / "kinds", "Two default `make run`s of the same code, "
                      "back to back, with that rule in place from the start")


def aa_xeon(t):
    return timed_pair(t.root / "aa" / "xeon", "Two default `make run`s of the same code on the "
                      "Intel Xeon VM (model 207), four minutes apart")


def twin_calls(t):
    """How often an A/A twin (a baseline against itself, in the same rounds) was called an
    effect, over every run's own verdicts shipped under the set: the intervals' false calls,
    by how many processes they rest on."""
    tables = [pd.read_csv(path) for path in sorted(t.root.rglob("*verdicts.csv"))]
    runs = [v for v in tables if {"kind", "processes"} <= set(v)]  # not a comparison's
    twins = pd.concat([v[v["kind"] == "A/A"] for v in runs])
    called = twins["verdict"].isin(["faster", "slower"])
    by = called.groupby(twins["processes"]).agg(["sum", "size"])
    return (f"Over the {len(runs)} runs' own verdict tables shipped under `results/paper/`, "
            f"an A/A twin was called `faster` or `slower` in {called.sum()} of {len(twins)} "
            "verdicts (" + "; ".join(f"{s} of {n} at {p} process" + "es" * (p != 1)
                                      for p, (s, n) in by.iterrows()) + ").")


def aa_comparison(t):
    return comparison_text(t.root / "aa", "Two default runs of the same code on this machine")


def machine_kind_short(machine):
    """'family 6 model 207 stepping 2' out of the machine kind (CPU, its model, flags, GPU)."""
    return machine["machine_kind"].split(", ")[1]


def first_of(table, column):
    values = table[column].dropna() if column in table else []
    return values.iloc[0] if len(values) else None


def gpu_machine(t):
    m, torch_steps = t.machine, t.hourglass[t.hourglass["framework"] == "torch"]
    versions = []
    if first_of(torch_steps, "torch_version"):
        versions.append(f"PyTorch {first_of(torch_steps, 'torch_version')} (CUDA "
                        f"{first_of(torch_steps, 'cuda')}, cuDNN "
                        f"{int(first_of(torch_steps, 'cudnn'))})")
    if first_of(t.copy, "pytensor_jax_version"):
        versions.append(f"PyTensor {first_of(t.copy, 'pytensor_jax_version')} through JAX "
                        f"{first_of(t.copy, 'jax')}")
    if first_of(t.hourglass, "tensorflow_version"):
        versions.append(f"TensorFlow {first_of(t.hourglass, 'tensorflow_version')}")
    return (f"{m['gpu']}, on a {m['cores']}-core {m['cpu']} VM ({machine_kind_short(m)}), "
            f"{m['os']}, kernel {m['kernel']}, {m['glibc']}, THP `{m['thp_enabled']}`; "
            + "; ".join(versions) + f"; config \"{t.config['label']}\": "
            f"{figures.span(t.summary['processes'])} processes per configuration, run in rounds")


def gpu_copy(t):
    """Each round trip through the GPU at batch 8 and 16: its step, its faults, each
    environment against glibc, and its rate against the pinned-memcpy limit."""
    limit = t.copy[t.copy["device"] == "gpu"].groupby("batch")["limit_gbps"].median()
    if not {8, 16} <= set(limit.index):
        return "The GPU's copy step needs batches 8 and 16 in this table."
    lines = ["| round trip | environment | b8 -> b16 (ms, step) | faults/call b16 | b16 against "
             "glibc | GB/s of output at b16 (limit) |", "|---|---|---|---|---|---|"]
    for framework in t.config["copy"]["frameworks"] + t.config["copy"]["limit"]["frameworks"]:
        for environment in t.config["copy"]["environments"]:
            b8, b16 = (t.copy_point(framework, environment, b, "gpu") for b in (8, 16))
            if b8 is None or b16 is None:
                continue
            against = "-" if environment == "glibc" else f"{interval(b16)} {b16['verdict']}"
            lines.append(
                f"| {framework} | {environment} | {ms(b8['median'])} -> {ms(b16['median'])} "
                f"(**{b16['median'] / b8['median']:.1f}x**) "
                f"| {t.copy_faults(framework, environment, 16, 'gpu'):,.0f} | {against} "
                f"| {b16['bytes'] / b16['median'] / 1e9:.1f} ({limit[16]:.1f}) |")
    return "\n".join(lines)


def gpu_hourglass(t):
    """The GPU's train steps against the seed's, and how much of each step the GPU worked."""
    steps = t.hourglass[(t.hourglass["status"] == "ok") & (t.hourglass["phase"] == "train")
                        & (t.hourglass["device"] == "gpu")]
    lines = []
    for (rung, label, configuration), rows in steps.groupby(["rung", "label", "configuration"]):
        wall, kernels = rows["seconds"].median(), t.kernel_ms(configuration)
        by_process = rows.groupby("rep")["seconds"].median()
        lines.append(
            f"- **{label}**: {ms(wall)} ms per train step by the wall clock ({ms(by_process.min())} "
            f"to {ms(by_process.max())} ms over {len(by_process)} processes), "
            f"{ms(rows['cpu_seconds'].median())} ms of process CPU time; "
            f"{SEED_SECONDS[rows.iloc[0]['framework']] / wall:.1f}x faster than the seed's "
            f"{rows.iloc[0]['framework']} ({ms(SEED_SECONDS[rows.iloc[0]['framework']])} ms on a Titan X "
            f"Pascal); its kernels ran {kernels:.0f} ms in the traced train step "
            f"(summed over the device's streams), {kernels / 1e3 / wall:.0%} of the median step.")
    return "\n".join(lines)


def gpu_comparison(t):
    """The two GPU sessions compared, then the verdicts the prose rests on (each environment
    at the seed's batch 16, each PyTorch knob's train step) side by side."""
    text = comparison_text(t.root / "aa", "Two GPU sessions of the same config (two leases)")
    if not (t.root / "aa" / "verdicts.csv").exists():
        return text
    verdicts = pd.read_csv(t.root / "aa" / "verdicts.csv").astype({"case": str})
    quoted = verdicts[(verdicts["kind"] != "A/A") & (
        ((verdicts["experiment"] == "copy") & (verdicts["case"] == "16"))
        | ((verdicts["kind"] == "torch variant") & (verdicts["case"] == "train")))]
    pairs = [f"{r.label} ({'batch ' if r.experiment == 'copy' else ''}{r.case}): "
             f"{r.ratio_before:.2f}x {r.verdict_before} / {r.ratio_after:.2f}x {r.verdict_after}"
             for r in quoted.itertuples()]
    return text + "\n\nFirst session / second session: " + "; ".join(pairs) + "."


def model_errors(t):
    """Measured / predicted - 1 of each CPU copy configuration but the copy limit's own, by
    environment, framework and batch (the medians of model_points)."""
    if "predicted_seconds" not in t.copy:  # no fault probe in this set
        return pd.Series(dtype=float)
    points = model_points(t)
    limit = t.config["copy"]["limit"]["frameworks"]
    points = points[~points.index.get_level_values("framework").isin(limit)]
    error = points["measured"] / points["predicted"] - 1
    return error.reorder_levels(["environment", "framework", "batch"]).sort_index()


def store_path_table(t):
    """Each copy (the limit's first) per environment and batch, against glibc (with its
    verdict where there are processes to call one from)."""
    environments, copy = t.config["copy"]["environments"], t.config["copy"]
    verdicts = t.summary["processes"].min() > 1
    lines = ["| copy | batch (MB) | " + " | ".join(environments) + " |",
             "|---|---|" + "---|" * len(environments)]
    for framework in copy["limit"]["frameworks"] + copy["frameworks"]:
        for batch in copy["batches"]:
            cells = []
            for environment in environments:
                point = t.copy_point(framework, environment, batch)
                if point is None:
                    cells.append("-")
                    continue
                against = (f"{interval(point)} {point['verdict']}" if verdicts
                           else f"{point['ratio']:.2f}x")
                cells.append(ms(point["median"]) + (
                    "" if environment == "glibc" else f" ({against})"))
            nbytes = _bytes(t)[batch]
            lines.append(f"| {framework} | {batch} ({nbytes / 1e6:.3g}) | " + " | ".join(cells)
                         + " |")
    return "\n".join(lines) + ("\n\nMilliseconds per call (medians over processes), and each "
                               "environment against glibc.")


def memcpy_nt(t):
    """glibc's store path: the copies per environment, how well the fault model predicts
    each, and the reference run's copy limit at the largest batch."""
    environments, copy = t.config["copy"]["environments"], t.config["copy"]
    error = model_errors(t)
    fits = [f"{environment}: {(e.abs() <= 0.15).sum()} of {len(e)}"
            + (" (misses: " + ", ".join(f"{f} b{b} {v:+.0%}" for (f, b), v in
                                       e[e.abs() > 0.15].items()) + ")" if (e.abs() > 0.15).any()
               else "")
            for environment, e in ((env, error[env]) for env in environments if env in error)]
    threshold = first_of(t.copy, "glibc_non_temporal_threshold")
    machine = (f"This machine's L3 as CPUID reports it: {t.machine['l3_cache']}; glibc's "
               f"non-temporal threshold: "
               + (f"{int(threshold, 0) / 1e6:.3g} MB (`{threshold}`, the machine record). "
                  if threshold else "not recorded in these runs. "))
    largest = max(copy["batches"])
    reference = tables_at(t.root.parent)  # the reference run this set sits in
    baseline = reference.config["copy"].get("limit", {}).get("environments", ["glibc"])[0]
    cpu = reference.copy[(reference.copy["device"] == "cpu") & (reference.copy["batch"] == largest)
                         & (reference.copy["environment"] == baseline)]
    limit = (f"The reference run's copy limit at batch {largest} "
             f"(`{cpu['limit_source'].mode().iloc[0]}`, glibc's default store path): "
             f"{ms(cpu['bytes'].iloc[0] / cpu['limit_gbps'].median() / 1e9)} ms."
             if len(cpu) else "")
    return (store_path_table(t) + " " + machine + "The fault model (copy limit in the call's own "
            "environment where the limit ran in it, else glibc's, + faults x cost), "
            "configurations within 15% by environment: " + "; ".join(fits) + ". " + limit)


def memcpy_nt_comparison(t):
    return comparison_text(t.root / "aa", "An earlier run of the same config against this one")


def memcpy_nt_node(t):
    processes = figures.span(t.summary["processes"])
    return (f"On {t.machine['cores']}-core {t.machine['cpu']} "
            f"({machine_kind_short(t.machine)}), {t.machine['glibc']}, L3 as reported "
            f"{t.machine['l3_cache']}; processes per configuration: {processes} (no interval "
            "over processes, so no verdict):\n\n" + store_path_table(t))


def settling_table(t):
    """The copy configurations with processes still settling when the clock started (the
    summary's `settling`), by batch; and how many process-cases of the other experiments."""
    summary = t.summary[t.summary["settling"] > 0]
    copies = summary[summary["experiment"] == "copy"]
    lines = ["| copy | settling processes at each batch (of processes) |", "|---|---|"]
    for (framework, environment), rows in copies.groupby(["framework", "environment"]):
        lines.append(f"| {framework} {environment} | " + ", ".join(
            f"{row.batch}: {row.settling} of {row.processes}" for row in rows.itertuples())
            + " |")
    others = summary[summary["experiment"] != "copy"].groupby("experiment")["settling"].sum()
    return ("\n".join(lines) + "\n\nA settling process: its first timed call faulted (more "
            "than the threshold's share of the configuration's median time, at about a "
            "microsecond a fault) and none in the second half of its calls did. Elsewhere: "
            + (", ".join(f"{n} in the {e} experiment" for e, n in others.items()) or "none")
            + ".")


def process_kinds(t, framework, environment, batch):
    """The kinds of a configuration's processes at `batch` (kinds_text)."""
    rows = t.copy[(t.copy["framework"] == framework) & (t.copy["environment"] == environment)
                  & (t.copy["batch"] == batch) & (t.copy["device"] == "cpu")]
    return kinds_text(rows.groupby("rep").agg(faults=("minor_faults", "median"),
                                              seconds=("seconds", "median")))


def kinds_text(per_process):
    """'211 x3 (3.1 ms), 722 x7 (4.6 ms)': each faults-per-call level of these processes (one
    row each: median `faults` and `seconds`), how many showed it and their median time."""
    return ", ".join(f"{faults:,.0f} x{len(group)} ({ms(group['seconds'].median())} ms)"
                     for faults, group in per_process.groupby("faults"))


def layout_kinds(t):
    """Each pair of environments that differ only in layout randomization: per batch, the kinds
    of process (faults per call) with randomization and without, and the spread of the
    processes' medians."""
    environments = t.config["environments"]
    fixed_of = {name: other for name, spec in environments.items() if spec.get("aslr") is False
                for other, twin in environments.items()
                if twin.get("aslr", True) and twin.get("env", {}) == spec.get("env", {})}
    lines = ["| copy | batch (MB) | layout randomized: faults per call x processes (ms) | fixed "
             "| spread of process medians, randomized -> fixed |", "|---|---|---|---|---|"]
    sizes = _bytes(t)
    for framework in t.config["copy"]["frameworks"]:
        for fixed, randomized in fixed_of.items():
            if t.copy_point(framework, fixed, sizes.index[0]) is None:
                continue
            for batch in sizes.index:
                spread = [t.copy[(t.copy["framework"] == framework)
                                 & (t.copy["environment"] == e) & (t.copy["batch"] == batch)]
                          .groupby("rep")["seconds"].median() for e in (randomized, fixed)]
                lines.append(f"| {framework} {randomized} / {fixed} | {batch} "
                             f"({sizes[batch] / 1e6:.3g}) | "
                             f"{process_kinds(t, framework, randomized, batch)} | "
                             f"{process_kinds(t, framework, fixed, batch)} | "
                             + " -> ".join(f"{m.max() / m.min():.2f}x" for m in spread) + " |")
    processes = figures.span(t.summary["processes"])
    return ("\n".join(lines) + f"\n\n{processes} processes per configuration, in rounds; a "
            "kind is a process's median faults per call at that batch; the spread is the "
            "slowest process's median over the fastest's.")


SOURCES = {"mapped": "a fresh mapping", "grown": "glibc's heap grown", "heap": "glibc's heap"}


def served_sources(served):
    """'glibc's heap grown and glibc's heap': the sources in `served` texts
    (`served_from`, `served_in_warmup`: 'grown:1176 heap:0 ...'), each once."""
    sources = sorted({call.split(":")[0] for text in served for call in text.split()})
    return " and ".join(SOURCES[k] for k in sources)


def process_course(faults, bytes_, served):
    """How one process's calls at one batch went: 'every' (every timed call faulted),
    'none', 'switched' (its first calls faulted, the rest did not), 'late' (its first call did
    not fault, some later ones did) or 'mixed' (the first did, and some after a call that did
    not); the number of faulting calls; and where glibc found the untimed calls' outputs after
    them (`served`: `served_from`). A call faults where it pays at least one fault per 4 MiB
    of its output, and at least two (a stray fault is not a fresh output)."""
    faulted = [f >= max(2, bytes_ / (4 << 20)) for f in faults]
    count = sum(faulted)
    course = ("every" if all(faulted) else "none" if not count
              else "switched" if all(faulted[:count]) else "mixed" if faulted[0] else "late")
    return course, count, served_sources([served])


def process_courses(t):
    """One row per process and case of the copy step on the CPU (framework, environment,
    batch, rep): its median faults and time, where its outputs came from (`warmed`, `served`),
    its `position` among the cases, and how its timed calls went (process_course: `course`,
    `faulting`, `source`); with the number of timed calls per case."""
    cpu = t.copy[t.copy["device"] == "cpu"].sort_values("sample")
    cpu = cpu.assign(**{column: "" for column in ("served_from", "served_in_warmup")
                        if column not in cpu})  # sets measured before they were recorded
    # runs measured before it was recorded: one bool per float32, the whole batch
    check = cpu["check_temporary_bytes"] if "check_temporary_bytes" in cpu else np.nan
    cpu = cpu.assign(check_temporary_bytes=check).fillna({"check_temporary_bytes":
                                                          cpu["bytes"] // 4})
    rows = cpu.groupby(["framework", "environment", "batch", "rep"])
    per_process = rows.agg(served=("served_from", "first"), warmed=("served_in_warmup", "first"),
                           bytes=("bytes", "first"), check=("check_temporary_bytes", "first"),
                           faults=("minor_faults", "median"),
                           seconds=("seconds", "median"), position=("position", "first"))
    per_process[["course", "faulting", "source"]] = [
        process_course(list(group["minor_faults"]), *per_process.loc[key, ["bytes", "served"]])
        for key, group in rows]
    return per_process, rows.size().max()


# the courses whose faulting calls are not all at the start, as the tables name them
UNEVEN = {"mixed": "from the first, not in a row", "late": "not the first"}


# how the configurations whose processes all took one course are summed up
ALIKE = {"every": "every call faulted", "none": "no call faulted",
         "switched": "the first calls faulted, then not",
         **{course: f"some calls faulted, {how}" for course, how in UNEVEN.items()}}


def alike_text(alike):
    """'12 every call faulted, mapped after; 3 no call faulted, heap after': how many
    configurations and batches took each (course, source) in all their processes."""
    counts = pd.Series(alike, dtype=object).value_counts()
    return "; ".join(f"{n} {ALIKE[course]}, {source} after"
                     for (course, source), n in counts.items())


def calls_of(span):
    """'1 call', '2 to 4 calls' (span: figures.span)."""
    return f"{span} call{'s' * (span != '1')}"


def layout_mapped(t):
    """How the calls of each process went where its processes differ (process_course): those
    whose every call faulted, those that faulted in their first calls and then stopped, those
    that never faulted; for the first two, the batches each ran before."""
    if "served_in_warmup" not in t.copy:
        return "Not measured in this result set."
    per_process, calls = process_courses(t)
    positions = per_process["position"]

    def before(key):  # the batches this process ran before this one
        earlier = positions.xs(key[:2] + (key[3],), level=[0, 1, 3])
        return ", ".join(str(b) for b, at in earlier.sort_index().items()
                         if at < positions[key]) or "first"

    def cell(group, course):
        chosen = group[group["course"] == course]
        if chosen.empty:
            return "-"
        text = f"{len(chosen)}: "
        if course == "none":
            return text + kinds_text(chosen)
        if course == "every":
            text += kinds_text(chosen)
        else:
            span = figures.span(chosen["faulting"].astype(int))
            text += (f"the first {span} of {calls} calls" if course == "switched"
                     else f"{calls_of(span)}, {UNEVEN[course]}")
        return (text + f"; {served_sources(chosen['warmed'])} in the warm-up, "
                f"{' / '.join(chosen['source'].unique())} after; ran before it: "
                + "; ".join(map(before, chosen.index)))

    lines = ["| copy | batch (MB) | every timed call faulted | some faulted: the first calls, "
             "then not (else as named) | no call faulted |", "|---|---|---|---|---|"]
    sizes, alike = _bytes(t), []
    for (framework, environment, batch), group in per_process.groupby(level=[0, 1, 2]):
        if group["course"].nunique() == 1 and group["source"].nunique() == 1:
            alike.append((group["course"].iloc[0], group["source"].iloc[0]))
            continue
        cells = [cell(group, "every"), cell(group, "switched") + "".join(
            f"<br>{course} " + cell(group, course) for course in UNEVEN
            if (group["course"] == course).any()), cell(group, "none")]
        lines.append(f"| {framework} {environment} | {batch} ({sizes[batch] / 1e6:.3g}) | "
                     + " | ".join(cells) + " |")
    return ("\n".join(lines) + f"\n\n{figures.span(per_process.groupby(level=[0, 1, 2]).size())}"
            " processes per configuration. In each cell: how many processes; their faults per "
            "call x processes (median ms per call), or how many of their timed calls faulted; "
            "where glibc found the outputs of the warm-up calls after the first and of four "
            "untimed calls after the timed ones (`after`; glibc's heap: or another allocator, "
            "or a framework's pool); the batches each process ran before this one. In the "
            f"other {len(alike)} configurations and batches every process alike: "
            + alike_text(alike) + ".")


def course_cell(processes, calls):
    """'every call 3 (1,178 faults); first 4 to 7 of 20 calls 5; none 2': how these processes'
    timed calls went (process_courses), each course with how many processes took it."""
    parts = []
    for course in ("every", "switched", *UNEVEN, "none"):
        group = processes[processes["course"] == course]
        if group.empty:
            continue
        span = figures.span(group["faulting"].astype(int))
        faults = ", ".join(f"{f:,.0f}" for f in sorted(group["faults"].unique()))
        text = {"every": f"every call {{n}} ({faults} faults)",
                "switched": f"first {span} of {calls} calls {{n}}", "none": "none {n}",
                **{uneven: f"{calls_of(span)}, {how}, {{n}}" for uneven, how in UNEVEN.items()}}
        parts.append(text[course].format(n=len(group)))
    return "; ".join(parts)


# numpy's copy into memory asked for PyTorch's way, and the PyTorch runs it stands for
ALIGNED_AS = {("aligned", "glibc"): ("torch", "glibc"),
              ("aligned_thp", "glibc"): ("torch", "torch_thp")}


CEILING = 32 << 20  # glibc's mmap threshold never rises above this (64-bit)
THP_ALIGNMENT = 2 << 20  # what PyTorch asks under THP_MEM_ALLOC_ENABLE=1, and aligned_thp


def aligned(t):
    """numpy's copy into posix_memalign'd memory beside numpy and PyTorch: per configuration
    and batch, how the processes' timed calls went; and, below glibc's ceiling, in how many
    rounds and batches the aligned copy's process and PyTorch's both faulted (in some timed
    call; in every one) and in how many only one of them did."""
    per_process, calls = process_courses(t)
    sizes = _bytes(t)
    lines = ["| copy | " + " | ".join(f"{b} ({n / 1e6:.3g} MB)" for b, n in sizes.items())
             + " |", "|---" * (len(sizes) + 1) + "|"]
    for (framework, environment), group in per_process.groupby(level=[0, 1]):
        lines.append(f"| {framework} {environment} | " + " | ".join(
            course_cell(group.xs(batch, level=2), calls)
            if batch in group.index.get_level_values(2) else "-" for batch in sizes.index)
            + " |")
    cases = per_process[per_process["bytes"] < CEILING]
    faulted, every = cases["course"] != "none", cases["course"] == "every"

    def both_and_one(kind, mine, theirs):  # rounds and batches below the ceiling
        mine, theirs = kind.xs(mine, level=[0, 1]), kind.xs(theirs, level=[0, 1])
        mine, theirs = mine.align(theirs, join="inner")  # the rounds and batches both ran
        return (f"in both {(mine & theirs).sum()}, in one only {(mine ^ theirs).sum()} "
                f"(of {len(mine)})")

    pairs = [f"{mine[0]} under {mine[1]} and {theirs[0]} under {theirs[1]}: a faulting call "
             f"{both_and_one(faulted, mine, theirs)}; every call faulting "
             f"{both_and_one(every, mine, theirs)}" for mine, theirs in ALIGNED_AS.items()]

    def faults(rows):
        return f"{rows['minor_faults'].median():,.0f}"

    above = []  # every output a fresh mapping: the same memcpy, the same faults
    for batch in sizes[sizes >= CEILING].index:
        (mine, rows), (numpys, numpy_rows), (torchs, torch_rows) = (
            copy_processes(t, f, "glibc", batch) for f in ("aligned", "numpy", "torch"))
        above.append(f"at {batch} ({sizes[batch] / 1e6:.3g} MB) the aligned copy ("
                     f"{faults(rows)} faults per call) against numpy's ({faults(numpy_rows)}: "
                     f"numpy asks for huge pages) {against(mine, numpys)}, and PyTorch's ("
                     f"{faults(torch_rows)}) against the aligned copy {against(torchs, mine)}")
    grown = cases["warmed"].str.contains("grown:", na=False).groupby(level=[0, 1])
    grown = "; ".join(f"{f} {e} {n} of {total}" for (f, e), n, total in
                      zip(grown.sum().index, grown.sum(), grown.size()))
    return ("\n".join(lines) + f"\n\n{figures.span(per_process.groupby(level=[0, 1, 2]).size())}"
            f" processes per configuration, in rounds (the same case order in each round's "
            f"processes). Each cell: how the processes' {calls} timed calls went (every call "
            "faulted, with its faults per call; the first calls faulted, then none; some calls "
            f"faulted, not all at the start: {', or '.join(UNEVEN.values())}; none did: a call "
            "faults where it pays at least one fault per 4 MiB of its output, and at least two) "
            "and how many processes did so. Below glibc's 32 MiB ceiling, numpy's "
            f"process-cases with a faulting call: {faulted.xs('numpy', level=0).sum()} of "
            f"{len(faulted.xs('numpy', level=0))}. Rounds and batches below the ceiling where "
            "the aligned copy's process and PyTorch's faulted: " + "; ".join(pairs) + ". "
            "Process-cases below the ceiling whose warm-up calls found an output in glibc's heap "
            "grown: " + grown + ". Above the ceiling, under glibc, paired by round: "
            + "; ".join(above) + ".")


def maps_afresh(nbytes, freed, alignment=THP_ALIGNMENT):
    """Whether glibc maps every output of `nbytes` asked with `alignment` afresh, in a process
    whose earlier cases freed blocks of `freed` bytes (each its input and its copy check's
    largest temporary). glibc serves a request above its mmap threshold with a mapping and
    raises the threshold to the size of each mapping it frees (up to its ceiling). An aligned
    request asks for the alignment on top; an output's own mapping, freed, raises the
    threshold only to the block without its padding, short of the next request: once mapped
    afresh, always."""
    return max((size for size in freed if size <= CEILING), default=0) < nbytes + alignment


def asks_thp_alignment(t, framework, environment):
    spec = t.config["environments"].get(environment.split(".")[0], {})
    return framework == "aligned_thp" or (
        framework == "torch" and str(spec.get("env", {}).get("THP_MEM_ALLOC_ENABLE")) == "1")


# The shipped sets whose processes' case orders and per-call faults test maps_afresh
THRESHOLD_SETS = ("", "layout", "layout/second", "layout/mapped", "aligned", "aligned/second",
                  "aligned/chunked", "aligned/chunked_second")


def mmap_threshold(t):
    """maps_afresh against what each process did, for every configuration asking 2 MiB
    alignment below glibc's ceiling in the shipped sets: the processes and cases whose every
    timed call faulted (a fresh mapping each), measured and predicted."""
    lines = ["| result set | copy | process-cases | every call faulted | predicted | "
             "agree | agree without the check |", "|---|---|---|---|---|---|---|"]
    for folder in THRESHOLD_SETS:
        tables = tables_at(t.root / folder) if folder else t
        per_process = process_courses(tables)[0].reset_index()
        for (framework, environment), group in per_process.groupby(["framework",
                                                                    "environment"]):
            if not asks_thp_alignment(tables, framework, environment):
                continue
            cases = group[group["bytes"] + THP_ALIGNMENT < CEILING]
            earlier = [group[(group["rep"] == row.rep) & (group["position"] < row.position)]
                       for row in cases.itertuples()]
            predicted, without = ([maps_afresh(nbytes, freed(before))
                                   for nbytes, before in zip(cases["bytes"], earlier)]
                                  for freed in (lambda b: [*b["bytes"], *b["check"]],
                                                lambda b: b["bytes"]))
            measured = cases["course"] == "every"
            lines.append(f"| {folder or 'the reference run'} | {framework} {environment} | "
                         f"{len(cases)} | {measured.sum()} | {sum(predicted)} | "
                         f"{(measured == predicted).sum()} | {(measured == without).sum()} |")
    return ("\n".join(lines) + "\n\nA process-case: one process at one batch whose output and "
            "its 2 MiB of alignment stay below glibc's 32 MiB ceiling (above it every call maps "
            "afresh in every process). Predicted: no earlier case of the process freed a "
            "mapping at least as large as this case's request (its input, or its copy check's "
            "largest temporary: a quarter of it where the check compared the whole batch at "
            "once, 16 KiB in sets with `check_temporary_bytes`, whose check compares in "
            "chunks); the last column leaves the check out.")


def copy_processes(t, framework, environment, batch):
    """A CPU copy configuration's processes at `batch` (stats.processes_of) and its rows."""
    cpu = t.copy
    rows = cpu[(cpu["device"] == "cpu") & (cpu["framework"] == framework)
               & (cpu["environment"] == environment) & (cpu["batch"] == batch)]
    return stats.processes_of(rows), rows


def against(mine, theirs):
    """'0.97x [0.93, 1.02]': processes against processes, paired by round."""
    ratio, low, high = stats.ratio_interval(mine, theirs)
    return interval({"ratio": ratio, "ratio_low": low, "ratio_high": high})


def torch_copy(t):
    """PyTorch's copy kernel against glibc's memcpy, and a clone's allocation beside it: per
    batch, `np.copyto` and `Tensor.copy_` into kept buffers and their ratio, and PyTorch's
    clone under tcmalloc and glibc against `copy_`, with its faults (ratios paired by round)."""
    processes = functools.partial(copy_processes, t)
    lines = ["| batch (MB) | `np.copyto` (ms) | PyTorch's `copy_` (ms; x `np.copyto`) | `clone` "
             "under tcmalloc (ms; x `copy_`; faults per call) | `clone` under glibc (the same) |",
             "|---|---|---|---|---|"]
    for batch, nbytes in _bytes(t).items():
        limit, limit_rows = processes("copyto", "glibc", batch)
        kernel, kernel_rows = processes("torch_copyto", "glibc", batch)
        cells = [ms(limit_rows["seconds"].median()),
                 f"{ms(kernel_rows['seconds'].median())}; {against(kernel, limit)}"]
        for environment in ("tcmalloc", "glibc"):
            clone, rows = processes("torch", environment, batch)
            cells.append(f"{ms(rows['seconds'].median())}; {against(clone, kernel)}; "
                         f"{rows['minor_faults'].median():,.0f}")
        lines.append(f"| {batch} ({nbytes / 1e6:.3g}) | " + " | ".join(cells) + " |")
    return ("\n".join(lines) + f"\n\n{figures.span(copy_process_counts(t))} processes per "
            "configuration, in rounds; medians of every call, ratios with their 95% interval "
            "over processes, paired by round.")


def copy_process_counts(t):
    """The copy step's processes per configuration (summary rows of the copy experiment)."""
    return t.summary.loc[t.summary["experiment"] == "copy", "processes"]


def settled_sample(t):
    """copy_kernels' samples from here on count as settled: the second half of each case's."""
    return t.config["benchmarks"]["copy_kernels"]["samples"] // 2


def kernel_pairs(table, settled):
    """copy_kernels' settled samples: {(page, bytes): (PyTorch's, memcpy's)}, each {process:
    samples}, the configuration and its A/A twin together."""
    table = table[table["sample"] >= settled]
    pairs = {}
    for (page, nbytes, kernel), rows in table.groupby(["page", "bytes", "copy_kernel"]):
        pairs.setdefault((page, nbytes), {})[kernel] = {
            process: group["seconds"].to_numpy()
            for process, group in rows.groupby(["environment", "rep"])}
    return {key: (found["torch"], found["memcpy"]) for key, found in pairs.items()}


def settling_of_pairs(table, settled, first):
    """Per size and whether the case ran first in its pair (its buffers new): how much slower
    its five calls from sample `first` on ran than its samples from `settled` on; medians over
    cases and processes."""
    case = ["environment", "rep", "case"]
    early = table[table["sample"].between(first, first + 4)].groupby(case)["seconds"].median()
    settled = table[table["sample"] >= settled].groupby(case)["seconds"].median()
    facts = table.groupby(case)[["bytes", "new_buffers"]].first()
    return (early / settled).groupby([facts["bytes"], facts["new_buffers"]]).median()


def copy_kernels(t):
    """PyTorch's kernel against memcpy inside one process (copy_kernels: the same buffers, the
    two cases one after the other), beside the copy step's ratio between processes
    (`torch_copyto` against `copyto`), in this run and the second; and how a pair's first and
    second case settled."""
    runs = [t, tables_at(t.root / "second")]
    names = ["", "second run: "]
    # the first timed call after as many calls as the copy step warms up with (the 4th)
    warmups = t.config["copy"]["warmup"], t.config["benchmarks"]["copy_kernels"]["warmup"]
    first, settled = warmups[0] - warmups[1], settled_sample(t)
    lines = ["| batch (MB) | " + " | ".join(
        f"{run}one process, 4 KiB pages | {run}one process, huge pages | {run}two processes"
        for run in names) + f" | calls {warmups[0] + 1} to {warmups[0] + 5} x settled: a pair's "
        "first case (second case) |", "|---" * (2 + 3 * len(runs)) + "|"]
    pairs = [kernel_pairs(run.benchmarks["copy_kernels"], settled) for run in runs]
    settling = [settling_of_pairs(run.benchmarks["copy_kernels"], settled, first) for run in runs]
    for batch, nbytes in _bytes(t).items():
        cells = []
        for run, found in zip(runs, pairs):
            cells += [against(*found[page, nbytes]) for page in ("4k", "2m")]
            cells.append(against(copy_processes(run, "torch_copyto", "glibc", batch)[0],
                                 copy_processes(run, "copyto", "glibc", batch)[0]))
        cells.append(" and ".join(f"{run[nbytes, True]:.2f}x ({run[nbytes, False]:.2f}x)"
                                  for run in settling))
        lines.append(f"| {batch} ({nbytes / 1e6:.3g}) | " + " | ".join(cells) + " |")
    processes = [len(found[0]) for run in pairs for found in run.values()]
    return ("\n".join(lines) + "\n\nPyTorch's `copy_` against `np.copyto` (glibc's `memcpy`); "
            f"one process: `copy_kernels`, {figures.span(processes)} processes (the "
            "configuration and its A/A twin), the two kernels copying the same source into the "
            f"same target one case right after the other, the samples after the first {settled}, "
            "ratios paired by process; two processes: the copy step's `torch_copyto` against "
            f"`copyto` under glibc ({figures.span(copy_process_counts(t))} processes each), "
            "paired by round. The last column: the first and the second run; "
            "a pair's first case runs on buffers just made, its second on the same ones right "
            "after.")


def non_temporal_threshold(spec):
    """The bytes from which an environment's glibc copies with non-temporal stores, where its
    GLIBC_TUNABLES set it (else None: the machine's own)."""
    found = re.search(r"x86_non_temporal_threshold=(\w+)", spec.get("env", {}).get(
        "GLIBC_TUNABLES", ""))
    return int(found.group(1), 0) if found else None


ProbeCopy = collections.namedtuple("ProbeCopy", "bytes page page_bytes touch fresh warm inside")


def probe_copies(table):
    """The fault probe's copies, {(bytes, page kind): ProbeCopy} for each measured: touch,
    fresh and warm per (environment, rep) (the process's median seconds and faults); inside:
    what a fault adds to the copy, (fresh - warm) / the fresh copy's faults."""
    per_process = probe_processes(table)
    measured = set(per_process.index.get_level_values("case"))
    found = {}
    for nbytes in sorted(table["bytes"].unique()):
        for page, page_bytes in (("4k", 4096), ("2m", 2 << 20)):
            kinds = (page, f"copy{page}", f"warm{page}")
            if any(f"{kind}-{nbytes}" not in measured for kind in kinds):
                continue  # no huge pages on this machine
            touch, fresh, warm = (per_process.xs(f"{kind}-{nbytes}", level="case")
                                  for kind in kinds)
            found[nbytes, page] = ProbeCopy(nbytes, page, page_bytes, touch, fresh, warm,
                                            added_per_fault(fresh, warm))
    return found


def added_per_fault(fresh, warm):
    """What a fault adds to a copy, per process: (the copy into fresh pages - the same copy
    into warm pages) / the fresh copy's faults."""
    return (fresh["seconds"] - warm["seconds"]) / fresh["faults"]


def probe_processes(table):
    """The fault probe's median seconds and faults per (environment, rep, case)."""
    return table.groupby(["environment", "rep", "case"]).agg(
        seconds=("seconds", "median"), faults=("minor_faults", "median"))


def two_medians(values, first, second, scale):
    """'first / second': medians over processes of `values` ({environment, rep})."""
    medians = values.groupby(level="environment").median()
    return " / ".join(f"{scale * medians[e]:.3g}" for e in (first, second))


def by_round(inside, environment, base="glibc"):
    """`environment` - `base` per fault, paired by round, in us: the median and the rounds'
    range."""
    return rounds_text(paired(inside, environment, base))


def paired(values, environment, base):
    """`environment`'s values ({environment, rep}) less `base`'s, round by round."""
    return values.xs(environment) - values.xs(base)


def rounds_text(values):
    """Seconds per round as 'median (min to max)' in us."""
    return (f"{1e6 * values.median():+.3g} ({1e6 * values.min():+.3g} to "
            f"{1e6 * values.max():+.3g})")


def touched(touch, environment="glibc"):
    """A fault touched alone under `environment` (us, median over processes)."""
    alone = touch.xs(environment)
    return f"{1e6 * (alone['seconds'] / alone['faults']).median():.3g}"


def store_path_faults(t):
    """A fault inside a copy on each store path (the fault probe under glibc, its A/A twin and
    memcpy_nt, in the same rounds): per size and page kind, the copy into fresh pages and into
    warm ones, what a fault adds to the copy, memcpy_nt's and the twin's difference from glibc
    by round, beside a fault touched alone and, where memcpy_nt's stores are non-temporal, one
    page's bytes at the rate of its warm copy."""
    table = t.benchmarks["store_path_faults"]
    threshold = (non_temporal_threshold(t.config["environments"]["memcpy_nt"])
                 or int(t.machine["glibc_non_temporal_threshold"], 0))  # the machine's own
    lines = ["| MB | page | memcpy_nt's stores | into fresh pages (ms) | into warm pages (ms) | "
             "a fault inside the copy (us) | memcpy_nt - glibc per fault (us) | glibc's twin - "
             "glibc (us) | a fault touched alone (us) | one page at the warm non-temporal "
             "copy's rate (us) |", "|---" * 10 + "|"]
    for nbytes, page, page_bytes, touch, fresh, warm, inside in probe_copies(table).values():
        non_temporal = nbytes >= threshold
        rate = (f"{1e6 * page_bytes * warm.xs('memcpy_nt')['seconds'].median() / nbytes:.3g}"
                if non_temporal else "-")
        lines.append(
            f"| {nbytes / 1e6:.3g} | {page} | "
            f"{'non-temporal' if non_temporal else 'through the cache'} | "
            f"{two_medians(fresh['seconds'], 'glibc', 'memcpy_nt', 1e3)} | "
            f"{two_medians(warm['seconds'], 'glibc', 'memcpy_nt', 1e3)} | "
            f"{two_medians(inside, 'glibc', 'memcpy_nt', 1e6)} | "
            f"{by_round(inside, 'memcpy_nt')} | {by_round(inside, 'glibc' + TWIN)} | "
            f"{touched(touch)} | {rate} |")
    processes = figures.span(table.groupby("environment")["rep"].nunique())
    return ("\n".join(lines) + f"\n\n{processes} processes per environment (glibc, its A/A "
            "twin, memcpy_nt), in rounds; two values: glibc / memcpy_nt, medians over processes "
            "of each process's median; a fault inside the copy: (copy into fresh pages - the "
            "same copy into warm pages) / the fresh copy's faults, per process; the differences "
            "paired by round, their median and the rounds' range; the last column: a page's "
            "bytes at the rate memcpy_nt copies into warm pages of that size.")


ERMS = "memcpy_erms"  # glibc's memcpy as `rep movsb` at every size (glibc.cpu.hwcaps)


def own_limit(framework):
    """The copy into a buffer faulted in before that a framework's copy is set against: its own
    kernel's (`torch_copyto` for PyTorch), else glibc's memcpy (`copyto`)."""
    return "torch_copyto" if framework.startswith("torch") else "copyto"


def per_fault(t, framework, environment, batch):
    """(copy - its own copy limit in the same environment) / faults per call, in us, where
    every 4 KiB page of the output faults (else None: no faults, huge pages among them, or
    either configuration not measured)."""
    rows = copy_processes(t, framework, environment, batch)[1]
    limit = copy_processes(t, own_limit(framework), environment, batch)[1]
    if not len(rows) or not len(limit):
        return None
    faults = rows["minor_faults"].median()
    if faults * 4096 < rows["bytes"].iloc[0]:
        return None
    return 1e6 * (rows["seconds"].median() - limit["seconds"].median()) / faults


def faults_text(t, framework, batch):
    """'9,409' per call, or 'glibc / memcpy_erms' where the two environments differ."""
    faults = [copy_processes(t, framework, e, batch)[1]["minor_faults"].median()
              for e in ("glibc", ERMS)]
    return " / ".join(f"{f:,.0f}" for f in (faults if faults[0] != faults[1] else faults[:1]))


def same_faults_ratio(t, batch, environments):
    """PyTensor against PyTorch at `batch`, paired by round, in each environment, where both
    fault alike (their median faults per call equal), else None."""
    ratios = []
    for environment in environments:
        rows = [copy_processes(t, f, environment, batch) for f in ("pytensor", "torch")]
        if rows[0][1]["minor_faults"].median() != rows[1][1]["minor_faults"].median():
            return None
        ratios.append(f"{environment} {against(rows[0][0], rows[1][0])}")
    return ", ".join(ratios)


def memcpy_erms(t, levels=1):
    """Each copy under glibc and memcpy_erms (its ratio paired by round, in this run and the
    second, beside glibc's A/A twin), its faults and what a fault adds to it against its own
    copy limit; then PyTensor against PyTorch with the same faults under each, here and in
    the reference run (the folder `levels` above the set)."""
    runs = [t, tables_at(t.root / "second")]
    lines = ["| copy | batch (MB) | faults per call | glibc (ms) | memcpy_erms (ms; x glibc) | "
             "second run: memcpy_erms x glibc | glibc's twin x glibc (the two runs) | a fault, "
             "by difference: glibc / memcpy_erms (us) | second run (us) |", "|---" * 9 + "|"]
    frameworks = [*t.config["copy"]["limit"]["frameworks"], *t.config["copy"]["frameworks"]]
    for framework in sorted(frameworks, key=lambda f: (f != own_limit(f), f)):
        for batch, nbytes in _bytes(t).items():
            ratios, twins, costs = [], [], []
            for run in runs:
                glibc = copy_processes(run, framework, "glibc", batch)[0]
                ratios.append(against(copy_processes(run, framework, ERMS, batch)[0], glibc))
                twin = copy_processes(run, framework, "glibc" + TWIN, batch)[0]
                twins.append(against(twin, glibc) if twin else "-")
                cost = [per_fault(run, framework, e, batch) for e in ("glibc", ERMS)]
                costs.append("-" if None in cost else " / ".join(f"{c:.3g}" for c in cost))
            glibc, erms = (copy_processes(t, framework, e, batch)[1] for e in ("glibc", ERMS))
            lines.append(f"| {framework} | {batch} ({nbytes / 1e6:.3g}) | "
                         f"{faults_text(t, framework, batch)} | {ms(glibc['seconds'].median())} | "
                         f"{ms(erms['seconds'].median())}; {ratios[0]} | {ratios[1]} | "
                         f"{'; '.join(twins) if twins[0] != '-' else '-'} | {costs[0]} | "
                         f"{costs[1]} |")
    reference = tables_at(t.root.parents[levels - 1])
    compared = []
    for batch in (16, 32):
        here = [same_faults_ratio(run, batch, ("glibc", ERMS)) for run in runs]
        there = same_faults_ratio(reference, batch, ("glibc",))
        if None not in (*here, there):
            compared.append(f"at {batch}: {here[0]} (second run: {here[1]}); the reference "
                            f"run's {there}")
    thresholds = {name: first_of(t.copy, f"glibc_{name}")
                  for name in ("rep_movsb_stop_threshold", "non_temporal_threshold")}
    machine = ("" if None in thresholds.values() else
               f" This machine's glibc copies with `rep movsb` up to "
               f"{int(thresholds['rep_movsb_stop_threshold'], 0) / 2**20:g} MiB and with "
               f"non-temporal stores from {int(thresholds['non_temporal_threshold'], 0) / 1e6:.0f}"
               " MB (`glibc_rep_movsb_stop_threshold` and `glibc_non_temporal_threshold` in the "
               "machine record).")
    return ("\n".join(lines) + f"\n\n{figures.span(copy_process_counts(t))} processes per "
            "configuration, in rounds; medians of every call; ratios with their 95% interval "
            "over processes, paired by round; faults per call under glibc (glibc / memcpy_erms "
            "where they differ); a fault, by difference: (the copy - its own copy limit in the "
            "same environment: `torch_copyto`'s for PyTorch, `copyto`'s for the others) / its "
            "faults per call, where every 4 KiB page faults." + machine
            + (" PyTensor against PyTorch, the same faults per call, paired by round: "
               + "; ".join(compared) + "." if compared else ""))


def erms_faults(t):
    """A fault inside a `rep movsb` copy and inside glibc's own (the fault probe under glibc,
    its A/A twin and memcpy_erms, in the same rounds), in this run and the second."""
    first, second = (probe_copies(run.benchmarks["erms_faults"])
                     for run in (t, tables_at(t.root / "second")))
    if first.keys() != second.keys():
        sys.exit(f"{t.root}: its two runs' fault probes measured different cases")
    lines = ["| MB | page | into fresh pages (ms) | into warm pages (ms) | a fault inside the "
             "copy (us) | memcpy_erms - glibc per fault (us) | glibc's twin - glibc (us) | "
             "second run: memcpy_erms - glibc (us) | second run: twin - glibc (us) | a fault "
             "touched alone (us) |", "|---" * 10 + "|"]
    for key, probe in first.items():
        again = second[key].inside
        lines.append(
            f"| {probe.bytes / 1e6:.3g} | {probe.page} | "
            f"{two_medians(probe.fresh['seconds'], 'glibc', ERMS, 1e3)} | "
            f"{two_medians(probe.warm['seconds'], 'glibc', ERMS, 1e3)} | "
            f"{two_medians(probe.inside, 'glibc', ERMS, 1e6)} | "
            f"{by_round(probe.inside, ERMS)} | "
            f"{by_round(probe.inside, 'glibc' + TWIN)} | {by_round(again, ERMS)} | "
            f"{by_round(again, 'glibc' + TWIN)} | {touched(probe.touch)} |")
    processes = figures.span(t.benchmarks["erms_faults"].groupby("environment")["rep"].nunique())
    return ("\n".join(lines) + f"\n\n{processes} processes per environment (glibc, its A/A "
            "twin, memcpy_erms) in each run, in rounds; two values: glibc / memcpy_erms, "
            "medians over processes of each process's median; a fault inside the copy: (copy "
            "into fresh pages - the same copy into warm pages) / the fresh copy's faults, per "
            "process; the differences paired by round, their median and the rounds' range.")


VECTOR = "memcpy_vector"  # glibc's memcpy with vector stores below its non-temporal threshold
NT_ALL = "memcpy_nt_all"  # the same, non-temporal above 32 KiB: at every size it copies here


@dataclasses.dataclass(frozen=True)
class Split:
    """A set that times the probe's copies into fresh pages by where the fault lands, under
    two store paths of glibc's memcpy in the same rounds (and a twin of one of them)."""
    base: str  # the environment the other is set against, and its words
    base_words: str
    other: str
    other_words: str
    twin_of: str  # the environment whose A/A twin runs in the set (and the touches' one)
    # {name: (its benchmark in the set, the copy, its copy into warm pages (faults.py), the
    # words)}; the first landing's benchmark also times a fault touched alone
    landings: dict
    contrasts: tuple  # (landing, landing, words): premiums set against each other
    pages: tuple = ("4k",)  # the page kinds of the touches named under the tables


# Where a fault costs `rep movsb` more (results/paper/erms_split)
ERMS_SPLIT = Split(
    VECTOR, "vector", ERMS, "rep movsb", "glibc",
    {"whole": ("erms_split", "copy4k", "warm4k", "inside one whole copy"),
     "chunk": ("erms_split", "chunk4k", "chunkwarm4k", "inside each {chunk} copy"),
     "page": ("erms_split_page", "chunk4k", "chunkwarm4k", "inside each {chunk} copy"),
     "chunk_before": ("erms_split", "before4k", "beforewarm4k", "just before each {chunk} copy"),
     "page_before": ("erms_split_page", "before4k", "beforewarm4k",
                     "just before each {chunk} copy")},
    (("chunk", "chunk_before", "trapped less just before, {chunk} copies"),
     ("page", "page_before", "trapped less just before, {chunk} copies"),
     ("whole", "chunk", "one whole copy less {chunk} copies, both trapped")))

# Where a fault costs a non-temporal copy more (results/paper/nt_split)
NT_SPLIT = Split(
    VECTOR, "through the cache", NT_ALL, "non-temporal", VECTOR,
    {"whole": ("nt_split", "copy4k", "warm4k", "4 KiB pages: inside one whole copy"),
     "chunk": ("nt_split", "chunk4k", "chunkwarm4k", "4 KiB pages: inside each {chunk} copy"),
     "chunk_before": ("nt_split", "before4k", "beforewarm4k",
                      "4 KiB pages: just before each {chunk} copy"),
     "whole_before": ("nt_split_whole", "before4k", "beforewarm4k",
                      "4 KiB pages: all before one whole copy"),
     "huge": ("nt_split", "copy2m", "warm2m", "2 MiB pages: inside one whole copy"),
     "huge_chunk": ("nt_split_huge", "chunk2m", "chunkwarm2m",
                    "2 MiB pages: inside each {chunk} copy"),
     "huge_before": ("nt_split_huge", "before2m", "beforewarm2m",
                     "2 MiB pages: just before each {chunk} copy"),
     "huge_whole_before": ("nt_split_whole", "before2m", "beforewarm2m",
                           "2 MiB pages: all before one whole copy")},
    (("chunk", "chunk_before", "4 KiB pages: trapped less just before, {chunk} copies"),
     ("chunk_before", "whole_before", "4 KiB pages: just before each {chunk} copy less all "
      "before one copy"),
     ("huge_chunk", "huge_before", "2 MiB pages: trapped less just before, {chunk} copies"),
     ("huge_before", "huge_whole_before", "2 MiB pages: just before each {chunk} copy less "
      "all before one copy")),
    ("4k", "2m"))


def chunk_words(nbytes):
    """'64 KiB', '2 MiB': a chunk's size."""
    return f"{nbytes >> 20} MiB" if nbytes % (1 << 20) == 0 else f"{nbytes >> 10} KiB"


def split_landings(t, split):
    """A split set's benchmarks' processes (probe_processes) in each of its two runs and their
    chunk's words, the first landing's benchmark (it also times a fault touched alone), the
    sizes, and what a fault adds to the copy per landing, size and run ({name: {bytes: [per
    process, per process]}})."""
    runs = (t, tables_at(t.root / "second"))
    per_process, chunk = {}, {}  # per benchmark: each run's processes, its chunk's words
    for benchmark in dict.fromkeys(landing[0] for landing in split.landings.values()):
        per_process[benchmark] = [probe_processes(run.benchmarks[benchmark]) for run in runs]
        cases = [set(p.index.get_level_values("case")) for p in per_process[benchmark]]
        chunks = {run.config["benchmarks"][benchmark]["params"].get("chunk", faults.CHUNK)
                  for run in runs}
        if cases[0] != cases[1] or len(chunks) > 1:
            sys.exit(f"{t.root}: its two runs' {benchmark} measured different cases or chunks")
        chunk[benchmark] = chunk_words(chunks.pop())
    first = next(iter(split.landings.values()))[0]
    sizes = sorted(t.benchmarks[first]["bytes"].unique())
    added = {name: {nbytes: [added_per_fault(p.xs(f"{fresh}-{nbytes}", level="case"),
                                             p.xs(f"{warm}-{nbytes}", level="case"))
                             for p in per_process[benchmark]] for nbytes in sizes}
             for name, (benchmark, fresh, warm, _) in split.landings.items()}
    return per_process, chunk, first, sizes, added


def fault_split(t, split):
    """Where a fault costs one store path more than another: per size, what a fault adds to the
    copy where it lands (inside one whole copy, inside each chunk's copy, or, the kernel
    faulting the pages in, just before each chunk's copy or all of them before one copy: a
    chunk above the region's size) under the two, and the other's premium by round in this run
    and the second, beside the A/A twin's; then the premiums of two landings set against each
    other, by round."""
    per_process, chunk, first, sizes, added = split_landings(t, split)
    twin = split.twin_of + TWIN
    pair = (split.other, split.base)

    lines = [f"| MB | where the fault lands | a fault (us): {split.base_words} / "
             f"{split.other_words} | {split.other_words} - {split.base_words} (us) | "
             f"{split.other_words} - {split.base_words}, second run (us) | {split.twin_of}'s "
             f"twin - {split.twin_of} (us) | twin - {split.twin_of}, second run (us) |",
             "|---" * 7 + "|"]
    for nbytes in sizes:
        for name, (benchmark, _, _, where) in split.landings.items():
            one, again = added[name][nbytes]
            lines.append(
                f"| {nbytes / 1e6:.3g} | {where.format(chunk=chunk[benchmark])} | "
                f"{two_medians(one, split.base, split.other, 1e6)} | "
                f"{by_round(one, *pair)} | {by_round(again, *pair)} | "
                f"{by_round(one, twin, split.twin_of)} | {by_round(again, twin, split.twin_of)} |")
    contrasts = [f"| MB | {split.other_words} - {split.base_words}: what is set against what | "
                 f"(us) | second run (us) | {split.twin_of}'s twin - {split.twin_of}, the same "
                 "(us) | twin, second run (us) |", "|---" * 6 + "|"]
    for nbytes in sizes:
        for one, other, words in split.contrasts:
            cells = [rounds_text(paired(added[one][nbytes][run], *against)
                                 - paired(added[other][nbytes][run], *against))
                     for against in (pair, (twin, split.twin_of)) for run in (0, 1)]
            contrasts.append(f"| {nbytes / 1e6:.3g} | "
                             f"{words.format(chunk=chunk[split.landings[one][0]])} | "
                             + " | ".join(cells) + " |")
    table = t.benchmarks[first]
    processes = figures.span(table.groupby("environment")["rep"].nunique())
    all_before = ("all before one whole copy: the same for the whole region at once (a chunk "
                  "above its size); " if any("all before" in landing[3]
                                             for landing in split.landings.values()) else "")
    environments = dict.fromkeys(["glibc", split.twin_of, split.base, split.other])
    names = ", ".join(name for name in environments if name in set(table["environment"]))
    alone = per_process[first][0]
    touches = "; ".join(
        f"{chunk_words(faults.HUGE_PAGE if page == '2m' else faults.PAGE)} pages at "
        f"{nbytes / 1e6:.3g} MB: "
        f"{touched(alone.xs(f'{page}-{nbytes}', level='case'), split.twin_of)}"
        for page in split.pages for nbytes in sizes)
    return ("\n".join(lines) + f"\n\n{processes} processes per environment ({names}, the "
            f"A/A twin of {split.twin_of}) in each run, in rounds; a fault: (the copy into fresh "
            "pages - the same copy into warm pages) / the fresh copy's faults, per process, "
            "the median over the first run's processes; just before: the kernel faults in and "
            "zeroes each chunk's pages (`MADV_POPULATE_WRITE`, no trap) right before its "
            f"`memcpy`; {all_before}the differences paired by round, their median and the "
            "rounds' range. A "
            f"fault touched alone, under {split.twin_of} (us): " + touches + ". The L3 this "
            f"machine reports: {t.machine['l3_cache']}.\n\n"
            + "\n".join(contrasts) + f"\n\nEach round's {split.other_words} - "
            f"{split.base_words} (and the twin's {twin} - {split.twin_of}) of the first landing "
            "less the same of the second: their median and the rounds' range.")


# Whether a copy gains from lines the kernel has just zeroed (results/paper/zeroed_lines): the
# same 64 KiB copies, the pages faulted in by the kernel just before each or all before them
ZEROED = Split(
    VECTOR, "vector", ERMS, "rep movsb", VECTOR,
    {"whole": ("zeroed_lines", "copy4k", "warm4k", "inside one whole copy"),
     "chunk": ("zeroed_lines", "chunk4k", "chunkwarm4k", "inside each {chunk} copy"),
     "chunk_before": ("zeroed_lines", "before4k", "beforewarm4k",
                      "just before each {chunk} copy"),
     "all_before": ("zeroed_lines", "allbefore4k", "allbeforewarm4k",
                    "all before the {chunk} copies")},
    (("all_before", "chunk_before", "all before less just before, {chunk} copies"),
     ("whole", "chunk", "one whole copy less {chunk} copies, both trapped"),
     ("chunk", "chunk_before", "trapped less just before, {chunk} copies")))


def zeroed_lines(t, split=ZEROED):
    """Each store path's cost per 4 KiB fault by where it lands, in both runs, beside a fault
    touched alone; then landings set against each other under the same store path, by
    round: with ZEROED, the kernel faulting the pages in all before the copies less just
    before each, the same copies (what a copy gains from lines just zeroed)."""
    per_process, chunk, first, sizes, added = split_landings(t, split)
    words = {name: where.format(chunk=chunk[benchmark])
             for name, (benchmark, _, _, where) in split.landings.items()}
    paths = {split.base: split.base_words, split.other: split.other_words}
    costs = ["| MB | store path | a fault touched alone (us) | " + " | ".join(
        f"a fault {where} (us)" for where in words.values()) + " |",
        "|---" * (3 + len(words)) + "|"]
    contrasts = ["| MB | store path | " + " | ".join(
        f"{contrast[2].format(chunk=chunk[split.landings[contrast[0]][0]])} (us)"
        for contrast in split.contrasts) + " |", "|---" * (2 + len(split.contrasts)) + "|"]
    for nbytes in sizes:
        for path, path_words in paths.items():
            touch = " / ".join(touched(per_process[first][run].xs(f"4k-{nbytes}", level="case"),
                                       path) for run in (0, 1))
            costs.append(f"| {nbytes / 1e6:.3g} | {path_words} | {touch} | " + " | ".join(
                " / ".join(f"{1e6 * run.xs(path).median():.3g}" for run in added[name][nbytes])
                for name in words) + " |")
            contrasts.append(f"| {nbytes / 1e6:.3g} | {path_words} | " + " | ".join(
                "; ".join(rounds_text(added[one][nbytes][run].xs(path)
                                      - added[other][nbytes][run].xs(path)) for run in (0, 1))
                for one, other, _ in split.contrasts) + " |")
    processes = figures.span(t.benchmarks[first].groupby("environment")["rep"].nunique())
    return ("\n".join(costs) + f"\n\n{processes} processes per store path in each run "
            f"({', '.join(f'{path}: {named}' for path, named in paths.items())}, and the A/A "
            f"twin of {split.twin_of}), in rounds; two values: the first run / the second, "
            "medians over processes; a fault: (the copy into fresh pages - the same copy into "
            "warm pages) / the fresh copy's faults, per process; just before: the kernel faults "
            "in and zeroes each chunk's pages (`MADV_POPULATE_WRITE`, no trap) right before "
            "its `memcpy`; all before: the whole region's, before the first `memcpy`. The L3 "
            f"this machine reports: {t.machine['l3_cache']}.\n\n" + "\n".join(contrasts)
            + "\n\nEach round's first landing less its second under the same store path: "
            "the median and the rounds' range, in the first run; the second.")


def priced(t, probe, environment):
    """Each faulting CPU copy of the copy step (medians per framework, environment and batch)
    at its own copy limit (`own_limit`, in its environment where that ran, else glibc's) plus
    its faults at what the fault probe `probe` measured under `environment`: a touch's cost
    (`touch`) and a fault's cost inside the probe's copy (`inside`), as fault_model splits them."""
    limits = t.copy.groupby(["framework", "environment", "batch"])["seconds"].median()
    rows = t.copy[(t.copy["device"] == "cpu")
                  & ~t.copy["framework"].isin({own_limit(f) for f in t.copy["framework"]})]
    rows = rows.drop(columns=[c for c in rows if c.startswith(("predicted_", "fault_"))])
    own = [limits.get((own_limit(f), e, b), limits.get((own_limit(f), "glibc", b)))
           for f, e, b in zip(rows["framework"], rows["environment"], rows["batch"])]
    model = tidy_tables.fault_model(rows.assign(limit_gbps=rows["bytes"] / own / 1e9),
                                    probe[probe["environment"] == environment])
    medians = model.groupby(["framework", "environment", "batch"]).agg(
        measured=("seconds", "median"), faults=("minor_faults", "median"),
        limit=("limit_seconds", "median"), touch=("predicted_seconds", "median"),
        inside=("predicted_in_copy_seconds", "median"))
    return medians[medians["faults"] > 0]


OWN_PATH = {"torch": VECTOR}  # PyTorch's kernel copies with vector stores; the rest, memcpy


def own_store_path(t):
    """The copy step's faulting copies priced three ways, in this run and the second: each
    fault at a touch's cost, at its cost inside glibc's memcpy, and inside a vector copy
    (the fault probe under glibc and memcpy_vector, in the same rounds); each copy's own store
    path marked, and how many each way predicts within 15%."""
    runs = [t, tables_at(t.root / "second")]
    errors = []
    for run in runs:
        probe = run.benchmarks["vector_faults"]
        glibc, vector = priced(run, probe, "glibc"), priced(run, probe, VECTOR)
        error = lambda predicted: glibc["measured"] / predicted - 1
        own = [OWN_PATH.get(f, "glibc") for f in glibc.index.get_level_values("framework")]
        errors.append(pd.DataFrame({
            "touch": error(glibc["touch"]), "glibc": error(glibc["inside"]),
            VECTOR: error(vector["inside"]), "own": own}).join(
                glibc[["measured", "faults", "limit"]]))
    first, second = errors
    lines = ["| copy | environment | batch (MB) | faults per call | measured (ms) | own limit "
             "(ms) | measured / model - 1: a touch / inside glibc's `memcpy` / inside a vector "
             "copy | second run: the same |", "|---" * 8 + "|"]
    percent = lambda v: f"{v:+.0%}".replace("-0%", "+0%")  # no minus on what rounds to 0
    cell = lambda row: " / ".join(
        f"**{percent(row[k])}**" if k == row["own"] else percent(row[k])
        for k in ("touch", "glibc", VECTOR))
    nbytes = _bytes(t)
    for key, row in first.iterrows():
        framework, environment, batch = key
        again = second.loc[key]
        both = lambda column, text: " / ".join(dict.fromkeys(  # once where the runs agree
            text(r[column]) for r in (row, again)))
        lines.append(f"| {framework} | {environment} | {batch} ({nbytes[batch] / 1e6:.3g}) | "
                     f"{both('faults', '{:,.0f}'.format)} | {both('measured', ms)} | "
                     f"{both('limit', ms)} | {cell(row)} | {cell(again)} |")

    def within(run, column):
        hits = [abs(r[r["own"] if column == "own" else column]) <= 0.15
                for _, r in run.iterrows()]
        return f"{sum(hits)} of {len(hits)}"
    ways = {"touch": "every fault at a touch's cost", "glibc": "inside glibc's `memcpy`",
            VECTOR: "inside a vector copy", "own": "each inside its own store path"}
    counts = "; ".join(f"{words}: {within(first, k)} (second run: {within(second, k)})"
                       for k, words in ways.items())
    processes = figures.span(copy_process_counts(t))
    return ("\n".join(lines) + f"\n\n{processes} processes per configuration, in rounds; "
            "medians of every call (two values: the first run / the second, one where they "
            "agree); the model: the copy's own limit (`torch_copyto` for "
            "PyTorch, in its environment; `copyto` for the others) plus its faults, split "
            "between 4 KiB and 2 MiB pages so that they cover its bytes, each at the fault "
            "probe's cost at the call's size: a touch, or the probe's copy into fresh pages "
            "less the same copy into warm ones per fault, under glibc (glibc's `memcpy`, "
            "`rep movsb` at these sizes here) or memcpy_vector (vector stores); in bold each "
            "copy's own store path (PyTorch's kernel: vector stores). Within 15%: "
            + counts + ".")


ROTATING = [("memcpy", ERMS, "`rep movsb` (`memcpy`, memcpy_erms)"),
            ("memcpy", VECTOR, "vector stores (`memcpy`, memcpy_vector)"),
            ("torch", ERMS, "PyTorch's `copy_` (under memcpy_erms)"),
            ("torch", VECTOR, "PyTorch's `copy_` (under memcpy_vector)")]


def rotation_medians(t):
    """Each process's median per case of the rotating copies (calls that did not fault), by
    environment, kernel, bytes, targets (the clone's: 0) and rep; and the table itself."""
    table = t.benchmarks["rotating_copies"]
    table = table[table["environment"].isin([ERMS, VECTOR])]
    keys = ["environment", "copy_kernel", "bytes", "targets", "rep"]
    clone = table["copy_kernel"] == "clone"  # its targets: addresses found, 0 as a case
    clean = table[table["minor_faults"] == 0].assign(
        targets=table["targets"].where(~clone, 0)).groupby(keys)["seconds"].median()
    return clean.reset_index(level="targets"), table


def per_process_ratio(medians, environment, kernel, nbytes, k, base_kernel=None, base_k=1):
    """`kernel` into k targets over `base_kernel` (the same kernel) into `base_k`, process by
    process: 'median (min to max)'."""
    rows = medians.loc[(environment, kernel, nbytes)]
    base = medians.loc[(environment, base_kernel or kernel, nbytes)]
    mine = rows[rows["targets"] == k]["seconds"]
    theirs = base[base["targets"] == base_k]["seconds"]
    ratio = (mine / theirs).dropna()
    return f"{ratio.median():.2f}x ({ratio.min():.2f} to {ratio.max():.2f})"


def clone_cells(medians, table, environment, nbytes):
    """One run's clone at `nbytes` under `environment`: its time, its outputs' distinct
    addresses, the share of its calls that faulted, it against PyTorch's kernel into 1 and 2
    targets, and what part of its excess over 1 target the second target accounts for."""
    rows = table[(table["copy_kernel"] == "clone") & (table["bytes"] == nbytes)
                 & (table["environment"] == environment)]
    kernel = medians.loc[(environment, "torch", nbytes)]
    into = {k: kernel[kernel["targets"] == k]["seconds"] for k in (1, 2)}
    clone = medians.loc[(environment, "clone", nbytes)]["seconds"]
    excess = (clone - into[1]).dropna()
    share = ((into[2] - into[1]) / excess).dropna()
    ratio = functools.partial(per_process_ratio, medians, environment, "clone", nbytes, 0,
                              "torch")
    clear = (excess > 0.1 * into[1]).all()  # else the share divides by noise
    return [ms(clone.median()), figures.span(rows.groupby("rep")["targets"].first()),
            f"{(rows['minor_faults'] > 0).mean():.0%}", ratio(1), ratio(2),
            f"{share.median():.2f} ({share.min():.2f} to {share.max():.2f})" if clear else "-"]


def rotating_copies(t):
    """The same source into 1, 2 or 3 targets in turn, each kernel's 2 and 3 against its 1,
    process by process, in this run and the second; then the copy step's clone against
    PyTorch's kernel into 1 and into 2 targets, in the same processes, in both runs."""
    runs = [rotation_medians(run) for run in (t, tables_at(t.root / "second"))]
    (first, table), (second, _) = runs
    lines = ["| MB | copy | into 1 target (ms) | 2 targets in turn (x 1) | 3 targets in turn "
             "(x 1) | second run: 2 (x 1); 3 (x 1) |", "|---" * 6 + "|"]
    sizes = sorted(set(first.index.get_level_values("bytes")))
    clone_sizes = sorted(set(table[table["copy_kernel"] == "clone"]["bytes"]))
    for nbytes in sizes:
        for kernel, environment, words in ROTATING:
            one = first.loc[(environment, kernel, nbytes)]
            again = [per_process_ratio(second, environment, kernel, nbytes, k) for k in (2, 3)]
            lines.append(
                f"| {nbytes / 1e6:.3g} | {words} | "
                f"{ms(one[one['targets'] == 1]['seconds'].median())} | "
                f"{per_process_ratio(first, environment, kernel, nbytes, 2)} | "
                f"{per_process_ratio(first, environment, kernel, nbytes, 3)} | "
                f"{'; '.join(again)} |")
    clones = ["| MB | environment | run | the clone (ms) | its outputs' distinct addresses | "
              "calls that faulted | x PyTorch's `copy_` into 1 target | x into 2 targets in "
              "turn | 2 targets' share of the clone's excess over 1 |", "|---" * 9 + "|"]
    for nbytes in clone_sizes:
        for environment in (ERMS, VECTOR):
            for name, (medians, rows) in zip(("first", "second"), runs):
                cells = clone_cells(medians, rows, environment, nbytes)
                clones.append(f"| {nbytes / 1e6:.3g} | {environment} | {name} | "
                              + " | ".join(cells) + " |")
    processes = figures.span(table.groupby("environment")["rep"].nunique())
    return ("\n".join(lines) + "\n\n" + "\n".join(clones) + f"\n\n{processes} processes per "
            "environment in each run (memcpy_erms, memcpy_vector, and memcpy_erms' A/A twin, "
            "not shown), in rounds; every target faulted in before the clock, on 4 KiB pages; "
            "a copy's time: the median of its process's calls that did not fault, the median "
            "over processes; ratios process by process, their median and range (min to max). "
            "The clone: the copy step's `Tensor.clone()` of the same source, its output freed "
            "inside the clock; its outputs' distinct addresses in each process's timed calls "
            "(the range over processes; their order is not recorded); the 2 targets' share: "
            "(`copy_` into 2 targets - into 1) / (the clone - `copy_` into 1), process by "
            "process, where the clone takes over 1.1x `copy_` into 1 in every process. "
            f"The L3 this machine reports: {t.machine['l3_cache']} (the host's).")


MEMCPY_USERS = ("numpy", "pytensor", "pytensor_cvm", "theano")  # copy with glibc's memcpy


def small_page_copies(t, batch, users=MEMCPY_USERS):
    """The CPU rows at `batch` of `users` under glibc's default store path that fault in every
    4 KiB page of their output (no huge pages)."""
    rows = t.copy[(t.copy["device"] == "cpu") & (t.copy["batch"] == batch)
                  & t.copy["framework"].isin(users)
                  & t.copy["environment"].isin(
                      tidy_tables.copies_as_the_probe(t.config["environments"]))]
    pages = rows.groupby("configuration")["minor_faults"].transform("median") * 4096
    return rows[pages >= rows["bytes"]]


def cpu_name(t):
    """'Intel Xeon', 'AMD EPYC': the machine record's CPU without its trademarks."""
    return re.sub(r"\s+", " ", re.sub(r"\((R|TM)\)|Processor|CPU", "", t.machine["cpu"])).strip()


def fault_runs(t):
    """Per run that measured the copy step's fresh 4 KiB outputs: its machine, the copy limit,
    the faulting copies' time, what a fault then costs by difference (the `memcpy` users' and
    PyTorch's), and what the probe measured (a touch, and where measured a fault inside a
    copy)."""
    root = t.root.parent
    runs = [("the reference run (`results/paper`)", root),
            ("glibc's store path (`results/paper/memcpy_nt`)", root / "memcpy_nt"),
            ("this set (`results/paper/fault_in_copy`)", t.root),
            ("glibc's copy instruction (`results/paper/memcpy_erms`)", root / "memcpy_erms")]
    lines = ["| run | machine | batch (MB) | copy limit (ms) | 4 KiB-faulting copies (ms) | "
             "faults per call | cost per fault by difference (us) | PyTorch's, by difference "
             "(us) | probe: a touch (us) | probe: inside a copy (us) |", "|---" * 10 + "|"]

    def per_config(rows):  # each configuration's medians over its processes' samples
        return rows.groupby("configuration")[["seconds", "limit_seconds", "minor_faults"]].median()

    def by_difference(medians):
        return 1e6 * (medians["seconds"].median() - medians["limit_seconds"].median()) \
            / medians["minor_faults"].median()

    for name, folder in runs:
        other = tables_at(folder)
        for batch in (16, 32):
            rows = small_page_copies(other, batch)
            if not len(rows):
                continue
            memcpy = per_config(rows)
            torch = per_config(small_page_copies(other, batch, ("torch",)))
            inside = (rows["fault_cost_4k_in_copy"].median() if "fault_cost_4k_in_copy" in rows
                      and rows["fault_cost_4k_in_copy"].notna().any() else None)
            lines.append(
                f"| {name} | {cpu_name(other)} | {batch} ({rows['bytes'].iloc[0] / 1e6:.3g}) | "
                f"{ms(memcpy['limit_seconds'].median())} | {ms(memcpy['seconds'].median())} "
                f"({configurations(memcpy)}) | {memcpy['minor_faults'].median():,.0f} | "
                f"{by_difference(memcpy):.3g} | "
                + (f"{by_difference(torch):.3g} ({configurations(torch)})" if len(torch)
                   else "-")
                + f" | {1e6 * rows['fault_cost_4k'].median():.3g} | "
                + (f"{1e6 * inside:.3g}" if inside is not None else "not measured") + " |")
    return ("\n".join(lines) + "\n\nMedians over the configurations (their medians over "
            "processes) of numpy, PyTensor, PyTensor's C VM and Theano whose every 4 KiB page "
            "faults, under glibc's default store path and copy instruction; the cost by "
            "difference is (copy - limit) / faults; PyTorch's: the same of its copies whose "
            "every 4 KiB page faults, with the same limit (`copyto`'s: glibc's `memcpy`).")


def allocations(t):
    """What PyTorch asks glibc for between its outputs, against the aligned copy and numpy
    (scripts/allocations.py's tables in results/paper/allocations and its second/): per
    framework and batch, in each run, the heap blocks the outputs took, the processes whose
    timed calls took a new one, what every gap between an output's free and the next output's
    request asked for, how often a request landed right after the freed output and how often
    the next output went elsewhere."""
    runs = [pd.read_csv(folder / "allocations.csv", dtype={"asked_in_every_gap": str})
            for folder in (t.root / "allocations", t.root / "allocations" / "second")]

    def cells(rows):
        every = set.intersection(*(set(str(v).split()) for v in
                                   rows["asked_in_every_gap"].fillna("")))
        gaps = rows["gaps"].sum()
        return [figures.span(rows["blocks"]),
                f"{(rows['timed_calls_at_new_blocks'] > 0).sum()} of {len(rows)}",
                " ".join(sorted(every, key=int)) or "nothing",
                f"{rows['landed_right_after_freed_output'].sum()} of {gaps} "
                f"({rows['landed_after_and_next_elsewhere'].sum()})",
                f"{rows['next_output_elsewhere'].sum()} of {gaps}"]

    lines = ["| copy | batch (MB) | blocks the outputs took | processes whose timed calls took "
             "a new block | asked for in every gap, every process (bytes) | gaps where a "
             "request landed right after the freed output (of them, the next output elsewhere) "
             "| gaps whose next output went elsewhere |", "|---" * 7 + "|"]
    keys = ["framework", "batch"]
    for (framework, batch), rows in runs[0].groupby(keys, sort=False):
        again = runs[1].set_index(keys).loc[(framework, batch)].reset_index()
        lines.append(f"| {framework} | {batch} ({rows['bytes'].iloc[0] / 1e6:.3g}) | "
                     + " | ".join(f"{one}; {two}" for one, two in zip(cells(rows), cells(again)))
                     + " |")
    table = runs[0]
    return ("\n".join(lines) + "\n\nEach cell: the first run; the second. "
            f"{table.groupby('framework')['process'].nunique().max()} processes per copy in "
            f"each run, each running batches {', '.join(map(str, table['batch'].unique()))} in "
            f"that order with {figures.span(table['calls'])} calls per batch (the copy's check, "
            "the warm-up calls, the timed calls, the calls after them that show where glibc "
            "found the outputs), glibc's default allocator, every allocation call recorded. "
            "aligned_storage: the aligned copy with 96 bytes from malloc just before each "
            "output's posix_memalign, freed just after the output. A block: an address no "
            "earlier output of that batch had in the process (where glibc found no room in the "
            "blocks before: fresh heap, faulted in page by page, or memory an earlier batch "
            "left); a gap: from an output's free to the next output's request; right after: "
            "within 4 KiB past the freed output's end.")


def layout_comparison(t):
    return comparison_text(t.root / "aa", "This run against the second one")


def reference_comparison(t):
    return comparison_text(t.root / "aa_reference",
                           "This reference run against an earlier one of the same config")


BLOCKS = {"machine": machine_line, "copy-table": copy_table, "fault-costs": fault_costs,
          "noise": noise, "hourglass-table": hourglass_table,
          "hourglass-verdicts": hourglass_sentences, "ruler": ruler, "aa": aa_comparison,
          "aa-reference": reference_comparison, "resolve": resolve_comparison,
          "resolve-reference": resolve_reference, "aa-third": aa_third,
          "aa-timed": aa_timed, "aa-kinds": aa_kinds, "aa-xeon": aa_xeon,
          "twin-calls": twin_calls,
          "why-copy": why_copy, "settling": settling_table, "why-hourglass": why_hourglass,
          "fault-share": fault_share,
          # from the GPU's result set (results/paper/gpu)
          "gpu-machine": gpu_machine, "gpu-copy": gpu_copy, "gpu-hourglass-table": hourglass_table,
          "gpu-hourglass-verdicts": hourglass_sentences, "gpu-hourglass": gpu_hourglass,
          "gpu-aa": gpu_comparison,
          # from glibc's store-path set (results/paper/memcpy_nt)
          "memcpy-nt": memcpy_nt, "memcpy-nt-aa": memcpy_nt_comparison,
          "memcpy-nt-fault-in-copy": fault_in_copy_of_set,
          "memcpy-nt-node": memcpy_nt_node,
          # from the layout set (results/paper/layout)
          "layout-kinds": layout_kinds, "layout-kinds-second": layout_kinds,
          "layout-aa": layout_comparison, "layout-mapped": layout_mapped,
          # from the set that measured the reference's misses again (results/paper/fault_in_copy)
          "fault-in-copy-run": fault_in_copy_of_set, "fault-in-copy-runs": fault_runs,
          # from PyTorch's copy kernel against memcpy (results/paper/torch_copy)
          "torch-copy": torch_copy, "torch-copy-kernels": copy_kernels,
          # from the fault probe on each store path (results/paper/store_path_faults)
          "store-path-faults": store_path_faults, "store-path-faults-second": store_path_faults,
          # from glibc's memcpy as rep movsb (results/paper/memcpy_erms)
          "memcpy-erms": memcpy_erms, "memcpy-erms-faults": erms_faults,
          # memcpy_erms, erms_split, torch_copy and nt_split run on an Intel Xeon
          # (results/paper/<set>/xeon)
          "xeon-machine": machine_line, "xeon-memcpy-erms": functools.partial(memcpy_erms, levels=2),
          "xeon-memcpy-erms-faults": erms_faults,
          "xeon-erms-split": functools.partial(fault_split, split=ERMS_SPLIT),
          "xeon-torch-copy": torch_copy, "xeon-torch-copy-kernels": copy_kernels,
          "xeon-nt-split": functools.partial(fault_split, split=NT_SPLIT),
          # whether a copy gains from lines just zeroed (results/paper/zeroed_lines)
          "zeroed-lines": zeroed_lines,
          # each copy's faults priced inside its own store path (results/paper/own_store_path)
          "own-store-path": own_store_path,
          # copies into targets written in turn (results/paper/rotating_copies)
          "rotating-copies": rotating_copies,
          # from the fault probe inside a copy and just before it (results/paper/erms_split)
          "erms-split": functools.partial(fault_split, split=ERMS_SPLIT),
          # from the fault probe inside a non-temporal copy and before it (results/paper/nt_split)
          "nt-split": functools.partial(fault_split, split=NT_SPLIT),
          # from numpy's copy into memory aligned as PyTorch asks (results/paper/aligned)
          "aligned": aligned, "aligned-second": aligned, "aligned-chunked": aligned,
          "aligned-chunked-second": aligned,
          # glibc's mmap threshold against the order of the cases, over the shipped sets
          "mmap-threshold": mmap_threshold,
          # what PyTorch asks glibc for between its outputs (scripts/allocations.py)
          "allocations": allocations}


# Blocks whose name starts so are written from the result set in that folder of --set (the
# longest prefix that matches).
SETS = {"gpu-": "gpu", "memcpy-nt-node": "memcpy_nt/node", "memcpy-nt": "memcpy_nt",
        "layout-": "layout", "layout-kinds-second": "layout/second",
        "layout-mapped": "layout/mapped", "torch-copy": "torch_copy",
        "aligned": "aligned", "aligned-second": "aligned/second",
        "aligned-chunked": "aligned/chunked", "aligned-chunked-second": "aligned/chunked_second",
        "fault-in-copy-": "fault_in_copy", "store-path-faults": "store_path_faults",
        "store-path-faults-second": "store_path_faults/second",
        "memcpy-erms": "memcpy_erms", "erms-split": "erms_split", "nt-split": "nt_split",
        "xeon-machine": "memcpy_erms/xeon", "xeon-memcpy-erms": "memcpy_erms/xeon",
        "xeon-erms-split": "erms_split/xeon",
        "xeon-torch-copy": "torch_copy/xeon", "xeon-nt-split": "nt_split/xeon",
        "zeroed-lines": "zeroed_lines", "own-store-path": "own_store_path",
        "rotating-copies": "rotating_copies"}


def render(readme, sets):
    """`sets`: {folder under --set ("" for the reference set itself): its Tables, or None}."""
    def replace(match):
        name = match.group(1)
        prefix = max((p for p in SETS if name.startswith(p)), key=len, default=None)
        folder = SETS.get(prefix, "")  # the longest prefix: memcpy-nt-node before memcpy-nt
        source = sets.get(folder)
        if source is None:
            sys.exit(f"README block {name} needs results/paper/{folder}/tables: run make paper")
        return (f"<!-- BEGIN generated: {name} -->\n{BLOCKS[name](source).strip()}\n"
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
    root = Path(args.set)
    sets = {folder: tables_at(root / folder) if (root / folder / "tables" / "summary.csv").exists()
            else None for folder in SETS.values()}
    updated = render(readme, {"": tables_at(root), **sets})
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
