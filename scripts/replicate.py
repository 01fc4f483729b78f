#!/usr/bin/env python3
"""Run one config twice, back to back, into a result set of its own and `second/` inside it,
as each shipped study was repeated on another machine: each run gets the config with its
`results:` pointed there (comments kept), so that `make paper` rebuilds it; both runs' times
go to `run_times.csv`, and `make compare` of the two to `aa/` (its printout: compare.txt).

    replicate.py studies/store_path/config/own_store_path.yaml results/paper/own_store_path/xeon167
    replicate.py CONFIG INTO -- -s ../Snakefile   (what follows -- goes to snakemake)

A folder that exists and is not empty is refused: nothing already there is overwritten.
"""

import argparse
import datetime
import os
import re
import subprocess
import sys

import pandas as pd

from knobs import workflow  # beside this script

SCRIPTS = os.path.dirname(os.path.abspath(__file__))
RESULTS_LINE = re.compile(r"^results:.*$", re.M)


def pointed_at(config_text, folder):
    """The config's text with its `results:` (or a new one, at the end) naming `folder`."""
    line = f"results: {folder}"
    if RESULTS_LINE.search(config_text):
        return RESULTS_LINE.sub(line, config_text, count=1)
    return config_text.rstrip("\n") + f"\n{line}\n"


def now():
    return datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)


def run(config_text, folder, snakemake_args):
    """One run of the config into `folder`: its row of run_times.csv."""
    os.makedirs(folder, exist_ok=True)
    configfile = os.path.join(folder, "config.yaml")
    with open(configfile, "w") as handle:
        handle.write(pointed_at(config_text, folder))
    command = workflow.command(configfile, extra=snakemake_args)
    started = now()
    if subprocess.run(command).returncode:
        sys.exit(f"replicate: {' '.join(command)} failed; what it measured is in {folder}; "
                 "that command goes on from there")
    finished = now()
    return {"run": folder, "command": " ".join(command), "started": started.isoformat(),
            "finished": finished.isoformat(), "seconds": (finished - started).total_seconds()}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("config", help="the config to run, e.g. studies/store_path/config/own_store_path.yaml")
    parser.add_argument("into", help="the result set to write (its second run: INTO/second)")
    parser.add_argument("snakemake_args", nargs="*", help="after --: passed to snakemake")
    args = parser.parse_args(argv)
    with open(args.config) as handle:
        config_text = handle.read()
    second = os.path.join(args.into, "second")
    if os.path.isdir(args.into) and os.listdir(args.into):
        sys.exit(f"replicate: {args.into} holds files already; name another folder "
                 "(nothing there is overwritten)")
    times = []
    for folder in (args.into, second):
        times.append(run(config_text, folder, args.snakemake_args))
        # each run's time kept as it ends, so a failed second run loses nothing
        pd.DataFrame(times).to_csv(os.path.join(args.into, "run_times.csv"), index=False)
    out = os.path.join(args.into, "aa")
    compared = subprocess.run([sys.executable, os.path.join(SCRIPTS, "compare.py"), args.into,
                               second, "--out", out], capture_output=True, text=True)
    if compared.returncode:
        sys.exit(f"replicate: compare.py failed:\n{compared.stderr}")
    with open(os.path.join(out, "compare.txt"), "w") as handle:
        handle.write(compared.stdout)
    print(compared.stdout, end="")


if __name__ == "__main__":
    main()
