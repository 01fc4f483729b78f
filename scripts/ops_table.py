"""The time per op of each run's traced step, by op category (a Snakemake script;
knobs/aggregate.py): one row per (run, op), for experiments whose benchmark traces a step."""

import sys

from knobs import aggregate  # beside this script

sys.stderr = open(snakemake.log[0], "w", buffering=1)

ops = aggregate.op_table(snakemake.input)
aggregate.write_tidy(ops, snakemake.output[0])
print(f"{len(ops)} op rows", file=sys.stderr)
