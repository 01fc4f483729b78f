import shlex
import sys
from pathlib import Path

from snakemake.exceptions import WorkflowError
from snakemake.utils import validate
from snakemake.settings.types import DeploymentMethod

SCRIPTS = Path(workflow.basedir) / "scripts"
sys.path.insert(0, str(SCRIPTS))

from knobs import frameworks
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
RESULTS = config.get("results", "results")


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
    """with_environment.py and its arguments, each shell-quoted: a value such as
    `; touch X` stays one argument and runs nothing."""
    name = name or wildcards.environment
    spec = config["environments"].get(name, {})
    words = [str(SCRIPTS / "with_environment.py"), "--name", name]
    for key, value in spec.get("env", {}).items():
        words += ["--set", f"{key}={value}"]
    for library in spec.get("preload", []):
        words += ["--preload", library]
    return " ".join(shlex.quote(word) for word in words) + " --"


# ---- The copy experiment's runs -------------------------------------------------------------
COPY = config.get("copy", {})
COPY_RUN = f"{RESULTS}/runs/copy/{{framework}}/{{environment}}/{{device}}/b{{batch}}/{{input}}/rep{{rep}}.json"


def copy_configurations():
    """(framework, environment) pairs: the grid asked for (an environment only with the
    frameworks it names, if it names any), plus the copy-limit references."""
    acts_on = lambda e: config["environments"][e].get("frameworks", COPY["frameworks"])
    pairs = {
        (f, e)
        for f in COPY["frameworks"]
        for e in COPY["environments"]
        if f in acts_on(e)
    }
    pairs |= {
        (f, e)
        for f in COPY["limit"]["frameworks"]
        for e in COPY["limit"]["environments"]
    }
    return sorted(pairs)


def copy_run_files():
    if not COPY:
        return []
    return [
        COPY_RUN.format(framework=f, environment=e, device=d, batch=b, input=i, rep=r)
        for f, e in copy_configurations()
        for d in COPY["devices"]
        for b in COPY["batches"]
        for i in COPY["inputs"]
        for r in range(COPY["reps"])
    ]


def copy_run_outputs():
    """One process measures every batch of a (framework, environment, device, input, rep):
    imports and compilation are paid once, not per batch."""
    return expand(COPY_RUN, batch=COPY.get("batches", []), allow_missing=True)


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
    graphs = [f for f in COPY.get("frameworks", []) if f in frameworks.WITH_GRAPH]
    return expand(f"{RESULTS}/evidence/copy/{{framework}}.txt", framework=graphs)


def _alternatives(names):
    return "|".join(sorted(map(str, names)))


# ---- The hourglass experiment's runs --------------------------------------------------------
HOURGLASS = config.get("hourglass", {})
HOURGLASS_RUN = f"{RESULTS}/runs/hourglass/{{framework}}/{{variant}}/{{environment}}/{{device}}/rep{{rep}}.json"
HOURGLASS_TRACE = f"{RESULTS}/traces/hourglass/{{framework}}/{{variant}}/{{environment}}/{{device}}/rep{{rep}}.json"
HOURGLASS_PEAK = f"{RESULTS}/runs/peak/{{device}}/rep{{rep}}.json"
HOURGLASS_PLAN = hourglass_plan.full_plan(HOURGLASS) if HOURGLASS else []


def hourglass_run_files():
    return [
        HOURGLASS_RUN.format(**entry, device=device, rep=rep)
        for entry in HOURGLASS_PLAN
        for device in HOURGLASS["devices"]
        for rep in range(HOURGLASS["reps"])
    ]


def hourglass_peak_files():
    if not HOURGLASS:
        return []
    return expand(
        HOURGLASS_PEAK, device=HOURGLASS["devices"], rep=range(HOURGLASS["reps"])
    )


def hourglass_size_args():
    if not HOURGLASS:
        return ""
    return " ".join(
        f"--{key} {HOURGLASS[key]}"
        for key in ("stacks", "resolution", "batch", "features", "joints")
    )


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
