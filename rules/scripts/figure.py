"""One figure of an experiment (a Snakemake script; reads its tables only): its benchmark's
own (the `draw` hook, knobs/benchmarks/) or, for a section under `benchmarks:`, the generic
one (knobs/figures.py)."""

import os
import sys

import matplotlib

matplotlib.use("Agg")

sys.path.insert(0, os.path.join(snakemake.scriptdir, "..", "..", "scripts"))  # the package
from knobs import figures, finder  # noqa: E402

sys.stderr = open(snakemake.log[0], "w", buffering=1)

figure, params = snakemake.wildcards.figure, snakemake.params.figure
inputs = dict(snakemake.input.items())
hooks = finder.plugin(params["plugin"])
if hooks is not None and hasattr(hooks, "draw"):
    hooks.draw(figure, inputs, params["settings"], snakemake.config, snakemake.output.png,
               snakemake.output.svg)
else:
    figures.grid(params["experiment"], inputs, params["labels"], snakemake.output.png,
                 snakemake.output.svg)
