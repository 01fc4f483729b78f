"""Tidy tables -> the summary table (per configuration and case: the median with its interval
over processes, the spread, and against the baseline the time ratio and speedup with their
intervals, the A/A noise floor and the verdict) and the system table (a Snakemake script;
knobs/aggregate.py; it reads the tidy tables only)."""

import os
import sys

import pandas as pd

sys.path.insert(0, os.path.join(snakemake.scriptdir, "..", "..", "scripts"))  # the package
from knobs import aggregate  # noqa: E402

sys.stderr = open(snakemake.log[0], "w", buffering=1)

measured = {name.removesuffix("_table"): pd.read_csv(path, low_memory=False)
            for name, path in snakemake.input.items()}
summary, system = aggregate.summary_and_system(measured, snakemake.params.experiments,
                                               snakemake.params.statistics)
aggregate.write_plain(summary, snakemake.output.summary)
aggregate.write_plain(system, snakemake.output.system)
