"""The workflow on a real single-node Slurm (started and stopped here) through the executor
plugin and profiles/slurm, against the same config run locally. `make test-slurm` runs it."""

import os
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from conftest import REPO, snakemake

HERE = Path(__file__).parent
CONFIG = HERE / "tiny_slurm.yaml"
# What names a row: the knobs and the sample, not the measured values or the host.
ROW = ["experiment", "framework", "environment", "device", "batch", "input", "rep", "sample"]


@pytest.fixture(scope="module")
def slurm(tmp_path_factory):
    root = tmp_path_factory.mktemp("slurm")
    started = subprocess.run(["bash", str(HERE / "start.sh"), str(root)], capture_output=True,
                             text=True)
    assert started.returncode == 0, started.stderr
    yield root
    subprocess.run(["bash", str(HERE / "stop.sh"), str(root)], capture_output=True)


def test_slurm_profile_gives_the_same_table_as_the_local_profile(slurm, tmp_path):
    local, cluster = tmp_path / "local", tmp_path / "slurm"
    local.mkdir()
    cluster.mkdir()
    snakemake(local, "--cores", "1", configfile=CONFIG)
    # The plugin checks first after the initial wait, then 10 s later each time: a job here
    # (about 6 s from sbatch to its end) is seen done at the first check after 8 s; after
    # 1 s, only at the second, 12 s after sbatch.
    done = snakemake(cluster, "--profile", str(REPO / "profiles/slurm"),
                     "--slurm-init-seconds-before-status-checks", "8",
                     "--seconds-between-status-checks", "2", configfile=CONFIG)
    log = done.stdout + done.stderr
    assert "has been submitted with SLURM jobid" in log
    tables = [pd.read_csv(d / "results/tables/copy.csv") for d in (local, cluster)]
    assert list(tables[0].columns) == list(tables[1].columns)
    keys = [set(map(tuple, t[ROW].values)) for t in tables]
    assert keys[0] == keys[1] and len(keys[0]) > 0
    assert tables[1]["seconds"].gt(0).all() and tables[1]["limit_gbps"].notna().all()
    # every benchmark process went through sbatch
    submitted = log.count("has been submitted with SLURM jobid")
    assert submitted >= len(tables[1].groupby(["framework", "environment"]))
    assert not os.path.exists(cluster / "results/tables/hourglass.csv")
