"""The figure of a user's benchmark (a Snakemake script; reads its table and the summary only):
each configuration's median step time as a ratio to the baseline, with its interval over
processes, the A/A noise floor shaded, one panel per case and device (four to a row)."""

import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from knobs import figures  # noqa: E402  (beside this script)

sys.stderr = open(snakemake.log[0], "w", buffering=1)

PANELS_PER_ROW = 4  # a benchmark of many cases wraps into rows
VERDICT_COLOUR = {"faster": "tab:blue", "slower": "tab:red", "no effect": "0.35",
                  "inconclusive": "tab:orange", "reference": "black"}
name = snakemake.wildcards.user_experiment
table = pd.read_csv(snakemake.input.table, low_memory=False)
summary = pd.read_csv(snakemake.input.summary, low_memory=False)
summary = summary[summary["experiment"] == name].dropna(axis=1, how="all")
labels = snakemake.params.labels  # what names a configuration (its grid, environment, device)
panels = list(summary.groupby(["case", "device"]))
height = 0.4 * summary.groupby(["case", "device"]).size().max() + 1.8
columns = min(len(panels), PANELS_PER_ROW)
grid = -(-len(panels) // columns)
fig, axes = plt.subplots(grid, columns, figsize=(5.5 * columns, height * grid), squeeze=False)
for ax in axes.flat[len(panels):]:
    ax.set_visible(False)
for ax, ((case, device), rows) in zip(axes.flat, panels):
    rows = rows.reset_index(drop=True)
    for y, row in rows.iterrows():
        ax.errorbar(row["ratio"], y, xerr=[[row["ratio"] - row["ratio_low"]],
                                           [row["ratio_high"] - row["ratio"]]],
                    fmt="o", capsize=3, color=VERDICT_COLOUR[row["verdict"]])
        ax.text(row["ratio_high"], y, f"  {row['ratio']:.2f}x ({1e3 * row['median']:.3g} ms)",
                va="center", fontsize=8)
    floor = rows["noise_floor"].max()
    ax.axvspan(1 / (1 + floor), 1 + floor, color="0.88", zorder=0)
    ax.axvline(1, color="0.3", lw=1)
    ax.set_yticks(range(len(rows)), [" ".join(str(row[c]) for c in labels if c != "device")
                                     for _, row in rows.iterrows()], fontsize=8)
    ax.invert_yaxis()
    ax.set_title(f"case {case} on {device}", fontsize=10)
    ax.set_xlabel(f"time / baseline ({rows['baseline'].iloc[0]}); grey: +-{floor:.1%}")
    ax.set_xlim(right=ax.get_xlim()[1] * 1.25)
first = table.iloc[0]
fig.suptitle(f"{name}: {first['cpu']}, {int(first['cores'])} cores; "
             f"{figures.span(summary['processes'].astype(int))} processes per configuration "
             "(blue faster, red slower, grey no effect, orange inconclusive)\n95% interval over "
             "processes; the grey band is what an effect must clear (threshold or A/A)",
             fontsize=10)
figures.save(fig, snakemake.output.png, snakemake.output.svg,
             rect=(0, 0, 1, 1 - 0.6 / fig.get_figheight()))  # room for the title's two lines
