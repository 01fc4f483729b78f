"""The copy step's figures (drawn by rules/scripts/figure.py; from the tidy table and the summary only).

`copy_step`: per-call time, GB/s and page faults against batch size, one column per framework
and device, colour = environment, the baseline's A/A twin dashed grey (the noise floor), the
time with its 95% interval over processes. On the GPU a call is the round trip host -> device
-> host. `copy_model`: each configuration's measured time against the model's (the copy limit
plus its faults at what a fault costs here, from the fault probe of the same run)."""

import itertools
import textwrap
import types

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from knobs import figures
from knobs.benchmarks.copy.model import copies_as_the_probe
from knobs.experiments import TWIN  # the baseline measured again: A/A

GLIBC_MMAP_CEILING = 32 * 2**20  # DEFAULT_MMAP_THRESHOLD_MAX on 64-bit glibc
PAGE = 4096
KEYS = ["framework", "device", "environment", "input", "batch"]


def draw(figure, inputs, settings, config, png, svg):
    """Draw `figure` (copy_step or copy_model) from the tables in `inputs`."""
    data = _points(inputs, settings, config)
    (_step if figure == "copy_step" else _model)(data, settings, config, png, svg)


def _points(inputs, settings, config):
    """What both figures plot: each configuration's point, its look, the machine."""
    table = pd.read_csv(inputs["table"], low_memory=False)
    summary = pd.read_csv(inputs["summary"], low_memory=False)
    summary = summary[summary["experiment"] == "copy"].copy()
    summary["batch"] = summary["batch"].astype(int)
    per_point = (table.groupby(KEYS)
                 .agg(faults=("minor_faults", "median"), limit_gbps=("limit_gbps", "first"),
                      disturbed=("disturbed", lambda d: d.notna().any()),
                      predicted=("predicted_seconds", "median") if "predicted_seconds" in table
                      else ("seconds", lambda s: np.nan),
                      in_copy=("predicted_in_copy_seconds", "median")
                      if "predicted_in_copy_seconds" in table else ("seconds", lambda s: np.nan))
                 .reset_index())
    points = summary.merge(per_point, on=KEYS)
    frameworks = list(dict.fromkeys(settings["frameworks"]))
    panels = [(f, d) for f in frameworks for d in ("cpu", "gpu")
              if ((points["framework"] == f) & (points["device"] == d)).any()]
    names = list(settings["environments"])
    environments = sorted(points["environment"].unique(),
                          key=lambda e: (names.index(e.removesuffix(TWIN)), e.endswith(TWIN)))
    # The same colour for the same environment in every figure; its A/A twin dashed, in grey.
    palette = dict(zip(names, sns.color_palette("colorblind" if len(names) <= 10 else "husl",
                                                 len(names))))
    palette.update({f"{name}{TWIN}": "0.45" for name in names})
    markers = dict(zip(names, itertools.cycle("osD^vP*Xph<>8d")))
    markers.update({f"{name}{TWIN}": "" for name in names})
    bytes_per_image = table["bytes"].iloc[0] / table["batch"].iloc[0]
    # The line is the limit in the first of the limit's environments (the baseline's store path);
    # rows of an environment whose own limit was measured are modelled on that one instead.
    baseline_limit = points[points["environment"] == settings["limit"]["environments"][0]]
    limits = baseline_limit.groupby(["device", "batch"])[["bytes", "limit_gbps"]].first().reset_index()
    l3 = table["l3_cache"].dropna().iloc[0] if table["l3_cache"].notna().any() else None
    l3_bytes = int(l3.rstrip("K")) * 1024 if isinstance(l3, str) and l3.endswith("K") else None
    if l3_bytes and l3_bytes > 1.5 * table["bytes"].max():  # far past the largest batch: no line
        l3_bytes = None
    threshold = config["statistics"]["cv_threshold"]
    machine = table.iloc[0]
    gpus = "; ".join(table.loc[table["device"] == "gpu", "gpu"].dropna().unique())
    label = config.get("label")
    processes = int(summary["processes"].median())
    calls = int(summary["n"].median())
    title_machine = (f"{machine['cpu']}, {machine['cores']} cores, {machine['glibc']}, kernel "
                     f"{machine['kernel']}, THP {machine['thp_enabled']}{'; ' + gpus if gpus else ''}")

    def style(environment, input_kind):
        twin = environment.endswith(TWIN)
        return dict(color=palette[environment], marker=markers[environment], ms=4,
                    lw=0.9 if twin else 1.3, alpha=0.85,
                    ls=(0, (4, 2)) if twin else "-" if input_kind == "random" else "--")

    return types.SimpleNamespace(**locals())


def legend_label(environment, input_kind):
    text = f"{environment.removesuffix(TWIN)} again (A/A)" if environment.endswith(TWIN) \
        else environment
    return text + ("" if input_kind == "random" else f" ({input_kind})")


def _step(d, settings, config, png, svg):
    """Time, GB/s and faults per call against the batch: one column per framework and device."""
    (points, panels, environments, palette, limits, l3, l3_bytes, bytes_per_image, threshold,
     label, processes, calls, title_machine, style) = (
        d.points, d.panels, d.environments, d.palette, d.limits, d.l3, d.l3_bytes,
        d.bytes_per_image, d.threshold, d.label, d.processes, d.calls, d.title_machine, d.style)
    image = "x".join(map(str, settings["image"]))
    # At least 9 inches wide, so that the title and a legend of two or three columns fit over and
    # under few panels.
    fig, axes = plt.subplots(3, len(panels), figsize=(max(3.1 * len(panels), 9), 9.4),
                             sharex=True, sharey="row", squeeze=False)
    for column, (framework, device) in enumerate(panels):
        limit = limits[limits["device"] == device]
        for row in range(3):
            axes[row, column].axvline(GLIBC_MMAP_CEILING / bytes_per_image, color="0.4", ls="--", lw=1)
            if l3_bytes:
                axes[row, column].axvline(l3_bytes / bytes_per_image, color="0.6", ls=":", lw=1)
        time_ax, rate_ax, fault_ax = axes[:, column]
        time_ax.plot(limit["batch"], limit["bytes"] / limit["limit_gbps"] / 1e9 * 1e3,
                     color="black", lw=1.2,
                     label=f"copy limit ({settings['limit']['environments'][0]})")
        rate_ax.plot(limit["batch"], limit["limit_gbps"], color="black", lw=1.2)
        fault_ax.plot(limit["batch"], limit["bytes"] / PAGE, color="black", lw=1, ls=":",
                      label="one fault per 4 KiB page")
        for environment in environments:
            for input_kind in points["input"].unique():
                part = points[(points["framework"] == framework) & (points["device"] == device)
                              & (points["environment"] == environment)
                              & (points["input"] == input_kind)].sort_values("batch")
                if part.empty:
                    continue
                look = style(environment, input_kind)
                time_ax.plot(part["batch"], part["median"] * 1e3,
                             label=legend_label(environment, input_kind), **look)
                time_ax.fill_between(part["batch"], part["ci_low"] * 1e3, part["ci_high"] * 1e3,
                                     color=palette[environment], alpha=0.2, lw=0)
                rate_ax.plot(part["batch"], part["bytes"] / part["median"] / 1e9, **look)
                fault_ax.plot(part["batch"], part["faults"], **look)
                noisy = part[part["noisy"]]
                time_ax.scatter(noisy["batch"], noisy["median"] * 1e3, s=45, facecolors="none",
                                edgecolors="red", lw=0.8, zorder=5)
                disturbed = part[part["disturbed"]]
                time_ax.scatter(disturbed["batch"], disturbed["median"] * 1e3, s=30, marker="x",
                                color="red", lw=1, zorder=6)
        time_ax.set_title(framework if device == "cpu" else f"{framework}\n(GPU round trip)")
        fault_ax.set_xlabel(f"batch (images of {image} float32)")
    for ax in axes.flat:
        ax.set_xscale("log", base=2)
        ax.grid(True, which="major", alpha=0.3)
    axes[0, 0].set_yscale("log")
    axes[2, 0].set_yscale("symlog", linthresh=1)  # zero faults stays visible
    axes[2, 0].set_ylim(bottom=-0.3)
    axes[0, 0].set_ylabel("time per call (ms, median,\n95% interval over processes)")
    axes[1, 0].set_ylabel("copy rate (GB/s of output)")
    axes[2, 0].set_ylabel("minor page faults per call (median)")
    axes[1, 0].set_ylim(bottom=0)
    legend = {}  # every environment of every panel, once
    for ax in axes[0]:
        for handle, name in zip(*ax.get_legend_handles_labels()):
            legend.setdefault(name, handle)
    handles, labels = list(legend.values()), list(legend)
    extra = [plt.Line2D([], [], color="0.4", ls="--", lw=1),
             plt.Line2D([], [], color="black", ls=":", lw=1),
             plt.Line2D([], [], color="red", marker="o", mfc="none", ls="none", ms=9),
             plt.Line2D([], [], color="red", marker="x", ls="none", ms=6)]
    extra_labels = ["glibc's 32 MiB mmap ceiling", "one fault per 4 KiB page",
                    f"noisy: CV over {threshold:.0%}", "a process was disturbed (see table)"]
    if l3 and not l3_bytes:
        extra.append(plt.Line2D([], [], color="none"))
        extra_labels.append(f"L3 cache {l3}: past every batch")
    if l3_bytes:
        extra.append(plt.Line2D([], [], color="0.6", ls=":", lw=1))
        extra_labels.append(f"L3 cache ({l3})")
    # As many legend columns as the figure's width holds (about 2.8 inches per entry).
    fig.legend(handles + extra, labels + extra_labels, loc="lower center",
               ncol=max(1, min(6, len(labels) + len(extra), int(fig.get_figwidth() / 2.8))),
               frameon=False)
    title = (f"The copy step: identity function per call against batch size"
             f"{' - ' + label if label else ''}\n{title_machine}; {processes} processes x "
             f"{calls // max(processes, 1)} calls per point")
    fig.suptitle("\n".join(textwrap.fill(line, int(fig.get_figwidth() * 11))
                           for line in title.split("\n")), fontsize=11)
    figures.save(fig, png, svg, rect=(0, 0.09, 1, 0.95))



def _model(d, settings, config, png, svg):
    """Measured against predicted: every CPU configuration and batch."""
    points, table, frameworks, palette, environments, label, title_machine = (
        d.points, d.table, d.frameworks, d.palette, d.environments, d.label, d.title_machine)
    model = points[(points["device"] == "cpu") & points["predicted"].notna()]
    fig, ax = plt.subplots(figsize=(8.5, 7))
    if model.empty:  # no CPU copies with a fault probe (format 1, or a GPU node's run)
        ax.text(0.5, 0.5, "no fault probe on the CPU in this result set: nothing to predict with",
                ha="center", transform=ax.transAxes)
        ax.axis("off")
        figures.save(fig, png, svg)
        return
    marks = dict(zip(frameworks + ["copyto"], "osD^vP*X"))
    for (framework, environment), part in model.groupby(["framework", "environment"]):
        ax.scatter(part["predicted"] * 1e3, part["median"] * 1e3, s=26, alpha=0.85,
                   marker=marks.get(framework, "o"), color=palette[environment], lw=0.5,
                   edgecolors="black" if part["faults"].gt(0).any() else "none")
    # Where the fault probe also copied into fresh pages: the same faults at what a fault costs
    # inside a copy, for the environments that copy as the probe does (glibc's default store path).
    default_path = copies_as_the_probe(settings["environments"])
    moved = model[model["in_copy"].notna() & (model["faults"] > 0)
                  & model["environment"].str.removesuffix(TWIN).isin(default_path)]
    for row in moved.itertuples():
        ax.plot([row.predicted * 1e3, row.in_copy * 1e3], [row.median * 1e3] * 2, color="0.5",
                lw=0.8, zorder=1)
        ax.scatter(row.in_copy * 1e3, row.median * 1e3, s=26, marker=marks.get(row.framework, "o"),
                   facecolors="none", edgecolors=palette[row.environment], lw=1)
    span = np.array([model[["predicted", "in_copy", "median"]].min().min(),
                     model[["predicted", "in_copy", "median"]].max().max()]) * 1e3
    ax.plot(span, span, color="black", lw=1, label="measured = predicted")
    ax.fill_between(span, span / 1.15, span * 1.15, color="0.85", zorder=0, label="+-15%")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("predicted: copy limit + faults x cost per fault (ms)")
    ax.set_ylabel("measured median per call (ms)")
    frame_handles = [plt.Line2D([], [], marker=marks[f], color="0.3", ls="none") for f in marks
                     if f in set(model["framework"])]
    env_handles = [plt.Line2D([], [], marker="s", color=palette[e], ls="none")
                   for e in environments if e in set(model["environment"])]
    in_copy_handles = ([plt.Line2D([], [], marker="o", color="0.5", mfc="none", lw=0.8)]
                       if len(moved) else [])
    ax.legend(frame_handles + env_handles + in_copy_handles,
              [f for f in marks if f in set(model["framework"])]
              + [legend_label(e, "random") for e in environments if e in set(model["environment"])]
              + (["hollow: with a fault's cost inside a copy"] if len(moved) else []),
              fontsize=7, ncol=2, loc="upper left")


    def cost_text(column):
        low, high = 1e6 * table[column].min(), 1e6 * table[column].max()
        return f"{low:.3g} us" if f"{low:.3g}" == f"{high:.3g}" else f"{low:.3g} to {high:.3g} us"


    costs = ", ".join(f"{name} page {cost_text(column)}"
                      for name, column in (("a 4 KiB", "fault_cost_4k"), ("a 2 MiB", "fault_cost_2m"))
                      if column in table and table[column].notna().any())
    fig.suptitle(f"The copy step's fault model{' - ' + label if label else ''}\n{title_machine}\n"
                 f"one fault costs {costs}"
                 f"{' at the output size' if table['fault_cost_4k'].nunique() > 1 else ''}\n(the "
                 "fault probe of the same run); black edge: the call faults", fontsize=9)
    figures.save(fig, png, svg)
