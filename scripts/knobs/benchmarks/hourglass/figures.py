"""The hourglass's figures (drawn by rules/scripts/figure.py; from the tidy tables and the summary
only): the ablation ladder (each configuration's step time relative to the baseline, with
intervals over processes, and the A/A noise floor); the time per op category of each
configuration's traced train step; why (the seed's ruler, page faults per step, phase order);
and where each knob's difference lives (by op category and, outside the traced ops, on a CPU
the framework's own CPU time, on a GPU the wall time in which no kernel ran: the GPU waiting
for the host to launch the next one)."""

import types

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns

from knobs import experiments, figures, stats, tables
from knobs.benchmarks.hourglass import plan
from knobs.benchmarks.hourglass.network import SEED_SECONDS, SEED_SIZE

COLOURS = dict(zip(["tensorflow", "torch"], sns.color_palette("colorblind", 2)))
VERDICT_MARK = {"faster": "v", "slower": "^", "no effect": "o", "inconclusive": "d",
                "reference": "s"}
ORDER = ["convolution", "batch norm", "elementwise", "pooling / resize", "copies / feed",
         "optimizer", "other"]  # op categories, in the bars' order


def draw(figure, inputs, settings, config, png, svg):
    """Draw `figure` (hourglass_ladder, _ops, _why or _gap) from the tables in `inputs`."""
    data = _data(inputs, settings)
    ops = pd.read_csv(inputs["ops"])
    ops = ops[ops["configuration"].isin(data.configs["configuration"])]
    {"hourglass_ladder": _ladder, "hourglass_ops": _ops, "hourglass_why": _why,
     "hourglass_gap": _gap}[figure](data, ops, config, png, svg)


def _data(inputs, settings):
    """What every figure reads: the steps, the summary, each configuration in figure order."""
    steps = pd.read_csv(inputs["table"], low_memory=False)
    summary = pd.read_csv(inputs["summary"])
    summary = summary[summary["experiment"] == "hourglass"]
    baseline = settings["baseline"]
    ok = steps[steps["status"] == "ok"]
    configs = (steps.groupby(["rung", "label", "configuration", "framework", "variant",
                              "environment", "device"])
               .size().reset_index().sort_values("rung").reset_index(drop=True))
    first = ok.iloc[0]
    size = (int(first["stacks"]), int(first["resolution"]), int(first["batch"]))
    by_key = summary.set_index(["framework", "variant", "environment", "device", "phase"])


    def flags(config):
        """Why a row deserves a second look: a process measured while the machine was busy."""
        notes = []
        mine = steps[steps["configuration"] == config.configuration]
        disturbed = mine.loc[mine["disturbed"].notna(), "rep"].unique()
        if len(disturbed):
            notes.append(f"disturbed: rep {', '.join(map(str, sorted(disturbed)))}")
        return config.label + (f"  [{'; '.join(notes)}]" if notes else "")


    labels = [flags(config) for config in configs.itertuples()]

    return types.SimpleNamespace(**locals())


def _ladder(d, ops, run_config, png, svg):
    steps, summary, baseline, ok, configs, first, size, by_key, labels = (
        d.steps, d.summary, d.baseline, d.ok, d.configs, d.first, d.size, d.by_key, d.labels)
    fig, axes = plt.subplots(1, 3, figsize=(17, 0.45 * len(configs) + 2.8), sharey=True)
    for column, phase in enumerate(["forward", "train"]):
        ax = axes[column]
        for y, config in enumerate(configs.itertuples()):
            key = (config.framework, config.variant, config.environment, config.device, phase)
            if key not in by_key.index or pd.isna(by_key.loc[key].get("ratio")):
                ax.text(1, y, "unavailable", va="center", ha="center", fontsize=8, color="0.4")
                continue
            row = by_key.loc[key]
            ax.errorbar(row["ratio"], y, xerr=[[row["ratio"] - row["ratio_low"]],
                                               [row["ratio_high"] - row["ratio"]]],
                        fmt=VERDICT_MARK[row["verdict"]], capsize=3,
                        color=COLOURS[config.framework])
            ax.text(row["ratio_high"], y, f"  {row['ratio']:.2f}x", va="center", fontsize=8)
        rows = summary[summary["phase"] == phase]
        floor = rows["noise_floor"].max()
        ax.axvspan(1 / (1 + floor), 1 + floor, color="0.85", zorder=0,
                   label="what an effect must clear (the threshold, or the A/A pair's ratio where wider)")
        ax.axvline(1, color="0.3", lw=1)
        if phase == "train":  # (forward's band is labelled through the train panel's legend)
            ax.axvline(0.85, color="0.5", ls=":", lw=1, label="goal: 0.85x")
            ax.axvline(SEED_SECONDS["tensorflow"] / SEED_SECONDS["torch"], color="tab:red", ls="--", lw=1,
                       label="seed's report: TF 717 / Torch 343 ms = 2.09x")
        ax.set_xlabel(f"{phase} time / {baseline['framework']} {baseline['variant']}\n"
                      f"ratio of medians, 95% interval over processes; band +-{floor:.1%}")
        medians = rows[(rows["framework"] == baseline["framework"])
                       & (rows["variant"] == baseline["variant"])
                       & (rows["environment"] == baseline["environment"])]["median"]
        ax.set_title(f"{phase}: " + ", ".join(f"{1e3 * m:.0f} ms" for m in medians) + " baseline")

    ax = axes[2]
    train = ok[ok["phase"] == "train"]
    for y, config in enumerate(configs.itertuples()):
        mine = train[train["configuration"] == config.configuration]
        if mine.empty:
            reason = steps[steps["configuration"] == config.configuration]["reason"].dropna()
            ax.text(0.01, y, "unavailable: " + (reason.iloc[0][:60] if len(reason) else "?"),
                    transform=ax.get_yaxis_transform(), va="center", fontsize=7, color="0.4")
            continue
        ms = 1e3 * mine["seconds"].median()
        ax.barh(y, ms, color=COLOURS[config.framework], alpha=0.8)
        ax.text(ms, y, f" {ms:.0f} ms, {100 * mine['fraction_of_peak'].median():.0f}% of "
                f"{mine['peak_precision'].iloc[0]} peak",
                va="center", fontsize=8)
    if size == SEED_SIZE:
        for framework in ("tensorflow", "torch"):
            ax.axvline(1e3 * SEED_SECONDS[framework], color=COLOURS[framework], ls="--", lw=1.2,
                       label=f"seed's {framework} ({1e3 * SEED_SECONDS[framework]:.0f} ms, Titan X Pascal)")
        ax.legend(loc="lower right", fontsize=8)
    peaks = ok.groupby(["device", "peak_precision"])["peak_gflops"].first()
    ax.set_xlabel("train step (ms, median)\nmatmul peak " + ", ".join(
        f"{precision} {gflops:,.0f} GFLOP/s" + (f" ({device})" if ok["device"].nunique() > 1 else "")
        for (device, precision), gflops in peaks.items()) + "\n(measured in the same run)")
    ax.set_xlim(right=ax.get_xlim()[1] * 1.5)  # room for the labels beside the bars
    ax.set_title("train step time and achieved FLOP/s")
    axes[0].set_yticks(range(len(labels)), labels, fontsize=8)
    for tick, text in zip(axes[0].get_yticklabels(), labels):
        if "[disturbed" in text:
            tick.set_color("tab:red")
    axes[0].invert_yaxis()
    handles, names = axes[1].get_legend_handles_labels()
    marks = [plt.Line2D([], [], marker=m, color="0.3", ls="none") for m in VERDICT_MARK.values()]
    fig.legend(handles + marks, names + list(VERDICT_MARK), loc="lower center", ncol=6, fontsize=8,
               frameon=False)
    label = run_config.get("label")
    processes = ok.groupby("configuration")["rep"].nunique()
    fig.suptitle(f"{label + ': ' if label else ''}Stacked hourglass, "
                 f"{size[0]} stack{'s' * (size[0] != 1)}, {size[1]}x{size[1]}, batch {size[2]} ({int(first['params']):,} parameters) on "
                 + "; ".join(f"{first['cpu']}, {int(first['threads'])} threads" if device == "cpu"
                             else ok.loc[ok["device"] == device, "gpu"].fillna("GPU").iloc[0]
                             for device in sorted(ok["device"].unique()))
                 + f"; {figures.span(processes)} processes per configuration", fontsize=11)
    figures.save(fig, png, svg, rect=(0, 0.04, 1, 1))



def _ops(d, ops, run_config, png, svg):
    """Op categories of the traced train step, one stacked bar per configuration."""
    configs = d.configs
    placed = configs.set_index("configuration")[["rung", "label"]]
    ops = ops.join(placed, on="configuration")
    per_category = 1e3 * tables.ops_by_category(ops, ("rung", "label"))
    per_category = per_category.reindex(configs.set_index(["rung", "label"]).index, fill_value=0)
    per_category = per_category.reindex(columns=[c for c in ORDER if c in per_category.columns])
    fig, ax = plt.subplots(figsize=(10, 0.42 * len(per_category) + 2))
    per_category.droplevel("rung").plot.barh(
        stacked=True, ax=ax, color=sns.color_palette("colorblind", len(per_category.columns)))
    ax.invert_yaxis()
    ax.set_xlabel("op time in one traced train step, ms (mean over processes):\non a CPU the ops' "
                  "time summed over threads, on a GPU their kernels' time on the device")
    ax.set_ylabel("")
    ax.set_title("Where the train step's time goes, by op category (from the traces)")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=8)
    figures.save(fig, png, svg)



def _why(d, ops, run_config, png, svg):
    """The seed's ruler (process CPU time against wall time), page faults per step, phase
    order."""
    baseline, ok, configs, size = d.baseline, d.ok, d.configs, d.size
    label = run_config.get("label")
    train = ok[ok["phase"] == "train"]
    fig, axes = plt.subplots(1, 3, figsize=(17, 0.45 * len(configs) + 2.8), sharey=True)
    wall_cpu, faults_ax, order_ax = axes
    base_by_device = train[(train["framework"] == baseline["framework"])
                           & (train["variant"] == baseline["variant"])
                           & (train["environment"] == baseline["environment"])].groupby(
                               "device")["seconds"].median()
    for y, config in enumerate(configs.itertuples()):
        mine = train[train["configuration"] == config.configuration]
        if mine.empty:
            continue
        wall, cpu = 1e3 * mine["seconds"].median(), 1e3 * mine["cpu_seconds"].median()
        wall_cpu.barh(y - 0.2, wall, height=0.4, color=COLOURS[config.framework], alpha=0.9)
        wall_cpu.barh(y + 0.2, cpu, height=0.4, color=COLOURS[config.framework], alpha=0.45,
                      hatch="//")
        base = base_by_device.get(config.device, float("nan"))
        wall_cpu.text(max(wall, cpu), y, f" {wall:.0f} / {cpu:.0f} ms; seed's ruler "
                      f"{cpu / 1e3 / base:.2f}x vs {wall / 1e3 / base:.2f}x", va="center", fontsize=7)
        faults_ax.barh(y, mine["minor_faults"].median(), color=COLOURS[config.framework], alpha=0.8)
        faults_ax.text(mine["minor_faults"].median(), y, f" {mine['minor_faults'].median():,.0f}",
                       va="center", fontsize=8)
        first, second = (stats.processes_of(mine[mine["position"] == p]) for p in (0, 1))
        if first and second:
            ratio, low, high = stats.ratio_interval(first, second, resamples=500, paired=False)
            order_ax.errorbar(ratio, y, xerr=[[ratio - low], [high - ratio]], fmt="o", capsize=3,
                              color=COLOURS[config.framework])
    wall_cpu.set_xlim(right=wall_cpu.get_xlim()[1] * 1.9)
    wall_cpu.set_xlabel("train step, ms: wall clock (solid) and process CPU time of all threads "
                        "(hatched)\nseed's ruler: CPU time / baseline's wall time, against wall / wall")
    wall_cpu.set_title("the ruler: wall clock against process CPU time")
    faults_ax.set_xscale("symlog", linthresh=10)
    # From 0 to past the largest count (at least 100), so a step with a fault or two reads as few.
    faults_ax.set_xlim(0, max(100, 3 * train.groupby("configuration")["minor_faults"].median().max()))
    faults_ax.set_xlabel("minor page faults per train step (median)")
    faults_ax.set_title("page faults per step")
    order_ax.axvline(1, color="0.3", lw=1)
    order_ax.set_xlabel("train step when train ran first / when it ran after forward\n"
                        "(ratio of medians, 95% interval over processes)")
    order_ax.set_title("phase order inside the process")
    axes[0].set_yticks(range(len(configs)), [c.label for c in configs.itertuples()], fontsize=8)
    axes[0].invert_yaxis()
    fig.suptitle(f"{label + ': ' if label else ''}Why each configuration takes its time "
                 f"(hourglass {size[0]} stack{'s' * (size[0] != 1)}, {size[1]}x{size[1]}, batch {size[2]})", fontsize=11)
    figures.save(fig, png, svg)



def _gap(d, ops, run_config, png, svg):
    """Where the gap lives: each comparison's difference by op category, and the rest of the
    step outside the traced ops."""
    baseline, ok, configs = d.baseline, d.ok, d.configs
    train = ok[ok["phase"] == "train"]
    ops_ms = 1e3 * tables.ops_by_category(ops)
    on_gpu = train.groupby("configuration")["device"].first() == "gpu"
    step_ms = 1e3 * train.groupby("configuration")["cpu_seconds"].median().where(
        ~on_gpu, train.groupby("configuration")["seconds"].median())
    ops_ms["outside the ops"] = step_ms.reindex(ops_ms.index) - ops_ms.sum(axis=1)
    pairs = []
    for device, here in configs.groupby("device", sort=False):  # each device's pairs on their own
        prefix = f"[{device}] " if configs["device"].nunique() > 1 else ""
        by_knobs = here.set_index(["framework", "variant", "environment"])["configuration"]
        base_row = by_knobs.get((baseline["framework"], baseline["variant"], baseline["environment"]))
        seed_rows = here[here["label"].str.removeprefix(prefix).str.startswith("seed")]
        if len(seed_rows) and base_row is not None:
            pairs.append((f"{prefix}TensorFlow seed - {baseline['framework']} {baseline['variant']}",
                          seed_rows.iloc[0]["configuration"], base_row))
        twin_row = by_knobs.get((baseline["framework"], baseline["variant"],
                                 baseline["environment"] + experiments.TWIN))
        if twin_row is not None and base_row is not None:  # the noise floor: identical twins
            pairs.append((f"{prefix}A/A: the baseline's twin - the baseline", twin_row, base_row))
        for comparison in plan.comparisons(run_config["hourglass"]):
            mine, theirs = (by_knobs.get(comparison[k]) for k in ("configuration", "reference"))
            if mine is not None and theirs is not None:
                pairs.append((f"{prefix}{comparison['label']} ({comparison['kind']})", mine, theirs))
    pairs = [(name, mine, theirs) for name, mine, theirs in pairs
             if mine in ops_ms.index and theirs in ops_ms.index]
    columns = [c for c in ORDER + ["outside the ops"] if c in ops_ms.columns]
    palette = dict(zip(columns, sns.color_palette("colorblind", len(columns))))
    fig, ax = plt.subplots(figsize=(11, 0.5 * len(pairs) + 2.2))
    for y, (name, mine, theirs) in enumerate(pairs):
        delta = ops_ms.loc[mine, columns] - ops_ms.loc[theirs, columns]
        right = left = 0.0
        for category, value in delta.items():
            start = right if value >= 0 else left + value
            ax.barh(y, abs(value), left=start, color=palette[category],
                    label=category if y == 0 else None)
            right, left = (right + value, left) if value >= 0 else (right, left + value)
        total = step_ms.get(mine, float("nan")) - step_ms.get(theirs, float("nan"))
        ax.plot(total, y, "k|", ms=14, mew=2)
        ax.text(max(right, 0), y, f"  {total:+.0f} ms {'wall' if on_gpu.get(mine) else 'CPU'}",
                va="center", fontsize=8)
    ax.axvline(0, color="0.3", lw=1)
    ax.margins(x=0.12)  # room for the labels right of the bars
    ax.set_yticks(range(len(pairs)), [p[0] for p in pairs], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("difference in one train step, ms (this - what it is compared with): op time by "
                  "category from the traces,\nand the rest of the step outside them (on a CPU: its "
                  "CPU time, the framework's overhead;\non a GPU: its wall time with no kernel "
                  "running); | the whole difference")
    ax.set_title("Where each knob's difference lives inside the train step")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=7)
    figures.save(fig, png, svg)
