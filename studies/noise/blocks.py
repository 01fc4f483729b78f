"""The A/A and noise evidence: how far two runs of the same code agree, what the machine does
between them, processes of two kinds, and what `make resolve` settles.

Each block's function takes its result set's Tables (knobs/blocks.py) and returns its text;
BLOCKS names the set each block is written from."""


import pandas as pd

from knobs import figures
from knobs.blocks import comparison_text, counts
from studies.shared import copy_bytes, copy_point, kinds_text


def noise(t):
    aa = t.verdicts[t.verdicts["kind"] == "A/A"]
    lines = []
    for experiment, rows in aa.groupby("experiment"):
        far = (rows["ratio_high"] - 1).combine(1 / rows["ratio_low"] - 1, max)
        lines.append(f"- **{experiment}**: the baseline against its A/A twin, over "
                     f"{len(rows)} cases: ratios {rows['ratio'].min():.3f} to "
                     f"{rows['ratio'].max():.3f}; the widest interval reaches "
                     f"+-{far.max():.1%}, the median one +-{far.median():.1%}; "
                     + counts(rows["verdict"]))
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
    lines.append(f"- of the {len(verdicts)} verdicts, " + counts(verdicts["verdict"])
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
    before, after = (counts(verdicts[f"verdict_{s}"]) for s in ("before", "after"))
    within = [(half_width(verdicts[f"ratio_{s}"], verdicts[f"ratio_low_{s}"],
                          verdicts[f"ratio_high_{s}"]) <= 0.05).sum() for s in ("before", "after")]
    return (f"{len(added)} configurations got {int((added['processes_after'] - added['processes_before']).sum())} "
            f"more processes ({figures.span(added['processes_after'].astype(int))} each now, "
            f"{figures.span(added['processes_before'].astype(int))} before). Knob verdicts before: "
            f"{before}; after: {after}. Of the {len(opened)} inconclusive before, "
            + counts(opened["verdict_after"]) + f" after; {verdicts['contradicts'].sum()} "
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
    sizes = copy_bytes(t)
    for framework in t.config["copy"]["frameworks"]:
        for fixed, randomized in fixed_of.items():
            if copy_point(t, framework, fixed, sizes.index[0]) is None:
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


def layout_comparison(t):
    return comparison_text(t.root / "aa", "This run against the second one")


def reference_comparison(t):
    return comparison_text(t.root / "aa_reference",
                           "This reference run against an earlier one of the same config")


PAIRS = ("aa", "aa/third", "aa/timed", "aa/kinds", "aa/xeon")  # default runs compared in pairs


def answer(t):
    """How far the numbers hold, in a few lines (the README's guarantees)."""
    changed, contradicting, verdicts = [], 0, 0
    for folder in PAIRS:
        comparison = pd.read_csv(t.root / folder / "comparison.csv")
        column = ("change_beyond_machine" if "change_beyond_machine" in comparison else "change")
        changed.append(comparison[column].isin(["faster", "slower"]).mean())
        pair = pd.read_csv(t.root / folder / "verdicts.csv")
        contradicting += int(pair["contradicts"].sum()) if "contradicts" in pair else 0
        verdicts += len(pair)
    tables = [pd.read_csv(path) for path in sorted(t.root.rglob("*verdicts.csv"))]
    twins = pd.concat([v[v["kind"] == "A/A"] for v in tables if {"kind", "processes"} <= set(v)])
    called = twins["verdict"].isin(["faster", "slower"]).sum()
    reference = t.verdicts["verdict"]
    return (f"- **Two runs of the same code** ({len(PAIRS)} pairs of default runs): "
            f"{min(changed):.1%} to {max(changed):.1%} of configurations called changed "
            f"(beyond what the machine moved for every copy of one size); {contradicting} of "
            f"{verdicts} knob verdicts contradict their counterpart.\n"
            f"- **A/A twins** (a baseline measured again in the same rounds) were called an "
            f"effect in {called} of {len(twins)} verdicts shipped ({called / len(twins):.1%}): "
            "the false-call rate of a 95% interval over few processes.\n"
            f"- **The reference run** ({figures.span(t.summary['processes'])} processes per "
            f"configuration): of its {len(reference)} verdicts, {counts(reference)}.")


BLOCKS = {
    "answer-noise": ("", answer),
    "noise": ("", noise),
    "aa": ("", aa_comparison),
    "aa-reference": ("", reference_comparison),
    "resolve": ("", resolve_comparison),
    "resolve-reference": ("", resolve_reference),
    "aa-third": ("", aa_third),
    "aa-timed": ("", aa_timed),
    "aa-kinds": ("", aa_kinds),
    "aa-xeon": ("", aa_xeon),
    "twin-calls": ("", twin_calls),
    "settling": ("", settling_table),
    "layout-kinds": ("layout", layout_kinds),
    "layout-kinds-second": ("layout/second", layout_kinds),
    "layout-aa": ("layout", layout_comparison),
}
