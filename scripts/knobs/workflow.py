"""Snakemake as the scripts users run drive it (`make run`, `make search`, `make paper`, `make
replicate`): the one place its command line is built, the rules that only aggregate, and the
one way a run goes on past processes that failed."""

import subprocess
import sys
import time
from pathlib import Path

import yaml

from knobs import recovery

SNAKEFILE = Path(__file__).resolve().parents[2] / "Snakefile"
# The rules that make tables, figures and the report from run files: with only these allowed,
# nothing is measured and no framework is imported (`make paper`, a search's figure).
AGGREGATING_RULES = ("table", "ops_table", "summary_table", "verdicts_table", "report_config",
                     "figure", "search_answer", "not_measured_table", "all")

NOT_MEASURED = "not_measured.yaml"  # beside the results: the processes a run could not measure


def command(*configs, directory=None, cores=1, aggregate_only=False, until=(), report=None,
            report_after_run=False, quiet=(), nolock=False, extra=()):
    """The Snakemake of the running interpreter over the workflow, one job at a time (`cores`:
    None leaves it to the caller's words or profile), with `configs` (later ones winning; none:
    the profile's); `until`: rules to stop after; `report`: write that report instead of
    running, or, with `report_after_run`, once the run has succeeded (one Snakemake start and
    one DAG instead of two); `extra`: the caller's own words, last (`--forcerun FILES`)."""
    words = [sys.executable, "-m", "snakemake", "--snakefile", str(SNAKEFILE)]
    if cores is not None:
        words += ["--cores", str(cores)]
    if directory is not None:
        words += ["--directory", str(directory)]
    if nolock:
        words.append("--nolock")
    if quiet:
        words += ["--quiet", *quiet]
    if aggregate_only:
        words += ["--allowed-rules", *AGGREGATING_RULES]
    if until:
        words += ["--until", *until]
    if report is not None:
        words += ["--report", str(report)] + (["--report-after-run"] if report_after_run else [])
    if configs:
        words += ["--configfile", *map(str, configs)]
    return words + [str(word) for word in extra]


def measure(configs, config, results_dir, extra=(), **words):
    """Measure what the configs lack, then everything built from it; where measured processes
    failed, list each with its reason (`<results>/not_measured.yaml`, an overlay of the
    configs) and make the tables, figures and report without them. Returns Snakemake's exit
    status (negative: it was killed, the same command recovers) and {run file: why}."""
    overlay = Path(results_dir) / NOT_MEASURED
    overlay.unlink(missing_ok=True)  # what a run before this one left out is tried again
    started = time.time()
    code = subprocess.run(command(*configs, extra=extra, **words)).returncode
    if code < 0:
        return code, {}
    missing = recovery.missing(config, results_dir, since=started) if code else {}
    if code and not missing:  # not a measured process: Snakemake has said which job
        return code, {}
    if missing:
        listed = config["not_measured"]
        overlay.write_text(yaml.safe_dump({"not_measured": {
            **(listed if isinstance(listed, dict) else dict.fromkeys(listed, "")), **missing}}))
        code = subprocess.run(command(*configs, overlay, **words)).returncode
    return code, missing
