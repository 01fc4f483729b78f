"""The summary and the tidy tables -> verdicts.csv: every knob's effect as a ratio with its
interval and a verdict (a Snakemake script; see knobs/verdicts.py)."""

import sys

import pandas as pd

from knobs import verdicts  # beside this script

sys.stderr = open(snakemake.log[0], "w", buffering=1)

summary = pd.read_csv(snakemake.input.summary, low_memory=False)
tables = {name.removesuffix("_table"): pd.read_csv(path, low_memory=False)
          for name, path in snakemake.input.items() if name.endswith("_table")}
table = verdicts.build(summary, tables, snakemake.params.experiments,
                       snakemake.params.comparisons, snakemake.params.statistics["threshold"])
table.to_csv(snakemake.output[0], index=False)
print(table["verdict"].value_counts().to_string(), file=sys.stderr)
