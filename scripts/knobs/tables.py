"""Result files -> tidy tables, one row per timed sample: the configuration's columns, the
case, the sample's time and counters, how its knobs were proven, what the machine did
meanwhile, the versions and the machine. Every experiment's table is built the same way; its
benchmark may add columns of its own (its `table_columns` hook). pandas only: no framework is
imported.
"""

import pandas as pd

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


def ops_by_category(ops, by=("configuration",)):
    """Seconds per op category of each traced step, the mean over processes (a process whose
    trace has no op of a category counts zero for it): one row per `by`, one column per
    category."""
    per_process = ops.groupby([*by, "rep", "category"])["seconds"].sum().unstack(fill_value=0)
    return per_process.groupby(list(by)).mean()


def build(runs, settings, tables, hooks=None):
    """The tidy table of one experiment's runs (`tables`: the tables it needs, by name), with
    the columns its benchmark's `table_columns` adds (`hooks`, where it has one)."""
    table = tidy(runs, settings["case"])
    if hooks is not None and hasattr(hooks, "table_columns"):
        return hooks.table_columns(table, settings, tables)
    return table.sort_values(["configuration", settings["case"], "rep", "sample"])
