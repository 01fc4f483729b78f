"""glibc's store path and a fault inside a copy: PyTorch's copy kernel against memcpy,
non-temporal and `rep movsb` stores, where a fault's premium comes from, on two machines.

Each block's function takes its result set's Tables (knobs/blocks.py) and returns its text;
BLOCKS names the set each block is written from."""

import collections
import dataclasses
import functools
import re
import sys

import pandas as pd

from knobs import figures
from knobs.benchmarks import faults
from knobs.benchmarks.copy import model as copy_model
from knobs.experiments import TWIN
from knobs.blocks import against, comparison_text, first_of, interval, machine_kind_short, machine_line, ms, tables_at
from studies.shared import (MEMCPY_USERS, configurations, copy_bytes, copy_point, copy_processes,
                            fault_in_copy, model_points)


def fault_in_copy_of_set(t):
    """The fault inside a copy, for the environments that copy as the probe does (glibc's
    default store path: no GLIBC_TUNABLES)."""
    points = model_points(t) if t.faults is not None else pd.DataFrame()
    if "in_copy" not in points:
        return "Not measured in this result set (its fault probe has no copy cases)."
    default_path = copy_model.copies_as_the_probe(t.config["environments"])
    environment = points.index.get_level_values("environment").str.replace(".twin", "")
    faulting = points[(points["faults"] > 0) & environment.isin(default_path)]
    return fault_in_copy(t, faulting)


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
                point = copy_point(t, framework, environment, batch)
                if point is None:
                    cells.append("-")
                    continue
                against = (f"{interval(point)} {point['verdict']}" if verdicts
                           else f"{point['ratio']:.2f}x")
                cells.append(ms(point["median"]) + (
                    "" if environment == "glibc" else f" ({against})"))
            nbytes = copy_bytes(t)[batch]
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


def torch_copy(t):
    """PyTorch's copy kernel against glibc's memcpy, and a clone's allocation beside it: per
    batch, `np.copyto` and `Tensor.copy_` into kept buffers and their ratio, and PyTorch's
    clone under tcmalloc and glibc against `copy_`, with its faults (ratios paired by round)."""
    processes = functools.partial(copy_processes, t)
    lines = ["| batch (MB) | `np.copyto` (ms) | PyTorch's `copy_` (ms; x `np.copyto`) | `clone` "
             "under tcmalloc (ms; x `copy_`; faults per call) | `clone` under glibc (the same) |",
             "|---|---|---|---|---|"]
    for batch, nbytes in copy_bytes(t).items():
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
    for batch, nbytes in copy_bytes(t).items():
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
        for batch, nbytes in copy_bytes(t).items():
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
    model = copy_model.fault_model(rows.assign(limit_gbps=rows["bytes"] / own / 1e9),
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
    nbytes = copy_bytes(t)
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


def small_page_copies(t, batch, users=MEMCPY_USERS):
    """The CPU rows at `batch` of `users` under glibc's default store path that fault in every
    4 KiB page of their output (no huge pages)."""
    rows = t.copy[(t.copy["device"] == "cpu") & (t.copy["batch"] == batch)
                  & t.copy["framework"].isin(users)
                  & t.copy["environment"].isin(
                      copy_model.copies_as_the_probe(t.config["environments"]))]
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


BLOCKS = {
    "memcpy-nt": ("memcpy_nt", memcpy_nt),
    "memcpy-nt-aa": ("memcpy_nt", memcpy_nt_comparison),
    "memcpy-nt-fault-in-copy": ("memcpy_nt", fault_in_copy_of_set),
    "memcpy-nt-node": ("memcpy_nt/node", memcpy_nt_node),
    "fault-in-copy-run": ("fault_in_copy", fault_in_copy_of_set),
    "fault-in-copy-runs": ("fault_in_copy", fault_runs),
    "torch-copy": ("torch_copy", torch_copy),
    "torch-copy-kernels": ("torch_copy", copy_kernels),
    "store-path-faults": ("store_path_faults", store_path_faults),
    "store-path-faults-second": ("store_path_faults/second", store_path_faults),
    "memcpy-erms": ("memcpy_erms", memcpy_erms),
    "memcpy-erms-faults": ("memcpy_erms", erms_faults),
    "xeon-machine": ("memcpy_erms/xeon", machine_line),
    "xeon-memcpy-erms": ("memcpy_erms/xeon", functools.partial(memcpy_erms, levels=2)),
    "xeon-memcpy-erms-faults": ("memcpy_erms/xeon", erms_faults),
    "xeon-erms-split": ("erms_split/xeon", functools.partial(fault_split, split=ERMS_SPLIT)),
    "xeon-torch-copy": ("torch_copy/xeon", torch_copy),
    "xeon-torch-copy-kernels": ("torch_copy/xeon", copy_kernels),
    "xeon-nt-split": ("nt_split/xeon", functools.partial(fault_split, split=NT_SPLIT)),
    "zeroed-lines": ("zeroed_lines", zeroed_lines),
    "own-store-path": ("own_store_path", own_store_path),
    "rotating-copies": ("rotating_copies", rotating_copies),
    "erms-split": ("erms_split", functools.partial(fault_split, split=ERMS_SPLIT)),
    "nt-split": ("nt_split", functools.partial(fault_split, split=NT_SPLIT)),
}
