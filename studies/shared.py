"""What more than one study reads from the shipped tables: a copy configuration's row, its
faults and sizes, the fault-cost probe's costs, the hourglass's table and sentences, the kinds
of process a configuration showed. Each takes a result set's Tables (knobs/blocks.py)."""

from knobs import stats
from knobs.benchmarks.copy import model as copy_model
from knobs.blocks import interval, ms


MEMCPY_USERS = ("numpy", "pytensor", "pytensor_cvm", "theano")  # copy with glibc's memcpy


def probe_costs(t, page):
    """The fault probe's median cost per fault of one page size, by region size (bytes)."""
    costs = copy_model.fault_costs(t.faults)
    return costs[costs["page"] == page].groupby("bytes")["cost"].median()


def copy_point(t, framework, environment, batch, device="cpu"):
    """The summary's row of one copy configuration at one batch, or None."""
    s = t.summary
    rows = s[(s["experiment"] == "copy") & (s["framework"] == framework)
             & (s["environment"] == environment) & (s["device"] == device) & (s["batch"] == batch)]
    return rows.iloc[0] if len(rows) else None


def copy_faults(t, framework, environment, batch, device="cpu"):
    """The median minor faults per call of one copy configuration at one batch, or None."""
    c = t.copy
    rows = c[(c["framework"] == framework) & (c["environment"] == environment)
             & (c["device"] == device) & (c["batch"] == batch)]
    return rows["minor_faults"].median() if len(rows) else None


def copy_processes(t, framework, environment, batch):
    """A CPU copy configuration's processes at `batch` (stats.processes_of) and its rows."""
    cpu = t.copy
    rows = cpu[(cpu["device"] == "cpu") & (cpu["framework"] == framework)
               & (cpu["environment"] == environment) & (cpu["batch"] == batch)]
    return stats.processes_of(rows), rows


def copy_bytes(t):
    """The bytes one copy call moves, per batch."""
    return t.copy.groupby("batch")["bytes"].first()


def configurations(rows):
    """'3 configurations' ('1 configuration')."""
    return f"{len(rows)} configuration{'s' * (len(rows) != 1)}"


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


def kinds_text(per_process):
    """'211 x3 (3.1 ms), 722 x7 (4.6 ms)': each faults-per-call level of these processes (one
    row each: median `faults` and `seconds`), how many showed it and their median time."""
    return ", ".join(f"{faults:,.0f} x{len(group)} ({ms(group['seconds'].median())} ms)"
                     for faults, group in per_process.groupby("faults"))
