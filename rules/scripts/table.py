"""One experiment's result files -> its tidy table, one row per timed sample (a Snakemake
script; knobs/aggregate.py). Each result is checked against config/result.schema.yaml first:
a result of another format is refused, naming the fix, never misread."""

import os
import sys

import pandas as pd

sys.path.insert(0, os.path.join(snakemake.scriptdir, "..", "..", "scripts"))  # the package
from knobs import aggregate  # noqa: E402

sys.stderr = open(snakemake.log[0], "w", buffering=1)

needed = {name.removesuffix("_table"): pd.read_csv(path, low_memory=False)
          for name, path in snakemake.input.items() if name.endswith("_table")}
table = aggregate.tidy_table(snakemake.input.runs, snakemake.params.settings, needed)
aggregate.write_tidy(table, snakemake.output[0])
print(f"{len(table)} rows from {len(snakemake.input.runs)} runs", file=sys.stderr)
