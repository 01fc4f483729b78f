"""Hourglass runs -> tidy tables (a Snakemake script): one row per timed step, and the time per
op category of each configuration's traced train step."""

import json
import sys

import pandas as pd

from knobs.hourglass import (TF_KNOBS, categories, parse_tf_variant, peak_precision,  # beside
                             precision_of)  # this script
from knobs.machine import gpu_text

sys.stderr = open(snakemake.log[0], "w", buffering=1)

plan = {(p["framework"], p["variant"], p["environment"]): p for p in snakemake.params.plan}
peaks = {}
for path in snakemake.input.peaks:
    with open(path) as handle:
        peak = json.load(handle)
    measured = peaks.setdefault((peak["machine"]["host"], peak["device"]), {})
    for precision, gflops in peak.get("peaks", {"float32": peak["peak_gflops"]}).items():
        measured[precision] = max(measured.get(precision, 0), gflops)

DEVICES = snakemake.params.devices


def labelled(entry, device):
    """Label and figure position; with several devices, one block of rungs per device."""
    if len(DEVICES) == 1:
        return {"label": entry["label"], "rung": entry["rung"]}
    return {"label": f"[{device}] {entry['label']}",
            "rung": DEVICES.index(device) * len(plan) + entry["rung"]}


steps, ops = [], []
for path in snakemake.input.runs:
    with open(path) as handle:
        run = json.load(handle)
    entry = plan[(run["framework"], run["variant"], run["environment"])]
    knobs = (parse_tf_variant(run["variant"]) if run["framework"] == "tensorflow"
             else {key: None for key in TF_KNOBS})
    machine = run["machine"]
    measured = peaks.get((machine["host"], run["device"]), {})
    precision = precision_of(run["framework"], run["variant"])
    compared = peak_precision(precision, run["device"], measured)
    fixed = {
        "experiment": "hourglass", "framework": run["framework"], "variant": run["variant"],
        **knobs, "environment": run["environment"], "device": run["device"],
        **labelled(entry, run["device"]), "batch": run["batch"],
        "stacks": run["stacks"], "resolution": run["resolution"], "features": run["features"],
        "joints": run["joints"], "rep": run["rep"], "status": run["status"],
        "reason": run.get("reason"), "host": machine["host"], "cpu": machine["cpu"],
        "cores": machine["cores"], "memory_gib": machine["memory_gib"], "os": machine["os"],
        "kernel": machine["kernel"], "glibc": machine["glibc"],
        "gpu": gpu_text(machine),
        "precision": precision, "peak_precision": compared,
        "peak_gflops": measured.get(compared),
    }
    if run["status"] != "ok":
        steps.append({**fixed, "phase": "train", "sample": None, "seconds": None})
        continue
    versions = run["versions"]
    fixed.update({
        "params": run["params"], "build_seconds": run["build_seconds"],
        "process_to_first_step_seconds": run["process_to_first_step_seconds"],
        "threads": run["evidence"]["threads"]["intra_op"],
        "fused_batch_norm_ops": run["evidence"].get("fused_batch_norm_ops"),
        "onednn": run["evidence"].get("onednn"),
        "preloads": " ".join(p["path"] for p in run["knobs"]["preloads"]),
        "framework_version": versions.get(run["framework"]),
        "protobuf_implementation": versions.get("protobuf_implementation"),
        "python_version": versions["python"],
    })
    for phase, measured in run["phases"].items():
        flops = run["flops"][phase]
        for sample, seconds in enumerate(measured["seconds"]):
            steps.append({**fixed, "phase": phase, "sample": sample, "seconds": seconds,
                          "first_seconds": measured["first_seconds"],
                          "loss": measured["loss"][sample], "flops": flops,
                          "gflops": flops / seconds / 1e9})
    for op, seconds in run["op_seconds"].items():
        ops.append({**{k: fixed[k] for k in ("framework", "variant", "environment", "device",
                                             "label", "rung", "rep")},
                    "op": op, "category": categories.categorize(op), "seconds": seconds})

steps = pd.DataFrame(steps)
steps["fraction_of_peak"] = steps["gflops"] / steps["peak_gflops"]
steps.sort_values(["rung", "phase", "rep", "sample"]).to_csv(snakemake.output.steps, index=False)
pd.DataFrame(ops).sort_values(["rung", "rep", "op"]).to_csv(snakemake.output.ops, index=False)
print(f"{len(steps)} step rows, {len(ops)} op rows", file=sys.stderr)
