"""The time per op of each run's traced step, by op category (a Snakemake script): one row per
(run, op), for experiments whose benchmark traces a step."""

import sys

import pandas as pd

from knobs import results  # beside this script
from knobs import op_categories as categories

sys.stderr = open(snakemake.log[0], "w", buffering=1)

rows = []
for path in snakemake.input:
    run = results.read(path)
    for op, seconds in (run.get("op_seconds") or {}).items():
        rows.append({"experiment": run["experiment"], "configuration": run["configuration"],
                     **dict(run["labels"]), "rep": run["rep"], "op": op,
                     "category": categories.categorize(op), "seconds": seconds})
ops = pd.DataFrame(rows, columns=["experiment", "configuration", "rep", "op", "category",
                                  "seconds"] if not rows else None)
ops = ops.sort_values(["configuration", "rep", "op"])
ops.to_csv(snakemake.output[0], index=False, float_format="%.6g")
print(f"{len(ops)} op rows", file=sys.stderr)
