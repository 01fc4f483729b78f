"""The copy step figure: per-call time, GB/s and page faults against batch size, one column
per framework and device, colour = environment (a Snakemake script; reads the tidy table
only). On the GPU a call is the round trip host -> device -> host."""

import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402

sys.stderr = open(snakemake.log[0], "w", buffering=1)

GLIBC_MMAP_CEILING = 32 * 2**20  # DEFAULT_MMAP_THRESHOLD_MAX on 64-bit glibc
PAGE = 4096

table = pd.read_csv(snakemake.input.table, low_memory=False)
summary = pd.read_csv(snakemake.input.summary)
noisy = summary[(summary["experiment"] == "copy") & summary["noisy"]]
noisy_keys = set(zip(noisy["framework"], noisy["device"], noisy["environment"], noisy["input"],
                     noisy["batch"]))
frameworks = list(dict.fromkeys(snakemake.config["copy"]["frameworks"]))
panels = [(f, d) for f in frameworks for d in ("cpu", "gpu")
          if ((table["framework"] == f) & (table["device"] == d)).any()]
TWIN = ".twin"  # the baseline measured again: the A/A noise floor
names = list(snakemake.config["environments"])
environments = sorted(table["environment"].unique(),
                      key=lambda e: (names.index(e.removesuffix(TWIN)), e.endswith(TWIN)))
# The same colour for the same environment in every figure; its A/A twin dashed, in grey.
palette = dict(zip(names, sns.color_palette("colorblind", len(names))))
palette.update({f"{name}{TWIN}": "0.45" for name in names})
markers = dict(zip(names, "osD^vP*Xph"))
markers.update({f"{name}{TWIN}": "" for name in names})

summary = (table.groupby(["framework", "device", "environment", "input", "batch", "bytes"])
           .agg(median=("seconds", "median"), q25=("seconds", lambda s: s.quantile(0.25)),
                q75=("seconds", lambda s: s.quantile(0.75)), faults=("minor_faults", "median"),
                limit_gbps=("limit_gbps", "first"), n=("seconds", "size"))
           .reset_index())
bytes_per_image = table["bytes"].iloc[0] / table["batch"].iloc[0]
limits = summary.groupby(["device", "batch"])[["bytes", "limit_gbps"]].first().reset_index()
l3 = table["l3_cache"].dropna().iloc[0] if table["l3_cache"].notna().any() else None
l3_bytes = int(l3.rstrip("K")) * 1024 if isinstance(l3, str) and l3.endswith("K") else None

inputs = list(summary["input"].unique())
image = "x".join(map(str, snakemake.config["copy"]["image"]))
fig, axes = plt.subplots(3, len(panels), figsize=(3.1 * len(panels), 9.2),
                         sharex=True, sharey="row", squeeze=False)
for column, (framework, device) in enumerate(panels):
    limit = limits[limits["device"] == device]
    for row in range(3):
        ax = axes[row, column]
        ax.axvline(GLIBC_MMAP_CEILING / bytes_per_image, color="0.4", ls="--", lw=1)
        if l3_bytes:
            ax.axvline(l3_bytes / bytes_per_image, color="0.6", ls=":", lw=1)
    time_ax, rate_ax, fault_ax = axes[:, column]
    time_ax.plot(limit["batch"], limit["bytes"] / limit["limit_gbps"] / 1e9 * 1e3,
                 color="black", lw=1.2, label="copy limit")
    rate_ax.plot(limit["batch"], limit["limit_gbps"], color="black", lw=1.2)
    fault_ax.plot(limit["batch"], limit["bytes"] / PAGE, color="black", lw=1, ls=":",
                  label="one fault per 4 KiB page")
    for environment in environments:
        for input_kind in inputs:
            part = summary[(summary["framework"] == framework)
                           & (summary["device"] == device)
                           & (summary["environment"] == environment)
                           & (summary["input"] == input_kind)]
            if part.empty:
                continue
            twin = environment.endswith(TWIN)
            style = dict(color=palette[environment], marker=markers[environment], ms=4,
                         lw=0.9 if twin else 1.3, alpha=0.85,
                         ls=(0, (4, 2)) if twin else "-" if input_kind == "random" else "--")
            label = (f"{environment.removesuffix(TWIN)} again (A/A)" if twin else environment)
            label += "" if input_kind == "random" else f" ({input_kind})"
            time_ax.plot(part["batch"], part["median"] * 1e3, label=label, **style)
            time_ax.fill_between(part["batch"], part["q25"] * 1e3, part["q75"] * 1e3,
                                 color=palette[environment], alpha=0.2, lw=0)
            rate_ax.plot(part["batch"], part["bytes"] / part["median"] / 1e9, **style)
            flagged = part[[(framework, device, environment, input_kind, b) in noisy_keys
                            for b in part["batch"]]]
            time_ax.scatter(flagged["batch"], flagged["median"] * 1e3, s=45, facecolors="none",
                            edgecolors="red", lw=0.8, zorder=5)
            fault_ax.plot(part["batch"], part["faults"], **style)
    time_ax.set_title(framework if device == "cpu" else f"{framework} (GPU round trip)")
    fault_ax.set_xlabel(f"batch (images of {image} float32)")
for ax in axes.flat:
    ax.set_xscale("log", base=2)
    ax.grid(True, which="major", alpha=0.3)
axes[0, 0].set_yscale("log")
axes[2, 0].set_yscale("symlog", linthresh=1)  # zero faults stays visible
axes[2, 0].set_ylim(bottom=-0.3)
axes[0, 0].set_ylabel("time per call (ms, median, IQR band)")
axes[1, 0].set_ylabel("copy rate (GB/s of output)")
axes[2, 0].set_ylabel("minor page faults per call (median)")
axes[1, 0].set_ylim(bottom=0)
handles, labels = axes[0, 0].get_legend_handles_labels()
extra = [plt.Line2D([], [], color="0.4", ls="--", lw=1),
         plt.Line2D([], [], color="black", ls=":", lw=1),
         plt.Line2D([], [], color="red", marker="o", mfc="none", ls="none", ms=9)]
threshold = snakemake.config["statistics"]["cv_threshold"]
extra_labels = ["glibc's 32 MiB mmap ceiling", "one fault per 4 KiB page",
                f"noisy: CV over {threshold:.0%}"]
if l3_bytes:
    extra.append(plt.Line2D([], [], color="0.6", ls=":", lw=1))
    extra_labels.append(f"L3 cache ({l3})")
fig.legend(handles + extra, labels + extra_labels, loc="lower center",
           ncol=min(6, len(panels) + 1, len(labels) + len(extra)), frameon=False)
machine = table.iloc[0]
gpus = "; ".join(table.loc[table["device"] == "gpu", "gpu"].dropna().unique())
label = snakemake.config.get("label")
fig.suptitle(f"The copy step: identity function per call against batch size"
             f"{' - ' + label if label else ''}\n"
             f"{machine['cpu']}, {machine['cores']} cores, {machine['glibc']}, kernel {machine['kernel']}, "
             f"THP {machine['thp_enabled']}{'; ' + gpus if gpus else ''}; "
             f"{int(summary['n'].median())} calls per point",
             fontsize=11)
fig.tight_layout(rect=(0, 0.07, 1, 0.95))
fig.savefig(snakemake.output.png, dpi=130)
fig.savefig(snakemake.output.svg)
