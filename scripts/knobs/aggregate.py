"""From a result set's run files to its tables: each experiment's tidy table, its op table
where traced, the summary, the system table and the verdicts. One function per step, which
the rules' scripts call (table.py, ops_table.py, summary.py, verdicts.py), and `tables_of`,
which takes every step in one process: how scripts/paper.py checks that every shipped set
rebuilds, without Snakemake's start per job. pandas only: no framework is imported.
"""

import sys

import pandas as pd

from knobs import finder, results, stats, tables, verdicts
from knobs.experiments import comparisons, summary_settings, table_settings
from knobs.op_categories import categorize

# What describes the machine and the software, for the system table.
SYSTEM = ["cpu", "machine_kind", "cores", "memory_gib", "os", "kernel", "glibc", "thp_enabled",
          "gpu", "python_version"]


# ---- The steps --------------------------------------------------------------------------------
def tidy_table(run_paths, settings, needed):
    """One experiment's tidy table from its result files (each checked against the result
    schema first), with its benchmark's own columns; `needed`: the tables those read."""
    runs = [results.read(path) for path in run_paths]
    return tables.build(runs, settings, needed, finder.plugin(settings["plugin"]))


def op_table(run_paths):
    """The time per op of each run's traced step, by op category: one row per (run, op). The
    same runs' table checks each file against the result schema: not done twice here."""
    rows = []
    for path in run_paths:
        run = results.read(path, validate=False)
        for op, seconds in (run.get("op_seconds") or {}).items():
            rows.append({"experiment": run["experiment"], "configuration": run["configuration"],
                         **dict(run["labels"]), "rep": run["rep"], "op": op,
                         "category": categorize(op), "seconds": seconds})
    ops = pd.DataFrame(rows, columns=["experiment", "configuration", "rep", "op", "category",
                                      "seconds"] if not rows else None)
    return ops.sort_values(["configuration", "rep", "op"])


def summary_and_system(measured, settings, statistics):
    """The summary (per configuration and case: median, interval, ratio, verdict) and the
    system table, from the tidy tables of the experiments that get verdicts (`measured`)."""
    summaries, system = [], []
    for experiment, table in measured.items():
        table = table[table["seconds"].notna()]
        setting = settings[experiment]
        summaries.append(stats.summarize(table, setting["keys"], setting["baseline"],
                                         threshold=statistics["threshold"],
                                         cv_threshold=statistics["cv_threshold"],
                                         kinds_by=setting["case"] if setting["kinds"] else None))
        for host, rows in table.groupby("host"):
            items = {column: rows[column].dropna().iloc[0] for column in SYSTEM
                     if column in rows and rows[column].notna().any()}
            if "framework" in rows and "framework_version" in rows:
                for framework, version in rows.groupby("framework")["framework_version"].first().items():
                    items[f"{framework} version"] = version
            for library in sorted({p for value in rows["preloads"].dropna()
                                   for p in str(value).split()}):
                items[f"preloaded {library.rsplit('/', 1)[-1].split('.so')[0]}"] = library
            system += [{"host": host, "experiment": experiment, "item": k, "value": v}
                       for k, v in items.items()]
    return (pd.concat(summaries, ignore_index=True),
            pd.DataFrame(system).drop_duplicates(["host", "item", "value"]))


def verdicts_table(summary, measured, settings, named, statistics):
    return verdicts.build(summary, measured, settings, named, statistics["threshold"])


# ---- How each table is written (the same bytes whichever way it was made) --------------------
def write_tidy(table, path):
    table.to_csv(path, index=False, float_format="%.6g")


def write_plain(table, path):
    table.to_csv(path, index=False)


# ---- Every step in one process ----------------------------------------------------------------
def tables_of(config, root="."):
    """Write every table of the result set `config` describes (its run files under `root`),
    in the rules' order: each experiment's tidy table (and op table where traced), then the
    summary and the system table, then the verdicts."""
    from pathlib import Path

    from knobs import experiments as plan

    found = plan.experiments(config)
    jobs = plan.jobs(config)
    out = Path(root) / plan.results_dir(config) / "tables"
    out.mkdir(parents=True, exist_ok=True)
    read = lambda name: pd.read_csv(out / f"{name}.csv", low_memory=False)  # noqa: E731
    built, pending = set(), dict(found)
    while pending:  # an experiment after the ones whose tables it reads, read back as written
        name, x = next((n, x) for n, x in pending.items() if set(x.needs) <= built)
        paths = [Path(root) / job.run(plan.results_dir(config)) for job in jobs
                 if job.configuration.experiment == name]
        write_tidy(tidy_table(paths, table_settings(x), {n: read(n) for n in x.needs}),
                   out / f"{name}.csv")
        if any(c.trace for c in x.configurations):
            write_tidy(op_table(paths), out / f"{name}_ops.csv")
        built.add(name)
        del pending[name]
    measured = {name: read(name) for name, x in found.items() if not x.reference}
    settings = summary_settings(found)
    summary, system = summary_and_system(measured, settings, config["statistics"])
    write_plain(summary, out / "summary.csv")
    write_plain(system, out / "system.csv")
    summary = read("summary")
    table = verdicts_table(summary, measured, settings, comparisons(found), config["statistics"])
    write_plain(table, out / "verdicts.csv")
    print(f"{out}: {len(built)} tables, {len(summary)} summary rows", file=sys.stderr)
