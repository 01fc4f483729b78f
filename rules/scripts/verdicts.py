"""The summary and the tidy tables -> verdicts.csv: every knob's effect as a ratio with its
interval and a verdict (a Snakemake script; knobs/aggregate.py, knobs/verdicts.py)."""

import os
import sys

import pandas as pd

sys.path.insert(0, os.path.join(snakemake.scriptdir, "..", "..", "scripts"))  # the package
from knobs import aggregate  # noqa: E402

sys.stderr = open(snakemake.log[0], "w", buffering=1)

summary = pd.read_csv(snakemake.input.summary, low_memory=False)
measured = {name.removesuffix("_table"): pd.read_csv(path, low_memory=False)
            for name, path in snakemake.input.items() if name.endswith("_table")}
table = aggregate.verdicts_table(summary, measured, snakemake.params.experiments,
                                 snakemake.params.comparisons, snakemake.params.statistics)
aggregate.write_plain(table, snakemake.output[0])
print(table["verdict"].value_counts().to_string(), file=sys.stderr)
