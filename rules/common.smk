import sys
from pathlib import Path

from snakemake.exceptions import WorkflowError
from snakemake.settings.types import DeploymentMethod

SCRIPTS = Path(workflow.basedir) / "scripts"
sys.path.insert(0, str(SCRIPTS))

from knobs import experiments, machine, runtimes, search
from knobs.config_check import ConfigError, validated

# ---- Validation: before any job starts, every error names its key ---------------------------
if not config:
    raise WorkflowError(
        "no config: run from the repository (profiles/default names config/config.yaml) "
        "or pass --configfile config/<name>.yaml"
    )
try:
    # the schema's defaults and the built-in environments it uses, filled in where it is
    config.update(validated(config))
except ConfigError as error:
    raise WorkflowError(str(error))


# Where results are read and written: `results` by default; `results/paper` holds the
# shipped run, whose figures rebuild from its tables without running any benchmark.
RESULTS = experiments.results_dir(config)
LOGS = experiments.logs_dir(config)
EXPERIMENTS = experiments.experiments(config)
JOBS = {job.run(RESULTS): job for job in experiments.jobs(config)}
# Processes run in rounds (rep k of every configuration, shuffled): highest priority first.
POSITION = experiments.schedule(JOBS.values())
EVIDENCE = {e.file(RESULTS): e for x in EXPERIMENTS.values() for e in x.evidence}
# {figure name: its experiment}: every figure a config's experiments draw
FIGURES = {f: name for name, x in EXPERIMENTS.items() for f in x.figures}


# ---- Where each benchmark's code runs -------------------------------------------------------
USE_CONDA = DeploymentMethod.CONDA in workflow.deployment_settings.deployment_method


def runtime_python(runtime):
    """The interpreter of a runtime: the conda env's, or its virtual env's."""
    if USE_CONDA:
        return "python"
    venv = runtimes.VENVS.get(runtime, runtimes.DEFAULT_VENV)
    python = Path(workflow.basedir) / venv / "bin" / "python"
    if not python.exists():
        raise WorkflowError(
            f"{python} does not exist: run `make setup` (or use --use-conda) first"
        )
    return str(python)


def run_path(wildcards):
    return experiments.run_file(
        RESULTS, wildcards.experiment, wildcards.configuration, wildcards.rep
    )


def job_of(wildcards):
    return JOBS[run_path(wildcards)]


def run_command(wildcards):
    job = job_of(wildcards)
    python = runtime_python(job.configuration.runtime)
    return experiments.quoted(experiments.command(config, job, python))


def conda_env_of(configuration):
    return str(Path(workflow.basedir) / "envs" / f"{configuration.runtime}.yaml")


def gpus_of(configuration):
    return int(configuration.device == "gpu")


def run_conda_env(wildcards):
    return conda_env_of(job_of(wildcards).configuration)


def run_priority(wildcards):
    return len(POSITION) - POSITION[run_path(wildcards)[len(RESULTS) :]]


def run_threads(wildcards):
    """What a cluster job asks for: the benchmark's threads (its process sets them itself)."""
    return job_of(wildcards).configuration.threads


def run_gpus(wildcards):
    return gpus_of(job_of(wildcards).configuration)


def run_module(wildcards):
    """A user's benchmark file: editing it reruns its measurements (one named by its name is
    the workflow's own code, as its rules are)."""
    path = EXPERIMENTS[wildcards.experiment].module
    return [path] if path else []


def evidence_of(wildcards):
    return EVIDENCE[f"{RESULTS}/evidence/{wildcards.experiment}/{wildcards.name}.txt"]


def evidence_command(wildcards):
    evidence = evidence_of(wildcards)
    python = runtime_python(evidence.configuration.runtime)
    return experiments.quoted(experiments.evidence_command(config, evidence, python))


def evidence_conda_env(wildcards):
    return conda_env_of(evidence_of(wildcards).configuration)


def evidence_gpus(wildcards):
    return gpus_of(evidence_of(wildcards).configuration)


# ---- Tables, figures, the summary -----------------------------------------------------------
def runs_of(experiment):
    return [
        path for path, job in JOBS.items() if job.configuration.experiment == experiment
    ]


def table_inputs(wildcards):
    experiment = EXPERIMENTS[wildcards.experiment]
    return {
        "runs": runs_of(wildcards.experiment),
        **{
            f"{name}_table": f"{RESULTS}/tables/{name}.csv" for name in experiment.needs
        },
    }


def ops_table_inputs(wildcards):
    return runs_of(wildcards.experiment)


def table_params(wildcards):
    return experiments.table_settings(EXPERIMENTS[wildcards.experiment])


def table_caption(wildcards):
    return EXPERIMENTS[wildcards.experiment].table_caption or ""


def traced(experiment):
    return any(c.trace for c in EXPERIMENTS[experiment].configurations)


def figure_experiment(wildcards):
    return EXPERIMENTS[FIGURES[wildcards.figure]]


def figure_inputs(wildcards):
    """A figure reads its experiment's table, the summary and, where traced, its op table."""
    name = FIGURES[wildcards.figure]
    return {
        "table": f"{RESULTS}/tables/{name}.csv",
        "summary": f"{RESULTS}/tables/summary.csv",
        **({"ops": f"{RESULTS}/tables/{name}_ops.csv"} if traced(name) else {}),
    }


def figure_params(wildcards):
    experiment = figure_experiment(wildcards)
    return {
        "experiment": experiment.name,
        "plugin": experiment.plugin,
        "settings": experiment.settings,
        "labels": summary_params()[experiment.name]["labels"],
    }


def figure_caption(wildcards):
    return figure_experiment(wildcards).figures[wildcards.figure]


def figure_category(wildcards):
    return FIGURES[wildcards.figure]


def search_baseline(wildcards):
    return config["benchmarks"][config["search_of"]]["baseline"]


def search_caption(wildcards, input):
    return search.caption(input.ranked, input.recipe)


def summary_inputs(wildcards=None):
    return {
        f"{name}_table": f"{RESULTS}/tables/{name}.csv"
        for name, x in EXPERIMENTS.items()
        if not x.reference
    }


def summary_params():
    return experiments.summary_settings(EXPERIMENTS)


def comparisons():
    return experiments.comparisons(EXPERIMENTS)


def _alternatives(names):
    return "|".join(sorted(map(str, names))) or "no-experiment"


wildcard_constraints:
    experiment=_alternatives(EXPERIMENTS),
    figure=_alternatives(FIGURES),
    configuration=r"[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*",
    rep=r"\d+",


def get_final_output():
    return [
        *(f"{RESULTS}/tables/{name}.csv" for name in EXPERIMENTS),
        *(f"{RESULTS}/tables/{name}_ops.csv" for name in EXPERIMENTS if traced(name)),
        *(f"{RESULTS}/figures/{f}.{x}" for f in FIGURES for x in ("png", "svg")),
        *EVIDENCE,
        f"{RESULTS}/tables/summary.csv",
        f"{RESULTS}/tables/system.csv",
        f"{RESULTS}/tables/verdicts.csv",
        f"{RESULTS}/config_used.yaml",
        *([f"{RESULTS}/search.png"] if config.get("search_of") else []),
        *([f"{RESULTS}/tables/not_measured.csv"] if config["not_measured"] else []),
    ]


# ---- GPU jobs need a GPU: checked once the jobs to run are known, before any starts ---------
def gpu_jobs_without_gpu():
    """Jobs asking for a GPU that would run here, on a machine without one (a cluster
    executor sends them elsewhere; a dry run runs nothing)."""
    if not workflow.local_exec or workflow.remote_exec or workflow.subprocess_exec:
        return []
    jobs = [j for j in workflow.dag.needrun_jobs() if j.resources.get("gpu", 0) > 0]
    return jobs if jobs and not machine.gpus() else []


onstart:
    if jobs := gpu_jobs_without_gpu():
        raise WorkflowError(
            f"{len(jobs)} job(s) need a GPU (e.g. {jobs[0]}: {', '.join(map(str, jobs[0].output))}), "
            "but this machine has none (nvidia-smi found no GPU). Run them where there is one "
            "(--profile profiles/slurm, or scripts/run_without_snakemake.sh on a GPU node), or "
            "take gpu out of the config's devices; --dry-run shows the plan anywhere."
        )
