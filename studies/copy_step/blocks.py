"""The copy step (the first seed question): why an identity function over image batches gets slower
from batch 8 to batch 16, and what each environment does to it (results/paper).

Each block's function takes its result set's Tables (knobs/blocks.py) and returns its text;
BLOCKS names the set each block is written from."""


import pandas as pd

from knobs import figures
from knobs.blocks import counts, interval, machine_line, ms
from studies.shared import (MEMCPY_USERS, configurations, copy_bytes, copy_faults, copy_point,
                            fault_in_copy, model_points, probe_costs)


def copy_table(t):
    lines = ["| framework | glibc b8 -> b16 (ms, step) | faults/call b16 (glibc) | tcmalloc b16 "
             "| glibc_tuned b16 | huge pages b16 |", "|---|---|---|---|---|---|"]
    for framework in t.config["copy"]["frameworks"]:
        b8, b16 = copy_point(t, framework, "glibc", 8), copy_point(t, framework, "glibc", 16)
        if b8 is None or b16 is None:
            continue
        cells = [f"{ms(b8['median'])} -> {ms(b16['median'])} (**{b16['median'] / b8['median']:.1f}x**)",
                 f"{copy_faults(t, framework, 'glibc', 16):,.0f}"]
        for environment in ("tcmalloc", "glibc_tuned"):
            row = copy_point(t, framework, environment, 16)
            cells.append("-" if row is None else
                         f"{ms(row['median'])} ({row['ratio']:.2f}x, {row['verdict']})")
        huge = [(e, copy_point(t, framework, e, 16)) for e in ("hugepages_off", "torch_thp")]
        cells.append("; ".join(f"`{e}`: {ms(r['median'])}, {copy_faults(t, framework, e, 16):,.0f} "
                               "faults" for e, r in huge if r is not None) or "-")
        lines.append(f"| {framework} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


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


def model_misses(t, points):
    """Where the model misses by more than 15%, grouped by the term it leaves out."""
    miss = points[points["error"].abs() > 0.15].reset_index()
    tensorflow = miss[miss["framework"] == "tensorflow"]
    partial = miss[miss["environment"].str.startswith("jemalloc") & (miss["faults"] > 0)
                   & (miss["faults"] * 4096 < miss["batch"].map(copy_bytes(t)))
                   & (miss["error"] < 0)]
    own_kernel = miss[(miss["framework"] == "torch") & (miss["faults"] == 0)]
    in_copy = miss[miss["framework"].isin(MEMCPY_USERS) & (miss["faults"] > 0)]
    small_pages = miss["faults"] * 4096 >= miss["batch"].map(copy_bytes(t))  # every page faults
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
                     "`memcpy` (`studies/store_path/config/torch_copy.yaml` and `studies/output_memory/config/aligned.yaml` measure it "
                     "against `memcpy`, on the machine that runs them); by the spread "
                     "of their processes' medians: " + "; ".join(
                         process_spread(t, r.framework, r.environment, r.batch)
                         for r in own_kernel.itertuples()) + ".")
    if len(in_copy):
        measured = ("the probe measured it in this run (the copy cases)"
                    if "in_copy" in points else
                    "this run's probe did not measure it; the sets that did, and the same "
                    "copies measured again, are under \"A fault inside a copy\" in the store-path study")
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
                     "(\"The model with each copy's own fault\", in the store-path study): " + "; ".join(
                         f"{r.framework} {r.environment} b{r.batch} {r.error:+.0%} "
                         f"({r.faults:,.0f} faults)" for r in own_path.itertuples()) + ".")
    if len(rest):
        huge = ("; PyTorch's with huge pages among their faults: on the Intel Xeon of another "
                "model neither a touch's cost nor a fault's cost inside the vector copy "
                "predicts them better at every batch (\"The model with each copy's own "
                "fault\", in the store-path study)" if (rest["framework"] == "torch").all() else "")
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
        b8, b16 = copy_point(t, framework, "glibc", 8), copy_point(t, framework, "glibc", 16)
        if b8 is None or b16 is None:
            continue
        parts = [f"glibc {ms(b8['median'])} -> {ms(b16['median'])} ms "
                 f"({b16['median'] / b8['median']:.1f}x), "
                 f"{copy_faults(t, framework, 'glibc', 8):,.0f} -> "
                 f"{copy_faults(t, framework, 'glibc', 16):,.0f} faults per call"]
        for environment in t.config["copy"]["environments"]:
            if environment == "glibc":
                continue
            batch = 4 if environment.startswith("jemalloc") else 16
            row = copy_point(t, framework, environment, batch)
            if row is None or pd.isna(row.get("ratio")):
                continue
            parts.append(f"{environment} (b{batch}: {COPY_MECHANISMS.get(environment, 'its knobs')}): "
                         f"{copy_faults(t, framework, environment, batch):,.0f} faults, "
                         f"{ms(row['median'])} ms, {interval(row)} of glibc, {row['verdict']}")
        note = FRAMEWORK_NOTES.get(framework)
        lines.append(f"- **{framework}**{f' ({note})' if note else ''}: " + "; ".join(parts) + ".")
    return "\n".join(lines)


def answer(t):
    """The first seed question in a few lines (the README's answer)."""
    frameworks = [f for f in t.config["copy"]["frameworks"]
                  if copy_point(t, f, "glibc", 8) is not None]
    steps = {f: copy_point(t, f, "glibc", 16)["median"] / copy_point(t, f, "glibc", 8)["median"]
             for f in frameworks}
    limit8, limit16 = (t.copy[t.copy["batch"] == b]["limit_seconds"].median() for b in (8, 16))
    faults = sorted({copy_faults(t, f, "glibc", 16) for f in frameworks} - {0})
    cures = []
    for environment in ("tcmalloc", "glibc_tuned", "torch_thp"):
        rows = [r for f in frameworks if (r := copy_point(t, f, environment, 16)) is not None
                and f != "tensorflow"]
        if rows:
            ratios = [r["ratio"] for r in rows]
            calls = counts(pd.Series([r["verdict"] for r in rows]))
            cures.append(f"`{environment}` {figures.span([round(x, 2) for x in ratios], '{:.2f}x')}"
                         f" ({calls})")
    b8, b16 = (copy_bytes(t)[b] / 1e6 for b in (8, 16))
    return (f"- **The step.** From batch 8 ({b8:.1f} MB) to 16 ({b16:.1f} MB) under glibc, the "
            "identity function's time per call grows "
            + ", ".join(f"{f} **{x:.1f}x**" for f, x in steps.items())
            + f", while a copy into a buffer already faulted in only grows {limit16 / limit8:.1f}x "
            "(the seed reported ~100x, timing zeros on its own machine).\n"
            f"- **Why.** Past glibc's 32 MiB mmap ceiling every output is a fresh mapping, page-"
            f"faulted on every call: {' or '.join(f'{x:,.0f}' for x in faults)} minor faults per "
            "call (fewer where numpy asks for 2 MiB huge pages).\n"
            "- **What takes it away** (batch 16, each framework against itself under glibc, "
            "TensorFlow aside: its own pool never faults): " + "; ".join(cures) + ".\n"
            f"- **Measured on** {machine_line(t)}.")


BLOCKS = {
    "answer-copy": ("", answer),
    "machine": ("", machine_line),
    "copy-table": ("", copy_table),
    "fault-costs": ("", fault_costs),
    "why-copy": ("", why_copy),
}
