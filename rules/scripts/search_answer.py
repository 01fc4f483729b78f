"""A search's figure (a Snakemake script; reads search.csv only): each knob alone against the
baseline, the launchers' settings, each step of the greedy combination against the best so
far and the best against the baseline and each launcher, a ratio with its interval."""

import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

sys.path.insert(0, os.path.join(snakemake.scriptdir, "..", "..", "scripts"))  # the package
from knobs import figures  # noqa: E402

sys.stderr = open(snakemake.log[0], "w", buffering=1)

COLORS = {"alone": "tab:gray", "launcher": "tab:purple", "step": "tab:blue", "best": "tab:green",
          "best vs launcher": "tab:green"}

table = pd.read_csv(snakemake.input.ranked)
shown = table[table["ratio"].notna()].reset_index(drop=True)
threshold, baseline = snakemake.params.threshold, snakemake.params.baseline
fig, ax = plt.subplots(figsize=(7, 0.35 * max(len(shown), 3) + 1.4), layout="constrained")
for position, r in shown.iterrows():
    ax.errorbar(r["ratio"], position, xerr=[[r["ratio"] - r["ratio_low"]],
                                            [r["ratio_high"] - r["ratio"]]],
                fmt="o", color=COLORS.get(r["kind"], "black"))
ax.set_yticks(range(len(shown)), [f"{r['kind']}: {r['environment']} / {r['compared_with']}"
                                  for _, r in shown.iterrows()], fontsize=8)
ax.invert_yaxis()
ax.axvline(1, color="black", lw=0.8)
ax.axvspan(1 - threshold, 1 + threshold, color="tab:gray", alpha=0.15, lw=0)
ax.set_xlabel(f"time ratio, 95% interval (under 1: faster; shaded: within {threshold:.0%})")
ax.set_title(f"Each knob alone against {baseline}, then each step of the combination",
             fontsize=10)
figures.save(fig, snakemake.output[0])
