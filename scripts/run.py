#!/usr/bin/env python3
"""Run a config through the workflow, then make its report (`make run`, `make rerun`,
`make resolve`, `make report`):

    run.py CONFIG [MORE_CONFIG...] [--report-only] [-- SNAKEMAKE_ARGUMENTS...]

The same command recovers an interrupted run (knobs/recovery.py): a stale lock is removed, a
result finished after its Snakemake was killed is kept, a damaged result file is moved aside
and measured again, a run still at work is named and nothing starts; incomplete outputs are
made again (the profile's `rerun-incomplete`). Where processes fail (a knob that did not
apply, a measured process killed), the others are measured all the same (`keep-going`), then
the tables, figures and report are made without the failed ones: `<results>/not_measured.yaml`
lists each with why, the report's "not measured" table shows them, and the next run measures
them again. Exits 1 where a process is missing.

A config with a `budget` is measured in as many rounds as fit in it (knobs/budget.py): its
fewest rounds first, then the rounds their times allow, written to `<results>/rounds.yaml`.
"""

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import yaml
from snakemake.utils import update_config

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from knobs import budget, config_check, experiments, recovery, workflow  # noqa: E402


def merged(paths):
    """The config the files make together, as Snakemake merges them (later ones win)."""
    config = {}
    for path in paths:
        update_config(config, yaml.safe_load(Path(path).read_text()) or {})
    return config


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    own, extra = (argv[:argv.index("--")], argv[argv.index("--") + 1:]) if "--" in argv else (
        argv, [])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("configs", nargs="+", help="config files, later ones winning")
    parser.add_argument("--report-only", action="store_true", help="make the report alone")
    args = parser.parse_args(own)
    try:
        config = config_check.validated(merged(args.configs))
        results_dir = experiments.results_dir(config)
        if args.report_only:
            return report(args.configs, config, results_dir)
        with recovery.alone_on(results_dir):
            recovery.prepare(config, results_dir)
            return run(args.configs, config, results_dir, extra)
    except (config_check.ConfigError, recovery.StillRunning) as error:
        sys.exit(f"knobs: {error}")


def run(configs, config, results_dir, extra):
    """Measure what is missing, then the tables, figures and report (without the processes
    that failed, where some did); the exit status Snakemake's, or 1 where one is missing."""
    # what a run before this one left out is tried again: its list is made anew
    Path(results_dir, workflow.NOT_MEASURED).unlink(missing_ok=True)
    if not config["not_measured"]:
        Path(results_dir, "tables", "not_measured.csv").unlink(missing_ok=True)
    if config.get("budget"):
        configs, code = within_budget(configs, config, results_dir)
        if code < 0:
            return 128 - code
        config = config_check.validated(merged(configs))
    code, missing = workflow.measure(configs, config, results_dir, extra,
                                     report=os.path.join(results_dir, "report.html"),
                                     report_after_run=True)
    if code < 0:  # Snakemake itself was killed: the same command recovers
        return 128 - code
    if code:
        return code
    if missing:  # last, below Snakemake's own lines
        overlay = Path(results_dir, workflow.NOT_MEASURED)
        recovery.say(f"{len(missing)} process(es) not measured; the tables, figures and report "
                     f"are made without them ({overlay} and tables/not_measured.csv list them; "
                     "the next run measures them again):\n"
                     + "\n".join(f"  {run_file}: {why}" for run_file, why in missing.items()))
    return 1 if missing else 0


def within_budget(configs, config, results_dir):
    """The configs with the rounds the budget holds (`<results>/rounds.yaml`), and the exit
    status of the calibration, where it had to be measured to choose them (0 where not)."""
    chosen = budget.decided(results_dir, config["budget"])
    if chosen is not None:
        recovery.say(f"{chosen} round(s), as chosen before under this budget "
                     f"({Path(results_dir, budget.ROUNDS_FILE)})")
        return [*configs, str(Path(results_dir, budget.ROUNDS_FILE))], 0
    most = budget.reps_of(config)
    fewest = min(config["budget"]["fewest_rounds"], max(most.values()))
    first = Path(results_dir, "calibration.yaml")
    first.write_text(f"rounds: {fewest}\n")
    started = time.time()
    code = subprocess.run(workflow.command(
        *configs, first, until=["benchmark_run", "benchmark_evidence"])).returncode
    first.unlink()
    if code < 0:
        return configs, code
    seconds, minutes = time.time() - started, config["budget"]["minutes"]
    rounds, predicted = budget.rounds_that_fit(
        seconds, budget.process_seconds(config, results_dir, fewest), most, minutes)
    said = (f"budget {minutes:g} min of measuring: the first {fewest} round(s) took "
            f"{seconds:.0f} s, so {rounds} round(s) of at most {max(most.values())}, about "
            f"{predicted / 60:.1f} min" + (" (over the budget: the fewest rounds it allows)"
                                            if predicted > minutes * 60 else ""))
    recovery.say(said)
    return [*configs, str(budget.record(results_dir, config["budget"], rounds, said))], code


def report(configs, config, results_dir):
    """`<results>/report.html` alone (`make report`; a run makes it as it ends), of the rounds
    the budget chose, without the processes a failed run left out, where it did."""
    overlays = [Path(results_dir) / name for name in (budget.ROUNDS_FILE, workflow.NOT_MEASURED)
                if name != budget.ROUNDS_FILE or config.get("budget")]
    return subprocess.run(workflow.command(
        *configs, *[path for path in overlays if path.exists()],
        report=os.path.join(results_dir, "report.html"))).returncode


if __name__ == "__main__":
    sys.exit(main())
