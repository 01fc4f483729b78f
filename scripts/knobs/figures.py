"""How every figure of the workflow is saved: laid out, as PNG (130 dpi: the report and the
README) and as SVG (the paper)."""


def save(fig, png, svg=None, rect=None):
    if fig.get_layout_engine() is None:  # a constrained layout lays itself out
        fig.tight_layout(rect=rect)
    fig.savefig(png, dpi=130)
    if svg:  # no date and fixed ids: a figure drawn again from the same data is the same file
        import matplotlib

        with matplotlib.rc_context({"svg.hashsalt": "knobs"}):
            fig.savefig(svg, metadata={"Date": None})


def span(values, form="{}"):
    """'4' when all values are equal, else '3 to 4': e.g. processes per configuration; each
    end written by `form` ('{:+.0%}')."""
    low, high = form.format(min(values)), form.format(max(values))
    return low if low == high else f"{low} to {high}"


def wrapped(title, fig, fontsize=10):
    """`title` broken into lines the figure's width holds, so that no word is cut off at its
    edges (about 11 characters per inch at 10 points)."""
    import textwrap

    width = max(20, int(fig.get_figwidth() * 110 / fontsize))
    return "\n".join(textwrap.fill(line, width) for line in title.split("\n"))


VERDICT_COLOUR = {"faster": "tab:blue", "slower": "tab:red", "no effect": "0.35",
                  "inconclusive": "tab:orange", "reference": "black"}
PANELS_PER_ROW = 4  # a benchmark of many cases wraps into rows


def grid(name, inputs, labels, png, svg):
    """The generic figure of an experiment (a section under `benchmarks:`): each
    configuration's median step time as a ratio to the baseline, with its interval over
    processes, the A/A noise floor shaded, one panel per case and device (four to a row)."""
    import matplotlib.pyplot as plt
    import pandas as pd

    table = pd.read_csv(inputs["table"], low_memory=False)
    summary = pd.read_csv(inputs["summary"], low_memory=False)
    summary = summary[summary["experiment"] == name].dropna(axis=1, how="all")
    panels = list(summary.groupby(["case", "device"]))
    height = 0.45 * summary.groupby(["case", "device"]).size().max() + 1.3
    columns = min(len(panels), PANELS_PER_ROW)
    rows = -(-len(panels) // columns)
    # constrained: the title, the labels and the legend keep their room, however few panels
    fig, axes = plt.subplots(rows, columns, figsize=(6.5 * columns, height * rows + 1.2),
                             squeeze=False, layout="constrained")
    for ax in axes.flat[len(panels):]:
        ax.set_visible(False)
    for ax, ((case, device), part) in zip(axes.flat, panels):
        part = part.reset_index(drop=True)
        for y, row in part.iterrows():
            ax.errorbar(row["ratio"], y, xerr=[[row["ratio"] - row["ratio_low"]],
                                               [row["ratio_high"] - row["ratio"]]],
                        fmt="o", capsize=3, color=VERDICT_COLOUR[row["verdict"]])
            ax.text(row["ratio_high"], y, f"  {row['ratio']:.2f}x ({1e3 * row['median']:.3g} ms)",
                    va="center", fontsize=8)
        floor = part["noise_floor"].max()
        ax.axvspan(1 / (1 + floor), 1 + floor, color="0.88", zorder=0)
        ax.axvline(1, color="0.3", lw=1)
        ax.set_yticks(range(len(part)), [" ".join(str(row[c]) for c in labels if c != "device")
                                         for _, row in part.iterrows()], fontsize=8)
        ax.set_ylim(len(part) - 0.5, -0.5)
        ax.set_title(f"case {case} on {device}", fontsize=10)
        ax.set_xlabel(f"time / baseline ({part['baseline'].iloc[0]}), 95% interval over "
                      f"processes;\ngrey: what an effect must clear, +-{floor:.1%}", fontsize=9)
        ax.set_xlim(right=ax.get_xlim()[1] * 1.3)  # room for the text right of each point
    first = table.iloc[0]
    fig.suptitle(wrapped(f"{name}: {first['cpu']}, {int(first['cores'])} cores; "
                         f"{span(summary['processes'].astype(int))} processes per "
                         "configuration", fig, 11), fontsize=11)
    marks = [plt.Line2D([], [], marker="o", ls="none", color=colour)
             for colour in VERDICT_COLOUR.values()]
    fig.legend(marks, list(VERDICT_COLOUR), loc="outside lower center",
               ncol=len(VERDICT_COLOUR), fontsize=8, frameon=False)
    save(fig, png, svg)
