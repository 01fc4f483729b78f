"""Tidy tables -> the summary table (per configuration and case: the median with its interval
over processes, the spread, and against the baseline the time ratio and speedup with their
intervals, the A/A noise floor and the verdict) and the system table (a Snakemake script; it
reads the tidy tables only)."""

import sys

import pandas as pd

from knobs.stats import summarize  # beside this script

sys.stderr = open(snakemake.log[0], "w", buffering=1)

# What describes the machine and the software, for the system table.
SYSTEM = ["cpu", "machine_kind", "cores", "memory_gib", "os", "kernel", "glibc", "thp_enabled",
          "gpu", "python_version"]

statistics = snakemake.params.statistics
summaries, system = [], []
for name, path in snakemake.input.items():
    experiment = name.removesuffix("_table")
    table = pd.read_csv(path, low_memory=False)
    table = table[table["seconds"].notna()]
    settings = snakemake.params.experiments[experiment]
    summaries.append(summarize(table, settings["keys"], settings["baseline"],
                               threshold=statistics["threshold"],
                               cv_threshold=statistics["cv_threshold"],
                               kinds_by=settings["case"] if settings["kinds"] else None))
    for host, rows in table.groupby("host"):
        items = {column: rows[column].dropna().iloc[0] for column in SYSTEM
                 if column in rows and rows[column].notna().any()}
        if "framework" in rows:
            for framework, version in rows.groupby("framework")["framework_version"].first().items():
                items[f"{framework} version"] = version
        for library in sorted({p for value in rows["preloads"].dropna() for p in str(value).split()}):
            items[f"preloaded {library.rsplit('/', 1)[-1].split('.so')[0]}"] = library
        system += [{"host": host, "experiment": experiment, "item": k, "value": v}
                   for k, v in items.items()]

pd.concat(summaries, ignore_index=True).to_csv(snakemake.output.summary, index=False)
pd.DataFrame(system).drop_duplicates(["host", "item", "value"]).to_csv(
    snakemake.output.system, index=False)
