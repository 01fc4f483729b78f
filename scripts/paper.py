#!/usr/bin/env python3
"""Rebuild shipped result sets from their run files and their config.yaml: tables, figures and
the report (`make paper`). Only the rules that aggregate may run: no benchmark runs, no
framework is imported.

    paper.py                     the reference run and the GPU run (what the README shows)
    paper.py --study NAME        the sets a study reads (studies/NAME/study.yaml); all: every set
    paper.py --tables-only       tables, summary and verdicts alone, each set in one process
                                 (the studies' check: knobs/aggregate.py, as the rules run it)
    paper.py --root DIR          the sets under DIR instead of the repository (a copy of it)

Each comparison of two sets shipped (`make compare`'s comparison.csv) gets its figure drawn
again too where it is missing: figures are not tracked, only what they are drawn from.
"""

import argparse
import concurrent.futures
import os
import subprocess
import sys
from pathlib import Path

import yaml

from knobs import workflow  # beside this script

REPO = Path(__file__).resolve().parent.parent
DEFAULT = ["results/paper", "results/paper/gpu", "results/paper/gpu/second"]


def sets_of(study, root):
    """The result sets to rebuild, as folders relative to `root`."""
    if study is None:
        return DEFAULT
    if study == "all":
        return sorted(str(path.parent.relative_to(root))
                      for path in (root / "results" / "paper").rglob("config.yaml"))
    manifest = REPO / "studies" / study / "study.yaml"
    if not manifest.exists():
        names = sorted(path.parent.name for path in (REPO / "studies").glob("*/study.yaml"))
        sys.exit(f"paper.py: no study {study!r}; studies: {', '.join(names)}, all")
    return yaml.safe_load(manifest.read_text())["sets"]


def rebuild(result_set, root):
    """One set, as `make paper` rebuilds it; returns the failure's text, or None."""
    config = root / result_set / "config.yaml"
    check = subprocess.run([sys.executable, str(REPO / "scripts" / "convert_results.py"),
                            "--check", str(root / result_set)], capture_output=True, text=True)
    if check.returncode:
        return check.stdout + check.stderr
    # nothing measured, and no lock: the sets' outputs are disjoint, rebuilt side by side
    aggregating = dict(directory=root, nolock=True, aggregate_only=True)
    done = subprocess.run(workflow.command(config, **aggregating, report=f"{result_set}/report.html",
                                           report_after_run=True),
                          capture_output=True, text=True, cwd=root)
    return done.stdout[-3000:] + done.stderr[-3000:] if done.returncode else None


def tables_alone(result_set, root):
    """Every table of one set, in this worker process (knobs/aggregate.py; each result file
    read is checked for its format and schema); returns the failure's text, or None."""
    import traceback

    from knobs import aggregate, config_check  # beside this script

    try:
        config = yaml.safe_load((root / result_set / "config.yaml").read_text())
        aggregate.tables_of(config_check.fill_defaults(config), root)
    except Exception:
        return traceback.format_exc()
    return None


def redraw_comparisons(root):
    """comparison.png beside each comparison.csv under results/paper that lacks it (or is
    older); returns the folders drawn."""
    import pandas as pd

    from compare import plot  # beside this script

    drawn = []
    for table in sorted((root / "results" / "paper").rglob("comparison.csv")):
        figure = table.with_suffix(".png")
        if not figure.exists() or figure.stat().st_mtime < table.stat().st_mtime:
            folder = table.parent.relative_to(root)
            comparison = pd.read_csv(table)
            # compared before copies were set against their size: the change itself
            comparison["change_beyond_machine"] = comparison.get(
                "change_beyond_machine", comparison["change"]).fillna(comparison["change"])
            plot(comparison, figure, f"{folder}: the second set against the first")
            drawn.append(str(folder))
    return drawn


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--study", help="a study's sets (studies/<name>), or all")
    parser.add_argument("--tables-only", action="store_true")
    parser.add_argument("--root", default=str(REPO), help="where results/paper is")
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1),
                        help="sets rebuilt at once (their outputs are disjoint)")
    args = parser.parse_args(argv)
    root = Path(args.root).resolve()
    sets = sets_of(args.study, root)
    if args.tables_only:  # each set in a worker process: no interpreter started per set
        with concurrent.futures.ProcessPoolExecutor(max_workers=args.jobs) as pool:
            failures = dict(zip(sets, pool.map(tables_alone, sets, [root] * len(sets))))
    else:  # Snakemake's processes, run from threads
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
            failures = dict(zip(sets, pool.map(rebuild, sets, [root] * len(sets))))
    for result_set, failure in failures.items():
        print(f"== {result_set}: {'rebuilt' if failure is None else 'FAILED'}", flush=True)
        if failure:
            print(failure)
    if not args.tables_only:
        for folder in redraw_comparisons(root):
            print(f"== {folder}: comparison.png drawn", flush=True)
    return 1 if any(failures.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
