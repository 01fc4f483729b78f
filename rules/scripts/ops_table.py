"""The time per op of each run's traced step, by op category (a Snakemake script;
knobs/aggregate.py): one row per (run, op), for experiments whose benchmark traces a step."""

import os
import sys

sys.path.insert(0, os.path.join(snakemake.scriptdir, "..", "..", "scripts"))  # the package
from knobs import aggregate  # noqa: E402

sys.stderr = open(snakemake.log[0], "w", buffering=1)

ops = aggregate.op_table(snakemake.input)
aggregate.write_tidy(ops, snakemake.output[0])
print(f"{len(ops)} op rows", file=sys.stderr)
