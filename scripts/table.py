"""One experiment's result files -> its tidy table, one row per timed sample (a Snakemake
script; see knobs/tables.py). Each result is checked against config/result.schema.yaml first:
a result of another format is refused, naming the fix, never misread."""

import sys

import pandas as pd

from knobs import benchmarks, results, tables  # beside this script

sys.stderr = open(snakemake.log[0], "w", buffering=1)

needed = {name.removesuffix("_table"): pd.read_csv(path, low_memory=False)
          for name, path in snakemake.input.items() if name.endswith("_table")}
runs = [results.read(path) for path in snakemake.input.runs]
settings = snakemake.params.settings
table = tables.build(runs, settings, needed, benchmarks.plugin(settings["plugin"]))
table.to_csv(snakemake.output[0], index=False, float_format="%.6g")
print(f"{len(table)} rows from {len(runs)} runs", file=sys.stderr)
