"""Every framework's identity function returns an equal copy that does not alias its input,
run as the workflow runs it (its own runtime, through the launcher)."""

import json
import subprocess

import pytest

from conftest import PYTHON, SCRIPTS, THEANO_PYTHON
from knobs import frameworks


@pytest.mark.parametrize("framework", sorted(frameworks.RUNTIMES))
def test_identity_returns_a_fresh_equal_copy(framework, tmp_path):
    python = THEANO_PYTHON if frameworks.RUNTIMES[framework] == "theano" else PYTHON
    outs = [tmp_path / "b1.json", tmp_path / "b3.json"]
    done = subprocess.run(
        [str(python), str(SCRIPTS / "with_environment.py"), "--name", "glibc", "--",
         str(python), str(SCRIPTS / "copy_run.py"), "--framework", framework,
         "--environment", "glibc", "--batches", "1", "3", "--image", "3", "16", "16",
         "--warmup", "1", "--calls", "3", "--rep", "1", "--out", *map(str, outs)],
        capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    for batch, out in zip((1, 3), outs):
        run = json.loads(out.read_text())
        assert run["batch"] == batch and run["bytes"] == batch * 3 * 16 * 16 * 4
        assert run["check"]["equal"] and not run["check"]["aliases_input"]
        assert run["check"]["fresh_output"] == (framework != "copyto")
        assert len(run["samples"]["seconds"]) == 3 == len(run["samples"]["minor_faults"])
        assert all(s > 0 for s in run["samples"]["seconds"])
        assert sorted(run["order"]) == [1, 3]
        assert run["knobs"]["name"] == "glibc" and run["machine"]["cpu"]


@pytest.mark.parametrize("framework", frameworks.WITH_GRAPH)
def test_graph_evidence_shows_a_copy_and_no_transfer(framework, tmp_path):
    python = THEANO_PYTHON if frameworks.RUNTIMES[framework] == "theano" else PYTHON
    out = tmp_path / "evidence.txt"
    done = subprocess.run(
        [str(python), str(SCRIPTS / "copy_evidence.py"), "--framework", framework,
         "--batch", "2", "--image", "3", "8", "8", "--out", str(out)],
        capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    text = out.read_text()
    assert "DeepCopy" in text
    assert not any(op in text for op in ("GpuFromHost", "HostFromGpu", "_Send", "_Recv"))


def test_copy_check_rejects_an_identity_that_returns_its_input():
    import numpy as np

    from copy_run import check_copy
    from knobs.frameworks import Identity

    same = Identity(call=lambda x: x, prepare=lambda x: x, to_numpy=lambda y: y, version="0")
    x = np.ones((2, 2), dtype=np.float32)
    with pytest.raises(RuntimeError, match="did not return a copy"):
        check_copy(np, same, x, x)
