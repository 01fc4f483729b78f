"""What a config asks for: every experiment's configurations, where their results go, the
command that measures each, and the order the processes run in. One source for the Snakemake
rules (rules/common.smk) and for scripts/run_without_snakemake.py, which runs the same
commands on a node without Snakemake.

An experiment is a benchmark module (knobs/benchmarks/) run over configurations: each
configuration is one benchmark, its params, an environment and a device, measured in `reps`
fresh processes. A section under `benchmarks:` is a grid of params, environments and devices;
a benchmark that owns a section of its own (`copy:`, `hourglass:`) says how that section
expands (its `experiments(config)`). Plain Python (no framework, no Snakemake); `config` is
validated, defaults filled in.
"""

import itertools
import json
import os
import random
import shlex
from dataclasses import dataclass, field, replace
from pathlib import Path

from knobs import finder, kinds, runtimes
from knobs.results import RUN_FILE, RUN_SUFFIX

SCRIPTS = Path(__file__).resolve().parent.parent
RUN_BENCHMARK = SCRIPTS / "run_benchmark.py"
TWIN = ".twin"  # the A/A twin of a baseline configuration: glibc.twin runs glibc again
GRID_FIGURE = SCRIPTS.parent / "report" / "grid_figure.rst"  # its caption, `{name}` its name


def run_file(results, experiment, configuration, rep):
    """Where one measured process's result lies (with "{...}" for each part: the rule's
    output pattern)."""
    return f"{results}/runs/{experiment}/{configuration}/" + RUN_FILE.format(rep=rep)


def run_log_file(logs, experiment, configuration, rep):
    """Where that process's log lies in a folder of logs (the rule's log pattern likewise)."""
    return f"{logs}/benchmark_run/{experiment}/{configuration}/rep{rep}.log"


def evidence_log_file(logs, experiment, name):
    """Where the log of an experiment's evidence lies in a folder of logs."""
    return f"{logs}/benchmark_evidence/{experiment}/{name}.log"


@dataclass(frozen=True)
class Configuration:
    """One thing measured: a benchmark with its params, under an environment, on a device."""

    experiment: str
    key: tuple  # ((column, value), ...): names the configuration; its values make its path
    benchmark: str  # built-in benchmark or a .py file
    params: dict = field(hash=False, compare=False)
    environment: str = "glibc"  # the environment it is launched in (a twin's is its baseline's)
    device: str = "cpu"
    runtime: str = "numpy"  # .venv-<runtime> / envs/<runtime>.yaml
    reps: int = 3
    warmup: int = 1
    samples: int = 10
    threads: int = 1
    order: str = "given"
    trace: bool = False
    needs: tuple = ()  # modules it imports (a GPU node without them skips it)
    gpu_library: str = None  # on a GPU, the library that must see it

    @property
    def path(self):
        return "/".join(str(value) for _, value in self.key)

    @property
    def labels(self):
        return dict(self.key)

    def run(self, results, rep):
        return run_file(results, self.experiment, self.path, rep)

    def trace_file(self, results, rep):
        return f"{results}/traces/{self.experiment}/{self.path}/rep{rep}.json"


@dataclass(frozen=True)
class Evidence:
    """Text about what a benchmark compiled or ran (its graph, its profile), not a timing."""

    experiment: str
    name: str
    configuration: Configuration
    devices: tuple

    def file(self, results):
        return f"{results}/evidence/{self.experiment}/{self.name}.txt"


@dataclass
class Experiment:
    name: str
    case: str  # the table's column for a benchmark's case (batch, phase, case)
    baseline: dict  # key values that name the baseline; the other keys are matched
    configurations: list
    evidence: list = field(default_factory=list)
    needs: tuple = ()  # experiments whose tables this one's table reads
    module: str = None  # a user's benchmark file: its runs rerun when it changes
    sizes: tuple = ()  # table columns that must match too for two samples to be comparable
    reference: bool = False  # a measurement other tables use (a peak, a fault's cost): no verdicts
    plugin: str = None  # the benchmark module whose table_columns and draw apply (None: generic)
    settings: dict = field(default_factory=dict)  # what those hooks need of the config
    figures: dict = field(default_factory=dict)  # {figure name: its caption (reStructuredText)}
    table_caption: str = None  # what its table holds beyond every table's columns
    # pairs whose ratio gets a verdict beyond `vs baseline`: [{kind, label, configuration,
    # reference}], configuration and reference each {column: value} of some of its labels
    comparisons: list = field(default_factory=list)

    def keys(self):
        """The table columns that name one measured thing: a configuration's case."""
        labels = [k for k, _ in self.configurations[0].key] if self.configurations else []
        return ["experiment", *labels, self.case, *self.sizes]


def results_dir(config):
    return config.get("results", "results")


def logs_dir(config):
    """Each result set's logs apart, so that runs of two configs never write one log file."""
    return f"logs/{results_dir(config).strip('/')}"


def run_log(config, run):
    """The log of the process that writes the result file `run` (rules/benchmarks.smk)."""
    under = os.path.relpath(run, results_dir(config))  # runs/<experiment>/.../rep<k>.json.gz
    _, experiment, path = under.removesuffix(RUN_SUFFIX).split(os.sep, 2)
    configuration, rep = path.rsplit(os.sep, 1)
    return run_log_file(logs_dir(config), experiment, configuration, rep.removeprefix("rep"))


# ---- Each experiment's configurations -------------------------------------------------------
def grid_experiment(config, name):
    """A section under `benchmarks:`: its module under every environment, on every device, for
    every combination of `grid`."""
    section = config["benchmarks"][name]
    grid = section.get("grid", {})
    baseline = section["baseline"]
    baseline = baseline if isinstance(baseline, dict) else {"environment": baseline}
    runtime = section["runtime"]
    on_gpu = runtime in runtimes.GPU_LIBRARIES
    measured = [
        Configuration(
            name, (*zip(grid, values), ("environment", environment), ("device", device)),
            section["module"], {**section.get("params", {}), **dict(zip(grid, values))},
            environment, device, runtime, section["reps"], section["warmup"],
            section["samples"], section["threads"], section["order"], section["trace"],
            needs=(runtime,) if on_gpu else (),
            gpu_library=runtime if device == "gpu" and on_gpu else None)
        for values in itertools.product(*grid.values())
        for environment in section["environments"] for device in section["devices"]]
    measured += twins(config, measured, baseline)
    sizes = tuple(k for k, v in section.get("params", {}).items()
                  if isinstance(v, (str, int, float, bool)))
    return Experiment(name, "case", baseline, measured,
                      module=section["module"] if finder.is_path(section["module"]) else None,
                      sizes=sizes,
                      figures={name: GRID_FIGURE.read_text().replace("{name}", name)})


def twins(config, measured, baseline):
    """The A/A twin of every baseline configuration: the same knobs measured again as a
    configuration of its own, in the same rounds, so its ratio to the baseline is the noise
    floor no knob's effect may hide in."""
    if not config["statistics"]["aa"]:
        return []
    found = []
    for configuration in measured:
        labels = configuration.labels
        if all(labels.get(k) == v for k, v in baseline.items()):
            key = tuple((k, f"{v}{TWIN}" if k == "environment" else v)
                        for k, v in configuration.key)
            found.append(Configuration(**{**vars(configuration), "key": key}))
    return found


def experiments(config):
    """{name: Experiment} of everything the config asks for, in a fixed order: each section a
    benchmark owns (by name), then the sections under `benchmarks:`."""
    found = {}
    for section, module in finder.sections().items():
        if section in config:
            found.update((x.name, x) for x in module.experiments(config))
    for name in config.get("benchmarks", {}):
        found[name] = grid_experiment(config, name)
    rounds, more = config.get("rounds"), config.get("more_reps", {})
    for experiment in found.values():  # the budget's rounds, then more for some (resolve.py)
        experiment.configurations = [
            replace(c, reps=max(min(c.reps, rounds or c.reps),
                                more.get(f"{experiment.name}/{c.path}", 0)))
            for c in experiment.configurations]
    skipped = not_measured(config)
    for experiment in found.values():
        experiment.configurations = [c for c in experiment.configurations
                                     if not all(c.run(".", rep)[2:] in skipped
                                                for rep in range(c.reps))]
        experiment.evidence = [e for e in experiment.evidence
                               if e.file(".")[2:] not in skipped]
    found = {name: x for name, x in found.items() if x.configurations}
    for experiment in found.values():  # a table it would read but nothing was measured for
        experiment.needs = tuple(name for name in experiment.needs if name in found)
    return found


# ---- What each table step needs of the config (the rules' params) ---------------------------
def table_settings(experiment):
    """The table step's: its case column, its benchmark's hooks and the settings they read."""
    return {"case": experiment.case, "plugin": experiment.plugin, **experiment.settings}


def summary_settings(experiments):
    """Per experiment that gets verdicts: the columns that name one measured thing (its labels,
    its case, the sizes that must match), and its baseline."""
    return {
        name: {
            "keys": x.keys(),
            "labels": x.keys()[1:x.keys().index(x.case)],
            "case": x.case,
            "baseline": x.baseline,
            # processes of two kinds drawn at random (knobs/stats.py); a rotated case order
            # (the hourglass's phases) makes kinds of its own, balanced and paired by design
            "kinds": all(c.order != "rotated" for c in x.configurations),
        }
        for name, x in experiments.items() if not x.reference}


def comparisons(experiments):
    """Per experiment, the pairs its section names for verdicts beyond `vs baseline`."""
    return {name: x.comparisons for name, x in experiments.items() if x.comparisons}


@dataclass(frozen=True)
class Job:
    configuration: Configuration
    rep: int

    def run(self, results):
        return self.configuration.run(results, self.rep)


def not_measured(config):
    """The result files the config's `not_measured` lists; a plain `rep<k>.json`, as a set
    made before its runs were compressed names one, stands for its compressed file."""
    return {path + ".gz" if path.endswith(".json") else path
            for path in config.get("not_measured", [])}


def jobs(config):
    """Every process to run: each configuration's reps, less what `not_measured` lists."""
    skipped = not_measured(config)
    return [Job(c, rep) for experiment in experiments(config).values()
            for c in experiment.configurations for rep in range(c.reps)
            if c.run(".", rep)[2:] not in skipped]


def schedule(found):
    """The order processes run in, as {run path: position}: in rounds, round k holding rep k of
    every configuration in a shuffled order (a fixed permutation per round), so that a slow
    minute of the machine falls on all configurations alike rather than on a few."""
    rounds = {}
    for job in found:
        rounds.setdefault(job.rep, []).append(job)
    order = []
    for rep in sorted(rounds):
        members = sorted(rounds[rep], key=lambda job: job.run(""))
        random.Random(f"round {rep}").shuffle(members)
        order += members
    return {job.run(""): position for position, job in enumerate(order)}


# ---- Commands -------------------------------------------------------------------------------
def environment_words(config, name):
    """run_benchmark.py's words for an environment: its knobs, what must be proven by effect,
    and what the caller's environment may pass in."""
    spec, files = config["environments"][name], config.get("kinds", [])
    words = ["--environment", name, *[word for f in files for word in ("--kinds", f)]]
    for kind in kinds.load(tuple(files)):  # each kind's words, in the catalog's order
        words += kind.words(spec.get(kind.key))
    required = spec.get("require_effect", False)
    for knob in (["all"] if required is True else required or []):
        words += ["--require-effect", knob]
    for variable in config.get("pass_env", []):
        words += ["--pass-env", variable]
    return words


def _common_words(config, c):
    labels = [word for key, value in c.key for word in ("--label", f"{key}={value}")]
    return ["--experiment", c.experiment, *labels, "--benchmark", c.benchmark,
            "--params", json.dumps(c.params, sort_keys=True),
            *environment_words(config, c.environment), "--threads", c.threads]


def command(config, job, python):
    """The command that measures `job`, less `--out <its run path>`."""
    c, results = job.configuration, results_dir(config)
    words = [python, RUN_BENCHMARK, *_common_words(config, c), "--device", c.device,
             "--rep", job.rep, "--warmup", c.warmup, "--samples", c.samples, "--order", c.order]
    if c.trace:
        words += ["--trace", c.trace_file(results, job.rep)]
    return [str(word) for word in words]


def evidence_command(config, evidence, python):
    """The command that writes `evidence`, less `--out <its file>`."""
    return [str(word) for word in [python, RUN_BENCHMARK,
                                   *_common_words(config, evidence.configuration),
                                   "--describe", *evidence.devices]]


def quoted(words):
    """Shell words, each quoted: a value such as `; touch X` stays one argument, runs nothing."""
    return " ".join(shlex.quote(str(word)) for word in words)
