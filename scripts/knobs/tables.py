"""Result files -> tidy tables, one row per timed sample: the configuration's columns, the
case, the sample's time and counters, how its knobs were proven, what the machine did
meanwhile, the versions and the machine. Every experiment's table is built the same way; an
experiment may add columns of its own (COLUMNS below: the copy limit, the hourglass's
labels and its share of the matmul peak). pandas only: no framework is imported.
"""

import numpy as np
import pandas as pd

from knobs.hourglass import TF_KNOBS, parse_tf_variant, peak_precision, precision_of
from knobs.experiments import TWIN
from knobs.machine import gpu_text, kind


def _scalars(mapping, longest=None):
    """The entries that fit in a table cell (strings up to `longest` characters)."""
    return {k: v for k, v in (mapping or {}).items()
            if isinstance(v, (int, float, bool)) or v is None
            or isinstance(v, str) and (longest is None or len(v) <= longest)}


def process_columns(run):
    """What the process did apart from its samples, and what the machine did meanwhile."""
    process, timeline = run["process"], run.get("timeline", {})
    first_case = (run.get("order") or [None])[0]
    first_seconds = run.get("cases", {}).get(first_case, {}).get("first_seconds")
    ready = timeline.get("first_case_ready")
    return {
        "setup_seconds": ready,
        "build_seconds": (timeline["build_done"] - timeline["build_started"]
                          if "build_done" in timeline else None),
        "process_to_first_step_seconds": (ready + first_seconds
                                          if ready is not None and first_seconds is not None
                                          else None),
        "other_cpus": process["other_cpus"], "steal_share": process["steal_share"],
        "load_before": process["load_before"], "load_after": process["load_after"],
        "disturbed": process["disturbed"],
        "attempts": 1 + len(process.get("previous_attempts", [])),
        "started": process.get("started"), "finished": run["finished"],
    }


def knob_columns(knobs):
    proofs = knobs.get("proofs", {})
    return {
        "threads": knobs.get("threads"),
        "preloads": " ".join(p["path"] for p in knobs.get("preloads", [])),
        "knob_proofs": " ".join(f"{name}={proof['proof']}" for name, proof in proofs.items()),
        **_scalars(knobs.get("effects")),
    }


def machine_columns(machine):
    return {
        "host": machine["host"], "cpu": machine["cpu"], "machine_kind": kind(machine),
        "cores": machine["cores"], "memory_gib": machine["memory_gib"], "os": machine["os"],
        "gpu": gpu_text(machine), "l3_cache": machine["caches"].get("L3"),
        "kernel": machine["kernel"], "glibc": machine["glibc"],
        "thp_enabled": machine["thp_enabled"], "thp_defrag": machine["thp_defrag"],
        "glibc_non_temporal_threshold": machine.get("glibc_non_temporal_threshold"),
        "glibc_rep_movsb_stop_threshold": machine.get("glibc_rep_movsb_stop_threshold"),
    }


def rows(run, case_column):
    """The rows of one result file."""
    labels = dict(run["labels"])
    fixed = {"experiment": run["experiment"], "configuration": run["configuration"],
             **_scalars(run["benchmark"]["params"]), **labels,
             "rep": run["rep"], "status": run["status"], "reason": run.get("reason"),
             **knob_columns(run["knobs"]), **process_columns(run),
             **machine_columns(run["machine"])}
    versions = run.get("versions", {})
    fixed.update({f"{name}_version": version for name, version in versions.items()})
    if "framework" in labels:
        fixed["framework_version"] = versions.get(labels["framework"])
    # The benchmark's own evidence where it fits in a cell (fused ops, parameter count).
    fixed.update({k: v for k, v in _scalars(run.get("evidence"), 80).items() if k not in fixed})
    if run["status"] != "ok":
        yield {**fixed, case_column: None, "sample": None, "seconds": None}
        return
    for case in run["order"]:
        measured = run["cases"][case]
        samples = measured["samples"]
        # a fact that a column of the record already names keeps both (`case_<name>`); the
        # case's own column excepted (the copy step's `batch` fact is its case)
        taken = {*fixed, *samples, "sample", "position", "first_seconds"}
        info = {f"case_{key}" if key in taken else key: value
                for key, value in _scalars(measured["info"]).items()}
        for sample in range(len(samples["seconds"])):
            yield {**fixed, **info, case_column: case, "sample": sample,
                   "position": measured["position"], "first_seconds": measured["first_seconds"],
                   **{key: values[sample] for key, values in samples.items()}}


MEASURED = ["rep", "sample", "seconds", "cpu_seconds", "minor_faults", "major_faults",
            "voluntary_switches", "involuntary_switches"]


def tidy(runs, case_column):
    """The table of `runs`: what names a sample first, then what was measured, then the
    rest; `value` only where some step returned a number."""
    table = pd.DataFrame([row for run in runs for row in rows(run, case_column)])
    if "value" in table and table["value"].isna().all():
        table = table.drop(columns="value")
    labels = [k for run in runs[:1] for k, _ in run["labels"]]
    first = ["experiment", "configuration", *labels, case_column,
             *(c for c in MEASURED if c in table)]
    return table[first + [c for c in table.columns if c not in first]]


# ---- Columns of the built-in experiments ----------------------------------------------------
def copy_columns(table, settings, tables):
    """GB/s, and the copy limit per size: the fastest median among the reference copies (into
    a buffer already faulted in; a fresh copy), measured in the row's own environment where
    the limit ran in it (an environment may change the copy itself: glibc's store path), else
    in the first of the limit's environments."""
    table["batch"] = table["batch"].astype(int)
    table["gbps"] = table["bytes"] / table["seconds"] / 1e9
    limit = settings["limit"]
    reference = table[table["framework"].isin(limit["frameworks"])
                      & table["environment"].isin(limit["environments"])]
    size = ["host", "device", "input", "batch"]
    medians = (reference.groupby([*size, "framework", "environment"])
               ["seconds"].median().reset_index())
    nbytes = dict(zip(table["batch"], table["bytes"]))

    def fastest(by):
        best = medians.loc[medians.groupby(by)["seconds"].idxmin()]
        return best.assign(
            limit_gbps=lambda d: d["batch"].map(nbytes) / d["seconds"] / 1e9,
            limit_source=lambda d: d["framework"] + "/" + d["environment"])[
                [*by, "limit_gbps", "limit_source"]]

    by_environment = fastest([*size, "environment"])
    own = table[size + ["environment"]].merge(by_environment, how="left")
    baseline = table[size].merge(by_environment[by_environment["environment"]
                                                == limit["environments"][0]], how="left")
    for column in ("limit_gbps", "limit_source"):
        table[column] = own[column].fillna(baseline[column]).to_numpy()
    table = fault_model(table, tables.get("faults"))
    first = ["experiment", "framework", "environment", "device", "batch", "input", "rep",
             "sample", "seconds", "minor_faults", "bytes", "gbps", "limit_gbps"]
    table = table[first + [c for c in table.columns if c not in first]]
    return table.sort_values(["framework", "environment", "batch", "input", "rep", "sample"])


HUGE_PAGE = 2 << 20
SMALL_PAGE = 4096


def probe_kind(faults_table):
    """Each fault-probe row's kind: `4k`, `2m`, `copy4k`, `warm4k`, ... (its case less its size)."""
    return faults_table["case"].astype(str).str.split("-").str[0].rename("page")


def copies_as_the_probe(environments):
    """The environments whose copies take glibc's default store path, as the fault probe's
    copies do (no GLIBC_TUNABLES): where its cost of a fault inside a copy applies."""
    return {name for name, spec in environments.items()
            if "GLIBC_TUNABLES" not in (spec or {}).get("env", {})}


def fault_costs(faults_table):
    """Seconds per fault per host, page kind and region size (`bytes`): for "4k" and "2m" (a
    page touched), the median over the fault probe's samples of time / faults; for "copy4k" and
    "copy2m" (pages faulted in by a copy), the median copy into fresh pages less the median
    copy into pages of the same kind faulted in before (`warm4k`, `warm2m`), per fault."""
    ok = faults_table[faults_table["seconds"].notna()]
    page = probe_kind(ok)
    keys = [ok["host"], page, ok["bytes"]]
    touched = ok[page.isin(["4k", "2m"]) & (ok["minor_faults"] > 0)]
    per_fault = touched["seconds"] / touched["minor_faults"]
    costs = per_fault.groupby([k[touched.index] for k in keys]).median().rename("cost")
    medians = ok.groupby(keys)[["seconds", "minor_faults"]].median()
    kinds = set(page)
    for kind in sorted(k for k in ("copy4k", "copy2m") if {k, "warm" + k[4:]} <= kinds):
        fresh, warm = (medians.xs(k, level="page") for k in (kind, "warm" + kind[4:]))
        in_copy = (fresh["seconds"] - warm["seconds"]) / fresh["minor_faults"]
        in_copy = in_copy[np.isfinite(in_copy)]
        in_copy.index = pd.MultiIndex.from_tuples(
            [(host, kind, nbytes) for host, nbytes in in_copy.index], names=costs.index.names)
        costs = pd.concat([costs, in_copy.rename("cost")])
    return costs.reset_index()


def cost_at(costs, host, page, nbytes):
    """What a fault costs in a region of `nbytes`: the probe's cost at that size, interpolated
    between the sizes it measured (in log size), the nearest one beyond them; NaN unprobed."""
    probed = costs[(costs["host"] == host) & (costs["page"] == page)].sort_values("bytes")
    if probed.empty:
        return np.nan
    return float(np.interp(np.log(nbytes), np.log(probed["bytes"]), probed["cost"]))


def fault_model(table, faults_table):
    """The copy step's model of a call on the CPU: the copy limit for its size, plus its page
    faults at what a fault costs here in a region of that size. A call that faults at all
    faults in its whole output (a fresh mapping): `huge` of its faults are 2 MiB pages, the
    rest 4 KiB, such that they cover its bytes. Without a fault probe the model is left out.
    `predicted_in_copy_seconds`: the same with each fault at what it costs inside a copy
    (where the probe measured that)."""
    if faults_table is None or faults_table.empty:
        return table
    costs = fault_costs(faults_table)
    pages = ("4k", "2m", "copy4k", "copy2m")
    at = {(host, nbytes): [cost_at(costs, host, page, nbytes) for page in pages]
          for host, nbytes in set(zip(table["host"], table["bytes"]))}
    pairs = list(zip(table["host"], table["bytes"]))
    small_cost, huge_cost, small_in_copy, huge_in_copy = (
        pd.Series([at[p][i] for p in pairs], index=table.index) for i in range(len(pages)))
    faults = table["minor_faults"].astype(float)
    huge = ((table["bytes"] - faults * SMALL_PAGE) / (HUGE_PAGE - SMALL_PAGE)).clip(lower=0)
    huge = huge.where(faults > 0, 0).clip(upper=faults).where(huge_cost.notna(), 0)
    table["fault_cost_4k"], table["fault_cost_2m"] = small_cost, huge_cost
    table["limit_seconds"] = table["bytes"] / table["limit_gbps"] / 1e9
    table["fault_seconds"] = (faults - huge) * small_cost + huge * huge_cost.fillna(0)
    table["predicted_seconds"] = (table["limit_seconds"] + table["fault_seconds"]).where(
        table["device"] == "cpu")
    table["fault_cost_4k_in_copy"], table["fault_cost_2m_in_copy"] = small_in_copy, huge_in_copy
    if small_in_copy.isna().all() and huge_in_copy.isna().all():
        return table  # the probe did not copy into fresh pages
    # each page kind at its cost inside a copy: NaN where faults of a kind were not probed so
    small_seconds = ((faults - huge) * small_in_copy).where(faults - huge > 0, 0)
    huge_seconds = (huge * huge_in_copy).where(huge > 0, 0)
    table["predicted_in_copy_seconds"] = (
        table["limit_seconds"] + small_seconds + huge_seconds).where(table["device"] == "cpu")
    return table


def ops_by_category(ops, by=("configuration",)):
    """Seconds per op category of each traced step, the mean over processes (a process whose
    trace has no op of a category counts zero for it): one row per `by`, one column per
    category."""
    per_process = ops.groupby([*by, "rep", "category"])["seconds"].sum().unstack(fill_value=0)
    return per_process.groupby(list(by)).mean()


def _peaks(peak_table):
    """The best GFLOP/s per (host, device, precision) of the matmul peak's runs."""
    peak = peak_table[peak_table["seconds"].notna()]
    gflops = peak["flops"] / peak["seconds"] / 1e9
    return gflops.groupby([peak["host"], peak["device"], peak["precision"]]).max().to_dict()


def hourglass_columns(table, settings, tables):
    """Each configuration's label and figure position (from the plan; one block per device
    where there are several), its knobs, and its FLOP/s against the peak of its precision."""
    plan = {(p["framework"], p["variant"], p["environment"]): p for p in settings["plan"]}
    devices = settings["devices"]
    peaks = _peaks(tables["peak"])

    def label(row):
        environment = row["environment"].removesuffix(TWIN)
        entry = plan[(row["framework"], row["variant"], environment)]
        text = entry["label"] + (" (A/A twin)" if row["environment"].endswith(TWIN) else "")
        rung = entry["rung"] + (len(plan) if row["environment"].endswith(TWIN) else 0)
        if len(devices) == 1:
            return text, rung
        return f"[{row['device']}] {text}", devices.index(row["device"]) * 2 * len(plan) + rung

    configs = table.drop_duplicates("configuration").set_index("configuration")
    placed = {c: label(row) for c, row in configs.iterrows()}
    table["label"] = table["configuration"].map(lambda c: placed[c][0])
    table["rung"] = table["configuration"].map(lambda c: placed[c][1])
    knobs = {c: (parse_tf_variant(row["variant"]) if row["framework"] == "tensorflow"
                 else dict.fromkeys(TF_KNOBS)) for c, row in configs.iterrows()}
    for key in TF_KNOBS:
        table[key] = table["configuration"].map(lambda c: knobs[c][key])
    table["precision"] = [precision_of(f, v) for f, v in zip(table["framework"], table["variant"])]
    measured = {}
    for (host, device, precision), gflops in peaks.items():
        measured.setdefault((host, device), {})[precision] = gflops
    table["peak_precision"] = [
        peak_precision(p, d, measured.get((h, d), {}))
        for p, d, h in zip(table["precision"], table["device"], table["host"])]
    table["peak_gflops"] = [measured.get((h, d), {}).get(p) for h, d, p in
                            zip(table["host"], table["device"], table["peak_precision"])]
    table = table.rename(columns={"value": "loss",
                                  "protobuf_implementation_version": "protobuf_implementation"})
    if "flops" in table:
        table["gflops"] = table["flops"] / table["seconds"] / 1e9
        table["fraction_of_peak"] = table["gflops"] / table["peak_gflops"]
    return table.sort_values(["rung", "phase", "rep", "sample"])


def peak_columns(table, settings, tables):
    table["gflops"] = table["flops"] / table["seconds"] / 1e9
    return table


COLUMNS = {"copy": copy_columns, "hourglass": hourglass_columns, "peak": peak_columns}


def build(experiment, runs, settings, tables):
    """The tidy table of one experiment's runs (`tables`: the tables it needs, by name)."""
    table = tidy(runs, settings["case"])
    add = COLUMNS.get(experiment)
    return add(table, settings, tables) if add else table.sort_values(
        ["configuration", settings["case"], "rep", "sample"])
