import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
SCRIPTS = REPO / "scripts"
PYTHON = REPO / ".venv" / "bin" / "python"
THEANO_PYTHON = REPO / ".venv-theano" / "bin" / "python"
SNAKEFMT = REPO / ".venv" / "bin" / "snakefmt"
TINY = REPO / "tests" / "configs" / "tiny.yaml"
sys.path.insert(0, str(SCRIPTS))
sys.path.append(str(REPO))  # the studies' own modules: studies.<study>....

from knobs import workflow  # noqa: E402
from knobs.workflow import AGGREGATING_RULES  # noqa: E402,F401


def run_benchmark(tmp_path, environment, extra=(), env=None, framework="numpy", python=PYTHON,
                  device="cpu", batches=(1,), samples=3):
    """run_benchmark.py timing a tiny copy under `environment` (its knobs in `extra`)."""
    out = tmp_path / f"{environment}.json"
    command = [str(python), str(SCRIPTS / "run_benchmark.py"), "--experiment", "copy",
               "--label", f"framework={framework}", "--label", f"environment={environment}",
               "--benchmark", "copy", "--params",
               json.dumps({"framework": framework, "batches": list(batches),
                           "image": [3, 16, 16], "input": "random"}),
               "--environment", environment, *extra, "--device", device, "--rep", "1",
               "--warmup", "1", "--samples", str(samples), "--order", "shuffled", "--out", str(out)]
    return subprocess.run(command, capture_output=True, text=True, env=env), out


def load_yaml(path):
    with open(path) as handle:
        return yaml.safe_load(handle)


def write_config(tmp_path, config, name="config.yaml"):
    path = tmp_path / name
    path.write_text(yaml.safe_dump(config))
    return path


def snakemake(workdir, *args, configfile=None, check=True):
    """Run the workflow's command line in `workdir` (results land there, not in the repo)."""
    command = workflow.command(*([configfile] if configfile else []), directory=workdir,
                               cores=None, extra=args)
    done = subprocess.run(command, capture_output=True, text=True, cwd=workdir)
    if check and done.returncode != 0:
        raise AssertionError(f"snakemake {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}")
    return done


def dry_run(configfile, workdir):
    """A dry run through Snakemake's Python API; raises on any config or DAG error."""
    from snakemake.api import SnakemakeApi
    from snakemake.settings.types import ConfigSettings, OutputSettings, ResourceSettings

    cwd = os.getcwd()
    try:
        with SnakemakeApi(OutputSettings(quiet={"all"})) as api:
            workflow = api.workflow(
                resource_settings=ResourceSettings(cores=1),
                config_settings=ConfigSettings(configfiles=[Path(configfile)]),
                snakefile=REPO / "Snakefile",
                workdir=Path(workdir),
            )
            workflow.dag().execute_workflow(executor="dryrun")
    finally:
        os.chdir(cwd)


@pytest.fixture(scope="session")
def tiny_run(tmp_path_factory):
    """The tiny config run end to end once, for every test that reads what it wrote (none
    may change it)."""
    workdir = tmp_path_factory.mktemp("tiny")
    done = snakemake(workdir, "--cores", "2", configfile=TINY)
    return workdir, done
