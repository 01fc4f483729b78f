"""Run JSON files -> one tidy table, one row per timed call (a Snakemake script)."""

import json
import sys

import pandas as pd

from knobs.machine import gpu_text  # beside this script

sys.stderr = open(snakemake.log[0], "w", buffering=1)


def rows(path):
    with open(path) as handle:
        run = json.load(handle)
    machine, knobs, samples = run["machine"], run["knobs"], run["samples"]
    fixed = {
        "experiment": run["experiment"],
        "framework": run["framework"],
        "environment": run["environment"],
        "device": run["device"],
        "batch": run["batch"],
        "input": run["input"],
        "rep": run["rep"],
        "bytes": run["bytes"],
        "position": run["position"],
        "setup_seconds": run["setup_seconds"],
        "threads": run["threads"]["requested"],
        "preloads": " ".join(p["path"] for p in knobs["preloads"]),
        "numpy_madvise_hugepage": knobs["effects"].get("numpy_madvise_hugepage"),
        "glibc_mmaps_48MiB": knobs["effects"].get("glibc_mmaps_48MiB"),
        "framework_version": run["framework_info"]["version"],
        "numpy_version": run["versions"]["numpy"],
        "python_version": run["versions"]["python"],
        "host": machine["host"],
        "cpu": machine["cpu"],
        "cores": machine["cores"],
        "memory_gib": machine["memory_gib"],
        "os": machine["os"],
        "gpu": gpu_text(machine),
        "l3_cache": machine["caches"].get("L3"),
        "kernel": machine["kernel"],
        "glibc": machine["glibc"],
        "thp_enabled": machine["thp_enabled"],
        "thp_defrag": machine["thp_defrag"],
    }
    for sample, (seconds, minor, major) in enumerate(
        zip(samples["seconds"], samples["minor_faults"], samples["major_faults"])
    ):
        yield {**fixed, "sample": sample, "seconds": seconds,
               "minor_faults": minor, "major_faults": major}


table = pd.DataFrame([row for path in snakemake.input for row in rows(path)])
table["gbps"] = table["bytes"] / table["seconds"] / 1e9

# The machine's copy limit per size: the fastest median among the reference copies
# (a copy into a buffer already faulted in, a fresh copy under the best allocator).
limit = snakemake.params.limit
reference = table[table["framework"].isin(limit["frameworks"])
                  & table["environment"].isin(limit["environments"])]
medians = (reference.groupby(["host", "device", "input", "batch", "framework", "environment"])
           ["seconds"].median().reset_index())
best = medians.loc[medians.groupby(["host", "device", "input", "batch"])["seconds"].idxmin()]
best = best.assign(
    limit_gbps=lambda d: d["batch"].map(dict(zip(table["batch"], table["bytes"]))) / d["seconds"] / 1e9,
    limit_source=lambda d: d["framework"] + "/" + d["environment"],
)[["host", "device", "input", "batch", "limit_gbps", "limit_source"]]
table = table.merge(best, on=["host", "device", "input", "batch"], how="left")

first = ["experiment", "framework", "environment", "device", "batch", "input", "rep",
         "sample", "seconds", "minor_faults", "bytes", "gbps", "limit_gbps"]
table = table[first + [c for c in table.columns if c not in first]]
table.sort_values(["framework", "environment", "batch", "input", "rep", "sample"]).to_csv(
    snakemake.output[0], index=False)
print(f"{len(table)} rows from {len(snakemake.input)} runs", file=sys.stderr)
