#!/usr/bin/env python3
"""More processes where a result set's verdicts are inconclusive: for every inconclusive
verdict whose `processes_to_resolve` is at most --most, its configuration and the one it is
compared with get that many processes. Prints the config overlay (`more_reps`) that runs
them; Snakemake then runs only the processes that are missing, in rounds past the
experiment's `reps`, and rebuilds the tables, verdicts and figures.

    python scripts/resolve.py results --most 12 > results/more_reps.yaml
    snakemake --cores 1 --configfile config/config.yaml results/more_reps.yaml

With --minutes, the verdicts that take the fewest processes come first, and a verdict is left
open where its processes would take the measuring past that many minutes (each process
counted at its configuration's median wall time in the set's tables).

Reads <set>/tables/verdicts.csv, the experiments' tables and <set>/config_used.yaml. An
estimate (knobs/stats.py, processes_to_resolve): a verdict whose ratio moves may stay
inconclusive.
"""

import argparse
import os
import sys

import pandas as pd
import yaml

from knobs import experiments  # beside this script


def counterpart(configuration, reference, found):
    """The configuration a verdict compares with: `reference` is a configuration path, or
    `key=value/...` naming the keys in which it differs from `configuration`."""
    by_path = {c.path: c for c in found}
    if "=" not in reference:
        return by_path.get(reference)
    changes = dict(part.split("=", 1) for part in reference.split("/"))
    wanted = {k: changes.get(k, str(v)) for k, v in configuration.key}
    return next((c for c in found if {k: str(v) for k, v in c.key} == wanted), None)


def plan(verdicts, config, most, seconds=None, budget=None):
    """{<experiment>/<configuration path>: processes} for the inconclusive verdicts that
    `most` processes or fewer would settle, the cheapest first, within `budget` seconds of
    measuring where given (`seconds`: {<experiment>/<configuration path>: seconds per
    process}); and the verdicts left open, as rows."""
    found = experiments.experiments(config)
    wanted, left, spent = {}, [], 0.0
    open_ = verdicts[verdicts["verdict"] == "inconclusive"]
    for row in open_.sort_values("processes_to_resolve", kind="stable").itertuples():
        needed = row.processes_to_resolve
        experiment = found.get(row.experiment)
        mine = ({c.path: c for c in experiment.configurations}.get(row.configuration)
                if experiment else None)
        if pd.isna(needed) or needed > most or mine is None:
            left.append(row)
            continue
        asked = {}
        for c in (mine, counterpart(mine, str(row.reference), experiment.configurations)):
            if c is not None:
                name = f"{row.experiment}/{c.path}"
                asked[name] = max(wanted.get(name, c.reps), int(needed))
        if budget is not None:
            cost = sum((n - max(wanted.get(name, 0), _reps(found, name))) * seconds[name]
                       for name, n in asked.items())
            if spent + cost > budget:
                left.append(row)
                continue
            spent += cost
        wanted.update(asked)
    return {name: n for name, n in sorted(wanted.items())
            if n > _reps(found, name)}, left, spent


def process_seconds(result_set, config):
    """{<experiment>/<configuration path>: the median wall time of its processes} from the
    set's tables (each process's first start to its end)."""
    found = {}
    for name in experiments.experiments(config):
        path = os.path.join(result_set, "tables", f"{name}.csv")
        if not os.path.exists(path):
            continue
        table = pd.read_csv(path, usecols=["configuration", "rep", "started", "finished"],
                            low_memory=False).drop_duplicates(["configuration", "rep"])
        wall = (pd.to_datetime(table["finished"], format="ISO8601")
                - pd.to_datetime(table["started"], format="ISO8601")).dt.total_seconds()
        found.update({f"{name}/{c}": s for c, s in wall.groupby(table["configuration"]).median()
                      .items()})
    return found


def _reps(found, name):
    experiment, path = name.split("/", 1)
    return next(c.reps for c in found[experiment].configurations if c.path == path)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("result_set", help="a folder the workflow wrote (tables/, config_used.yaml)")
    parser.add_argument("--most", type=int, default=12,
                        help="the most processes to ask for per configuration (default 12)")
    parser.add_argument("--minutes", type=float,
                        help="the most minutes of measuring to ask for (cheapest verdicts first)")
    args = parser.parse_args(argv)
    paths = [os.path.join(args.result_set, p) for p in ("tables/verdicts.csv", "config_used.yaml")]
    missing = [p for p in paths if not os.path.exists(p)]
    if missing:
        sys.exit(f"resolve: {', '.join(missing)} missing: run the workflow first (make run)")
    verdicts = pd.read_csv(paths[0], low_memory=False)
    with open(paths[1]) as handle:
        config = yaml.safe_load(handle)
    seconds = process_seconds(args.result_set, config) if args.minutes else None
    more, left, spent = plan(verdicts, config, args.most, seconds,
                             args.minutes * 60 if args.minutes else None)
    open_ = (verdicts["verdict"] == "inconclusive").sum()
    within = f" and {args.minutes:g} minutes" if args.minutes else ""
    print(f"# {open_} inconclusive verdicts; {open_ - len(left)} would take at most {args.most} "
          f"processes per configuration{within}: {len(more)} configurations get more; "
          f"{len(left)} are left (more than that, or no number would do)"
          + (f"; about {spent / 60:.0f} minutes of processes" if args.minutes else ""),
          file=sys.stderr)
    yaml.safe_dump({"more_reps": more}, sys.stdout, sort_keys=True)


if __name__ == "__main__":
    main()
