"""Tidy tables -> the summary table (median, bootstrap 95% CI, CV, noisy flag, speedup against
the baseline with its interval and a Mann-Whitney test) and the system table (a Snakemake
script; it reads the tidy tables only)."""

import sys

import pandas as pd

from knobs.stats import summarize  # beside this script

sys.stderr = open(snakemake.log[0], "w", buffering=1)

KEYS = {
    "copy": ["experiment", "framework", "environment", "device", "input", "batch"],
    "hourglass": ["experiment", "framework", "variant", "environment", "device", "phase",
                  "stacks", "resolution", "batch"],
}
# What describes the machine and the software, for the system table.
SYSTEM = ["cpu", "cores", "memory_gib", "os", "kernel", "glibc", "thp_enabled", "gpu",
          "python_version"]

statistics = snakemake.params.statistics
summaries, system = [], []
for name, path in snakemake.input.items():
    experiment = name.removesuffix("_table")
    table = pd.read_csv(path, low_memory=False)
    table = table[table["seconds"].notna()]
    summary = summarize(table, KEYS[experiment], snakemake.params.baselines[experiment],
                        cv_threshold=statistics["cv_threshold"], alpha=statistics["alpha"])
    summaries.append(summary)
    for host, rows in table.groupby("host"):
        items = {column: rows[column].dropna().iloc[0] for column in SYSTEM
                 if column in rows and rows[column].notna().any()}
        for framework, version in rows.groupby("framework")["framework_version"].first().items():
            items[f"{framework} version"] = version
        for library in sorted({p for value in rows["preloads"].dropna() for p in str(value).split()}):
            items[f"preloaded {library.rsplit('/', 1)[-1].split('.so')[0]}"] = library
        system += [{"host": host, "experiment": experiment, "item": k, "value": v}
                   for k, v in items.items()]

pd.concat(summaries, ignore_index=True).to_csv(snakemake.output.summary, index=False)
pd.DataFrame(system).drop_duplicates(["host", "item", "value"]).to_csv(
    snakemake.output.system, index=False)
