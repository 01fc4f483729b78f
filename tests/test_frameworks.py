"""Every framework's identity function returns an equal copy that does not alias its input,
run as the workflow runs it (its own runtime, through the launcher)."""

import json
import subprocess

import pytest

from conftest import PYTHON, SCRIPTS, THEANO_PYTHON
from knobs import frameworks, machine


ON_CPU = [f for f in sorted(frameworks.RUNTIMES) if "cpu" in frameworks.devices(f)]
GRAPHS_ON_CPU = [f for f in frameworks.WITH_GRAPH if "cpu" in frameworks.devices(f)]
NO_GPU_HERE = pytest.mark.skipif(bool(machine.gpus()), reason="checks the machine without a GPU")


@pytest.mark.parametrize("framework", ON_CPU)
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


@pytest.mark.parametrize("framework", GRAPHS_ON_CPU)
def test_graph_evidence_shows_a_copy_and_no_transfer(framework, tmp_path):
    python = THEANO_PYTHON if frameworks.RUNTIMES[framework] == "theano" else PYTHON
    out = tmp_path / "evidence.txt"
    done = subprocess.run(
        [str(python), str(SCRIPTS / "copy_evidence.py"), "--framework", framework,
         "--batch", "2", "--image", "3", "8", "8", "--out", str(out)],
        capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    text = out.read_text()
    assert "device: cpu" in text and "device: gpu" not in text
    assert ("aten::clone" if framework == "torch" else "DeepCopy") in text
    assert not any(op in text for op in ("GpuFromHost", "HostFromGpu", "_Send", "_Recv",
                                         "Memcpy", "MEMCPY"))


def test_copy_check_rejects_an_identity_that_returns_its_input():
    import numpy as np

    from copy_run import check_copy
    from knobs.frameworks import Identity

    same = Identity(call=lambda x: x, prepare=lambda x: x, to_numpy=lambda y: y, version="0")
    x = np.ones((2, 2), dtype=np.float32)
    with pytest.raises(RuntimeError, match="did not return a copy"):
        check_copy(np, same, x, x)


@NO_GPU_HERE
@pytest.mark.parametrize("framework", sorted(frameworks.GPU))
def test_gpu_copy_without_a_gpu_fails_at_once_and_writes_nothing(framework, tmp_path):
    out = tmp_path / "b1.json"
    done = subprocess.run(
        [str(PYTHON), str(SCRIPTS / "with_environment.py"), "--name", "glibc", "--",
         str(PYTHON), str(SCRIPTS / "copy_run.py"), "--framework", framework,
         "--environment", "glibc", "--device", "gpu", "--batches", "1",
         "--image", "3", "8", "8", "--out", str(out)], capture_output=True, text=True)
    assert done.returncode != 0
    library = frameworks.GPU[framework]
    assert f"device gpu asked for, but {library} sees no GPU here" in done.stderr
    assert not out.exists()


def test_a_framework_refuses_a_device_it_does_not_run_on(tmp_path):
    done = subprocess.run(
        [str(PYTHON), str(SCRIPTS / "copy_run.py"), "--framework", "numpy", "--environment",
         "glibc", "--device", "gpu", "--batches", "1", "--out", str(tmp_path / "x.json")],
        capture_output=True, text=True)
    assert done.returncode == 2 and "numpy runs on cpu, not gpu" in done.stderr


@pytest.mark.parametrize("pinned, non_blocking, copies, in_flight, problem", [
    (False, False, ["Memcpy HtoD (Pageable -> Device)", "Memcpy DtoH (Device -> Pageable)"],
     None, None),
    (True, False, ["Memcpy HtoD (Pinned -> Device)", "Memcpy DtoH (Device -> Pinned)"],
     None, None),
    (True, False, ["Memcpy HtoD (Pageable -> Device)", "Memcpy DtoH (Device -> Pinned)"],
     None, "asked for pinned host memory"),
    (False, False, ["Memcpy HtoD (Pageable -> Device)"], None, "device-to-host"),
    (True, True, ["Memcpy HtoD (Pinned -> Device)", "Memcpy DtoH (Device -> Pinned)"],
     False, "non_blocking copies had finished"),
    (True, True, ["Memcpy HtoD (Pinned -> Device)", "Memcpy DtoH (Device -> Pinned)"],
     True, None),
])
def test_transfer_knobs_are_proven_from_the_copies_cuda_saw(pinned, non_blocking, copies,
                                                             in_flight, problem):
    """The proof of pinned / non_blocking, fed what the CUDA profiler names its copies."""
    from knobs.environment import KnobNotApplied
    from knobs.frameworks import _torch_transfer

    if problem is None:
        _torch_transfer.prove(pinned, non_blocking, copies, in_flight)
    else:
        with pytest.raises(KnobNotApplied, match=problem):
            _torch_transfer.prove(pinned, non_blocking, copies, in_flight)
