#!/usr/bin/env python3
"""Which knobs make my step faster here, by how much, for sure, and what do I set.

    search.py BENCH [--config CONFIG] [--minutes N]
    (make search BENCH=... [CONFIG=...] [MINUTES=...])

BENCH: a benchmark's name under the config's `benchmarks:`, or, without a config, a module
(`benchmarks/my_model.py`, or one the workflow finds by name) run with no params.

Measures, in `<results>/search/<BENCH>/`, through the workflow itself (each stage one
Snakemake run of a config this script writes, every knob proven in every process):

1. `<BENCH>`: the baseline, each knob alone (knobs/search.py: `candidates`) and each
   launcher's own settings on this machine, in rounds;
2. `<BENCH>_step<k>`: the knobs that made it faster, best first, each added to the best
   combination so far and measured side by side with it; kept only where faster again;
3. `<BENCH>_final`: the baseline, the best combination and the launchers' settings together.

Then writes `search.csv` (ranked) and `recipe.txt` (the line to paste and the config entry),
prints them, and draws `search.png` (each step's ratio with its interval) and the folder's
`report.html`, whose section "Which knobs help" holds all three (rules/search.smk). Stopped
and started again, it measures nothing twice: each stage's runs are files the next start
finds, and the choices between stages are made again from them. `--minutes`: the most minutes of measuring
(the processes' own time); a step that would go past it is not started.
"""

import argparse
import copy
import json
import os
import shlex
import subprocess
import sys

import pandas as pd
import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from knobs import config_check, experiments, recovery, search, stats, workflow  # noqa: E402
from knobs.experiments import TWIN, results_dir  # noqa: E402

# On the screen, Snakemake's progress alone: each job's details are in its log.
QUIET = ["rules", "host"]


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bench", help="a benchmark's name in --config, or a module")
    parser.add_argument("--config", help="the config that defines BENCH under `benchmarks:`")
    parser.add_argument("--minutes", type=float, help="default: its `search.minutes` (60)")
    parser.add_argument("--replay", action="store_true", help="measure nothing: the table, "
                        "figure and recipe again from what the search's folder holds")
    return parser.parse_args(argv)


def say(text):
    print(f"search: {text}", flush=True)


class Search:
    def __init__(self, config, bench, minutes, replay=False):
        self.user, self.replay = config, replay
        filled = config_check.validated(copy.deepcopy(config))
        self.section = filled["benchmarks"][bench]
        self.bench = bench
        self.folder = os.path.join(results_dir(config), "search", bench)
        self.configfile = os.path.join(self.folder, "config.yaml")  # each stage's, a result set's
        self.minutes = minutes or self.section.get("search", {}).get("minutes", 60)
        everything = config_check.environments_known(config)
        self.baseline = self.section["baseline"]
        self.knobs = search.candidates(everything, self.section, os.cpu_count())
        self.specs = {self.baseline: everything[self.baseline], **self.knobs}
        self.notes = []
        stored = self.stored("config.yaml") or {}
        state = self.stored("state.yaml") or {}
        self.not_measured = state.get("not_measured", {})  # run file -> why it failed
        if "run_cpu" in self.section.get("search", {}).get("launchers", ["run_cpu"]):
            # as read the first time: started again, the search measures the same settings
            launcher = {k: v for k, v in stored.get("environments", {}).items() if k == "run_cpu"}
            notes = state.get("launcher_notes", [])
            if not launcher:
                found, notes = search.run_cpu_environment(sys.executable, sys.prefix)
                # its preloads named as on another machine (run_cpu gives this one's paths)
                launcher = {name: search.configured(spec, name) for name, spec in found.items()}
            self.specs.update(launcher)
            self.notes += notes
        self.launcher_notes = self.notes[:]
        self.launchers = [name for name in ("run_cpu",) if name in self.specs]
        self.case = self.section.get("search", {}).get("case")  # None: the benchmark's one
        self.stages = []  # (experiment, environments, baseline)
        self.more_reps = stored.get("more_reps", {})  # configuration -> processes (settle)

    def stored(self, name):
        """A file of this search's folder, as YAML, None where there is none yet."""
        path = os.path.join(self.folder, name)
        if not os.path.exists(path):
            return None
        with open(path) as source:
            return yaml.safe_load(source)

    def write(self, name, content):
        os.makedirs(self.folder, exist_ok=True)
        with open(os.path.join(self.folder, name), "w") as out:
            yaml.safe_dump(content, out, sort_keys=False)

    # ---- Measuring: one Snakemake run over every stage so far ----------------------------------
    def config(self):
        stage_config = {key: value for key, value in self.user.items()
                        if key not in ("benchmarks", "results")}
        stage_config["results"] = self.folder
        used = {name for _, names, _ in self.stages for name in names}
        stage_config["environments"] = {
            **self.user.get("environments", {}),
            **{name: {k: v for k, v in self.specs[name].items() if k not in ("groups",)}
               for name in sorted(used)}}
        base = {k: v for k, v in self.user["benchmarks"][self.bench].items() if k != "search"}
        stage_config["benchmarks"] = {
            experiment: {**base, "environments": names, "baseline": baseline}
            for experiment, names, baseline in self.stages}
        stage_config["not_measured"] = dict(sorted(self.not_measured.items()))
        staged = {experiment for experiment, _, _ in self.stages}  # started again: so far
        stage_config["more_reps"] = {path: reps for path, reps in sorted(self.more_reps.items())
                                     if path.split("/", 1)[0] in staged}
        return stage_config

    def measure(self, experiment, names, baseline):
        """Measure one stage (the stages before it stay in the config: their runs are
        done); then more processes where a verdict is inconclusive (`settle`)."""
        self.stages.append((experiment, names, baseline))
        self.read_stage(experiment, names)
        self.settle(experiment, names, baseline)

    def settle(self, experiment, names, baseline):
        """Where an environment's verdict is inconclusive, more processes for it and for the
        baseline and its twin (paired by round), up to `search.most` per configuration, as
        `make resolve` adds them: an effect called from 3 processes is rarely sure. Again
        where a verdict turns inconclusive once the baseline has more processes."""
        most = self.section.get("search", {}).get("most", 8)
        if most <= self.section["reps"] or self.replay:
            return
        found = experiments.experiments(config_check.validated(self.config()))[experiment]

        def settled(name):
            return all(f"{experiment}/{c.path}" in self.more_reps
                       for c in found.configurations if c.environment == name)

        while True:
            open_ = [name for name in names if name != baseline and not settled(name)
                     and self.effect(self.row(experiment, name), experiment, name)["verdict"]
                     == "inconclusive"]
            if not open_:
                return
            wanted = [n for n in (*open_, baseline, f"{baseline}{TWIN}") if not settled(n)]
            cost = len(wanted) * (most - self.section["reps"]) * self.minutes_per_process()
            if self.spent() + cost > self.minutes:
                self.notes.append(f"{experiment}: {len(open_)} inconclusive verdict(s) left as "
                                  f"they are: {most} processes each would go past "
                                  f"{self.minutes:g} minutes")
                return
            say(f"{experiment}: {len(open_)} inconclusive verdict(s): {most} processes each for "
                f"them{', the baseline and its twin' if baseline in wanted else ''} (about "
                f"{cost:.0f} minutes)")
            for configuration in found.configurations:
                if configuration.environment in wanted:
                    self.more_reps[f"{experiment}/{configuration.path}"] = most
            self.read_stage(experiment, names)

    def read_stage(self, experiment, names):
        if self.replay:
            if not os.path.exists(os.path.join(self.folder, "tables", f"{experiment}.csv")):
                sys.exit(f"search: {self.folder} holds no {experiment} (make search measures it)")
        else:
            self.run_stage(experiment, names)
        self.tables = {x: self.table(x) for x, _, _ in self.stages}
        self.summary = pd.read_csv(os.path.join(self.folder, "tables", "summary.csv"))
        cases = sorted(self.summary["case"].astype(str).unique())
        if self.case is None and len(cases) > 1:
            self.case = cases[-1]
            self.notes.append(f"ranked by its case {self.case!r} (of {', '.join(cases)}; "
                              "`search: {case: ...}` picks another)")

    def run_stage(self, experiment, names):
        """Snakemake over every stage so far: this one's processes, and the tables."""
        self.write("config.yaml", self.config())
        self.write_state()
        processes = (len(names) + 1) * self.section["reps"]
        say(f"stage {len(self.stages)} ({experiment}): {len(names)} environments and the A/A "
            f"twin, {processes} processes; {self.spent():.1f} of {self.minutes:g} minutes "
            "spent so far")
        code, failed = workflow.measure([self.configfile], config_check.validated(self.config()),
                                        self.folder, quiet=QUIET)
        if failed:
            say(f"{len(failed)} process(es) failed (a knob that did not apply, a crash): "
                "the tables are made without them, each named with its reason")
            self.not_measured.update(failed)
            self.write_state()
            self.write("config.yaml", self.config())
        if code:
            sys.exit(f"search: Snakemake stopped (exit status {code}); its lines above say "
                     "which job, and the same command goes on from there")

    def draw(self):
        """The search's figure and the folder's report, with the answer in a section of its
        own (rules/search.smk): drawn by the rules that aggregate, nothing measured."""
        self.write("config.yaml", {**self.config(), "search_of": self.bench})
        subprocess.run(workflow.command(self.configfile, quiet=QUIET, aggregate_only=True,
                                        report=os.path.join(self.folder, "report.html"),
                                        report_after_run=True), check=True)

    def write_state(self):
        """What the next start needs and the tables do not hold: why each failed process
        failed, and what the launcher did that no environment does."""
        self.write("state.yaml", {"not_measured": self.not_measured,
                                  "launcher_notes": self.launcher_notes})

    def table(self, experiment):
        path = os.path.join(self.folder, "tables", f"{experiment}.csv")
        return pd.read_csv(path, low_memory=False) if os.path.exists(path) else pd.DataFrame()

    def spent(self):
        """Minutes the measured processes took (from their own records)."""
        total = 0.0
        for table in getattr(self, "tables", {}).values():
            if table.empty:
                continue
            runs = table.drop_duplicates(["configuration", "rep"])
            total += (pd.to_datetime(runs["finished"], format="ISO8601")
                      - pd.to_datetime(runs["started"], format="ISO8601")).dt.total_seconds().sum()
        return total / 60

    def minutes_per_process(self):
        """What one process takes, the median of the first stage's."""
        first = self.tables[self.stages[0][0]].drop_duplicates(["configuration", "rep"])
        seconds = (pd.to_datetime(first["finished"], format="ISO8601")
                   - pd.to_datetime(first["started"], format="ISO8601")).dt.total_seconds()
        return seconds.median() / 60

    def minutes_per_stage(self, environments):
        """What a stage of `environments` (and a twin) will take."""
        return (environments + 1) * self.section["reps"] * self.minutes_per_process()

    # ---- Reading ------------------------------------------------------------------------------
    def row(self, experiment, environment_name):
        """The summary's row of one environment in one stage, None where it has none."""
        rows = self.summary[(self.summary["experiment"] == experiment)
                            & (self.summary["environment"] == environment_name)]
        if self.case is not None:
            rows = rows[rows["case"].astype(str) == self.case]
        return None if rows.empty else rows.iloc[0]

    def unavailable(self, experiment, environment_name):
        """Why an environment was not measured (not applicable here, or its run failed)."""
        table = self.tables.get(experiment, pd.DataFrame())
        rows = table[table["environment"] == environment_name] if not table.empty else table
        if not rows.empty and rows["status"].ne("ok").all():
            return rows["reason"].dropna().iloc[0]
        prefix = f"runs/{experiment}/{environment_name}/"
        logs = os.path.dirname(experiments.run_log_file(
            experiments.logs_dir({"results": self.folder}), experiment, environment_name, 0))
        return next((why for run, why in self.not_measured.items() if run.startswith(prefix)),
                    f"no result: see {logs}/")

    # ---- The search ---------------------------------------------------------------------------
    def run(self):
        if self.replay:
            return self.search()
        with recovery.alone_on(self.folder):  # started again: recovers as `make run` does
            stored = self.stored("config.yaml")
            recovery.prepare(stored and config_check.validated(stored), self.folder)
            return self.search()

    def search(self):
        alone = [self.baseline, *self.knobs, *self.launchers]
        self.measure(self.bench, alone, self.baseline)
        ranked = []
        for name in [*self.knobs, *self.launchers]:
            row = self.row(self.bench, name)
            ranked.append({"stage": self.bench, "environment": name, "compared_with":
                           self.baseline, **self.effect(row, self.bench, name)})
        helped = sorted((r for r in ranked if r["verdict"] == "faster"
                         and r["environment"] in self.knobs), key=lambda r: r["ratio"])
        best, path, finished = search.ladder([r["environment"] for r in helped], self.specs,
                                             self.step, lambda: self.spent()
                                             + self.minutes_per_stage(2) <= self.minutes)
        best = best or self.baseline
        if not finished:
            tried = sum(1 for r in path if r["verdict"] != "not tried")
            say(f"the next step would go past {self.minutes:g} minutes: stopping here")
            self.notes.append(f"the budget of {self.minutes:g} minutes was spent after "
                              f"{tried} step(s): the rest of the knobs that helped alone were "
                              "not tried in combination (MINUTES=... for more)")
        final = f"{self.bench}_final"
        self.measure(final, list(dict.fromkeys([self.baseline, best, *self.launchers])),
                     self.baseline)
        return self.report(ranked, path, best, final)

    def step(self, best, combination):
        """Measure `combination` side by side with `best`: its row against it."""
        experiment = f"{self.bench}_step{len(self.stages)}"
        self.measure(experiment, [best, combination], best)
        return {"stage": experiment,
                **self.effect(self.row(experiment, combination), experiment, combination)}

    def effect(self, row, experiment, name):
        if row is None or pd.isna(row.get("ratio")):
            return {"verdict": "not measured", "reason": self.unavailable(experiment, name)}
        return {key: row[key] for key in ("median", "ratio", "ratio_low", "ratio_high",
                                          "verdict", "processes")}

    def versus(self, experiment, mine, theirs):
        """Ratio of two environments measured in the same stage, paired by round."""
        table = self.tables[experiment]
        table = table[table["seconds"].notna()]
        if self.case is not None:
            table = table[table["case"].astype(str) == self.case]
        groups = {name: stats.processes_of(table[table["environment"] == name])
                  for name in (mine, theirs)}
        if not all(groups.values()):
            return {"verdict": "not measured"}
        ratio, low, high = stats.ratio_interval(groups[mine], groups[theirs])
        floor = self.summary[self.summary["experiment"] == experiment]["noise_floor"].max()
        threshold = self.user.get("statistics", {}).get("threshold", 0.05)
        return {"ratio": ratio, "ratio_low": low, "ratio_high": high,
                "verdict": stats.verdict(low, high, floor, threshold)}

    def report(self, ranked, path, best, final):
        rows = [{"kind": "alone", **r} for r in ranked if r["environment"] in self.knobs]
        rows += [{"kind": "launcher", **r} for r in ranked if r["environment"] in self.launchers]
        rows += [{"kind": "step", "stage": "-", **r} for r in path]
        if best != self.baseline:
            rows.append({"kind": "best", "stage": final, "environment": best,
                         "compared_with": self.baseline,
                         **self.effect(self.row(final, best), final, best)})
            for launcher in self.launchers:
                rows.append({"kind": "best vs launcher", "stage": final, "environment": best,
                             "compared_with": launcher, **self.versus(final, best, launcher)})
        table = pd.DataFrame(rows)
        table.to_csv(os.path.join(self.folder, "search.csv"), index=False)
        # the thread count the workflow ran it with, where the combination does not set one
        spec = {"threads": self.section["threads"], **self.specs.get(best, {})}
        line, code, needs = search.recipe(spec, self.section["runtime"])
        # run from the repository's folder, with the user's own python
        check, _, _ = search.recipe(spec, self.section["runtime"], command=(
            f"python scripts/time_step.py {shlex.quote(self.section['module'])} --params "
            f"{shlex.quote(json.dumps(self.section.get('params', {})))}"
            + (f" --precision {spec['precision']}" if spec.get("precision") else "")
            + (f" --case {self.case}" if self.case else "")))
        entry = yaml.safe_dump({"environments": {best: {
            k: v for k, v in search.configured(spec, best).items()
            if k not in ("group", "groups")}}}, sort_keys=False) if best != self.baseline else ""
        text = [f"best: {best}"]
        if best != self.baseline:
            found = table[table["kind"] == "best"].iloc[0]
            text.append(f"  {found['ratio']:.2f}x [{found['ratio_low']:.2f}, "
                        f"{found['ratio_high']:.2f}] the time of {self.baseline} "
                        f"({found['verdict']})")
            for r in table[table["kind"] == "best vs launcher"].itertuples():
                if r.verdict != "not measured":
                    text.append(f"  {r.ratio:.2f}x [{r.ratio_low:.2f}, {r.ratio_high:.2f}] the "
                                f"time of {r.compared_with}'s settings ({r.verdict})")
            text += ["", "the line:", f"  {line}", *[f"  and in the code: {c}" for c in code],
                     *[f"  and installed: {n}" for n in needs], "",
                     "checked by hand (the step timed outside the workflow, in this "
                     "repository's folder):", f"  {check}",
                     "", "the config entry:", *["  " + x for x in entry.splitlines()]]
        else:
            text.append(f"  no knob made it faster than {self.baseline} for sure")
        text += [f"note: {note}" for note in self.notes]
        with open(os.path.join(self.folder, "recipe.txt"), "w") as out:
            out.write("\n".join(text) + "\n")
        self.draw()
        shown = table.reindex(columns=["kind", "environment", "compared_with", "ratio",
                                       "ratio_low", "ratio_high", "verdict", "reason"])
        shown["reason"] = shown["reason"].fillna("").str.slice(0, 60)
        print(shown.to_string(index=False, float_format=lambda v: f"{v:.2f}"))
        print("\n".join(text))
        say(f"written: {self.folder}/search.csv, recipe.txt, search.png, report.html")


def module_config(module):
    """A config for a module alone: its runtime the framework it imports."""
    from knobs import finder

    path = finder.file_of(module)
    with open(path) as source:
        text = source.read()
    runtime = next((name for name in ("tensorflow", "torch") if f"import {name}" in text),
                   "numpy")
    name = os.path.splitext(os.path.basename(path))[0]
    if name == "__init__":
        name = os.path.basename(os.path.dirname(path))
    return {"benchmarks": {name: {"module": module, "runtime": runtime}}}, name


def main(argv=None):
    args = parse_args(argv)
    if args.config:
        with open(args.config) as source:
            config = yaml.safe_load(source) or {}
        bench = args.bench
        if bench not in config.get("benchmarks", {}):
            sys.exit(f"search: {bench!r} is not a benchmark of {args.config}; its benchmarks: "
                     f"{', '.join(config.get('benchmarks', {})) or 'none'}")
    else:
        try:
            config, bench = module_config(args.bench)
        except FileNotFoundError as error:
            sys.exit(f"search: {error} (or name a benchmark of a config: CONFIG=my.yaml)")
    try:
        Search(config, bench, args.minutes, args.replay).run()
    except (config_check.ConfigError, recovery.StillRunning) as error:
        sys.exit(f"search: {error}")


if __name__ == "__main__":
    main()
