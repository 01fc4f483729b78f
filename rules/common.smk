import sys
from pathlib import Path

from snakemake.exceptions import WorkflowError
from snakemake.utils import validate
from snakemake.settings.types import DeploymentMethod

SCRIPTS = Path(workflow.basedir) / "scripts"
sys.path.insert(0, str(SCRIPTS))

from knobs import frameworks, jobs, machine
from knobs.config_check import ConfigError, check_references, check_schema
from knobs.hourglass import plan as hourglass_plan

SCHEMA = Path(workflow.basedir) / "config" / "schema.yaml"


# ---- Validation: before any job starts, every error names its key ---------------------------
if not config:
    raise WorkflowError(
        "no config: run from the repository (profiles/default names config/config.yaml) "
        "or pass --configfile config/<name>.yaml"
    )
try:
    check_schema(config, SCHEMA)
    validate(config, schema=str(SCHEMA))  # fills in the schema's defaults
    check_references(config)
except ConfigError as error:
    raise WorkflowError(str(error))


# Where results are read and written: `results` by default; `results/paper` holds the
# shipped run, whose figures rebuild from its tables without running any benchmark.
RESULTS = jobs.results_dir(config)


# ---- Where each framework's code runs -------------------------------------------------------
USE_CONDA = DeploymentMethod.CONDA in workflow.deployment_settings.deployment_method


def runtime_python(wildcards, framework=None):
    """The interpreter of the framework's runtime: the conda env's, or its virtual env's."""
    if USE_CONDA:
        return "python"
    runtime = frameworks.RUNTIMES[framework or wildcards.framework]
    venv = frameworks.VENVS.get(runtime, frameworks.DEFAULT_VENV)
    python = Path(workflow.basedir) / venv / "bin" / "python"
    if not python.exists():
        raise WorkflowError(
            f"{python} does not exist: run `make setup` (or use --use-conda) first"
        )
    return str(python)


def runtime_conda_env(wildcards):
    runtime = frameworks.RUNTIMES[wildcards.framework]
    return str(Path(workflow.basedir) / "envs" / f"{runtime}.yaml")


def environment_launcher(wildcards, name=None):
    """with_environment.py and its arguments, shell-quoted, ending in `--`."""
    return jobs.quoted(jobs.launcher(config, name or wildcards.environment))


# ---- The copy experiment's runs -------------------------------------------------------------
COPY = config.get("copy", {})
COPY_RUN = jobs.COPY_RUN.replace("{results}", RESULTS)


def copy_run_files():
    if not COPY:
        return []
    return [path for _, paths in jobs.copy_run_groups(config) for path in paths]


def copy_run_outputs():
    """One process measures every batch of a (framework, environment, device, input, rep):
    imports and compilation are paid once, not per batch."""
    return expand(COPY_RUN, batch=COPY.get("batches", []), allow_missing=True)


def copy_run_args(wildcards):
    return jobs.quoted(
        jobs.copy_run_args(
            config,
            wildcards.framework,
            wildcards.environment,
            wildcards.device,
            wildcards.input,
            wildcards.rep,
        )
    )


def copy_evidence_args(wildcards):
    return jobs.quoted(jobs.copy_evidence_args(config, wildcards.framework))


def copy_outputs():
    if not COPY:
        return []
    return [
        f"{RESULTS}/tables/copy.csv",
        f"{RESULTS}/figures/copy_step.png",
        f"{RESULTS}/figures/copy_step.svg",
        *copy_evidence_files(),
    ]


def copy_evidence_files():
    return [
        jobs.COPY_EVIDENCE.format(results=RESULTS, framework=f)
        for f in jobs.copy_evidence_frameworks(config)
    ]


def copy_evidence_devices(wildcards):
    return jobs.copy_devices(config, wildcards.framework)


def _alternatives(names):
    return "|".join(sorted(map(str, names)))


# ---- The hourglass experiment's runs --------------------------------------------------------
HOURGLASS = config.get("hourglass", {})
HOURGLASS_RUN = jobs.HOURGLASS_RUN.replace("{results}", RESULTS)
HOURGLASS_TRACE = jobs.HOURGLASS_TRACE.replace("{results}", RESULTS)
HOURGLASS_PEAK = jobs.HOURGLASS_PEAK.replace("{results}", RESULTS)
HOURGLASS_PLAN = hourglass_plan.full_plan(HOURGLASS) if HOURGLASS else []


def hourglass_run_files():
    if not HOURGLASS:
        return []
    return [HOURGLASS_RUN.format(**run) for run in jobs.hourglass_runs(config)]


def hourglass_peak_files():
    if not HOURGLASS:
        return []
    return expand(
        HOURGLASS_PEAK, device=HOURGLASS["devices"], rep=range(HOURGLASS["reps"])
    )


def hourglass_run_args(wildcards):
    return jobs.quoted(
        jobs.hourglass_run_args(
            config,
            wildcards.framework,
            wildcards.variant,
            wildcards.environment,
            wildcards.device,
            wildcards.rep,
        )
    )


def peak_args(wildcards):
    return jobs.quoted(jobs.peak_args(config, wildcards.device))


def hourglass_outputs():
    if not HOURGLASS:
        return []
    return [
        f"{RESULTS}/tables/hourglass.csv",
        f"{RESULTS}/tables/hourglass_ops.csv",
        f"{RESULTS}/figures/hourglass_ladder.png",
        f"{RESULTS}/figures/hourglass_ops.png",
    ]


def summary_inputs(wildcards=None):
    return {
        f"{experiment}_table": f"{RESULTS}/tables/{experiment}.csv"
        for experiment in ("copy", "hourglass")
        if experiment in config
    }


def summary_baselines():
    """Per experiment, the knobs that name its baseline (the other knobs are matched)."""
    baselines = {}
    if COPY:
        baselines["copy"] = COPY["baseline"]
    if HOURGLASS:
        baselines["hourglass"] = HOURGLASS["baseline"]
    return baselines


wildcard_constraints:
    framework=_alternatives(frameworks.RUNTIMES),
    environment=_alternatives(config["environments"]),
    device="cpu|gpu",
    input="random|zeros",
    variant=r"[A-Za-z0-9_]+(-[A-Za-z0-9_]+)*",
    batch=r"\d+",
    rep=r"\d+",


def get_final_output():
    return (
        copy_outputs()
        + hourglass_outputs()
        + [
            f"{RESULTS}/tables/summary.csv",
            f"{RESULTS}/tables/system.csv",
            f"{RESULTS}/config_used.yaml",
        ]
    )


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
            "(--profile profiles/slurm, or scripts/gpu_paper.sh on a GPU node), or take gpu "
            "out of copy.devices / hourglass.devices; --dry-run shows the plan anywhere."
        )
