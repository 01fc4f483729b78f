"""One figure of an experiment (a Snakemake script; reads its tables only): its benchmark's
own (the `draw` hook, knobs/benchmarks/) or, for a section under `benchmarks:`, the generic
one (knobs/figures.py)."""

import sys

import matplotlib

matplotlib.use("Agg")

from knobs import benchmarks, figures  # noqa: E402  (beside this script)

sys.stderr = open(snakemake.log[0], "w", buffering=1)

figure, params = snakemake.wildcards.figure, snakemake.params.figure
inputs = dict(snakemake.input.items())
hooks = benchmarks.plugin(params["plugin"])
if hooks is not None and hasattr(hooks, "draw"):
    hooks.draw(figure, inputs, params["settings"], snakemake.config, snakemake.output.png,
               snakemake.output.svg)
else:
    figures.grid(params["experiment"], inputs, params["labels"], snakemake.output.png,
                 snakemake.output.svg)
