"""Every framework's identity function returns an equal copy that does not alias its input,
run as the workflow runs it (its own runtime, through the launcher)."""

import json
import subprocess

import numpy as np
import pytest

from conftest import PYTHON, SCRIPTS, THEANO_PYTHON, run_benchmark
from knobs import machine
from knobs.benchmarks.copy import frameworks
from knobs.benchmarks.copy import CHECK_CHUNK
from knobs.results import read

ON_CPU = [f for f in sorted(frameworks.FRAMEWORKS) if "cpu" in frameworks.devices(f)]
GRAPHS_ON_CPU = [f for f, spec in frameworks.FRAMEWORKS.items()
                 if spec.graph and "cpu" in spec.devices]
GPU_CAPABLE = [f for f, spec in frameworks.FRAMEWORKS.items() if spec.gpu_library]
NO_GPU_HERE = pytest.mark.skipif(bool(machine.gpus()), reason="checks the machine without a GPU")


def python_of(framework):
    return THEANO_PYTHON if frameworks.FRAMEWORKS[framework].runtime == "theano" else PYTHON


@pytest.mark.parametrize("framework", ON_CPU)
def test_identity_returns_a_fresh_equal_copy(framework, tmp_path):
    done, out = run_benchmark(tmp_path, "glibc", framework=framework,
                              python=python_of(framework), batches=(1, 3))
    assert done.returncode == 0, done.stderr[-3000:]
    run = read(out, validate=False)
    assert sorted(run["order"]) == ["1", "3"] and run["status"] == "ok"
    for batch in (1, 3):
        case = run["cases"][str(batch)]
        assert case["info"]["batch"] == batch and case["info"]["bytes"] == batch * 3 * 16 * 16 * 4
        check = case["info"]["check"]
        assert case["info"]["check_temporary_bytes"] == CHECK_CHUNK  # the chunked check's
        assert check["equal"] and not check["aliases_input"]
        assert check["fresh_output"] == (not framework.endswith("copyto"))
        # a few KB: from a heap, never mapped, but where 2 MiB of alignment are asked on top
        served = case["info"]["served_from"].split()
        assert len(served) == 4, served
        assert all(s.startswith("mapped:") == (framework == "aligned_thp")
                   for s in served), served
        assert case["info"]["served_in_warmup"] == ""  # one warm-up call, the first: unwatched
        samples = case["samples"]
        assert len(samples["seconds"]) == 3 == len(samples["minor_faults"])
        assert all(s > 0 for s in samples["seconds"])
    assert run["knobs"]["name"] == "glibc" and run["machine"]["cpu"]


@pytest.mark.parametrize("framework", GRAPHS_ON_CPU)
def test_graph_evidence_shows_a_copy_and_no_transfer(framework, tmp_path):
    out = tmp_path / "evidence.txt"
    done = subprocess.run(
        [str(python_of(framework)), str(SCRIPTS / "run_benchmark.py"), "--experiment", "copy",
         "--label", f"framework={framework}", "--benchmark", "copy", "--params",
         json.dumps({"framework": framework, "batches": [1, 2], "image": [3, 8, 8],
                     "input": "random"}),
         "--environment", "glibc", "--describe", "cpu", "--out", str(out)],
        capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    text = out.read_text()
    assert "device: cpu" in text and "device: gpu" not in text
    assert ("aten::clone" if framework == "torch" else "DeepCopy") in text
    assert not any(op in text for op in ("GpuFromHost", "HostFromGpu", "_Send", "_Recv",
                                         "Memcpy", "MEMCPY"))


def test_copy_check_rejects_an_identity_that_returns_its_input():
    import numpy as np

    from knobs.benchmarks.copy import check_copy
    from knobs.benchmarks.copy.frameworks import Identity

    same = Identity(call=lambda x: x, prepare=lambda x: x, to_numpy=lambda y: y, version="0")
    x = np.ones((2, 2), dtype=np.float32)
    with pytest.raises(RuntimeError, match="did not return a copy"):
        check_copy(same, x, x)


def test_copy_check_compares_in_chunks_and_finds_a_difference_anywhere():
    from knobs.benchmarks.copy import equal_in_chunks

    x = np.random.default_rng(0).random((3, 5, 7000), dtype=np.float32)
    assert equal_in_chunks(x, x.copy(), chunk=1000)
    assert equal_in_chunks(x[:, ::2], x[:, ::2].copy(), chunk=1000)  # not contiguous
    for where in (0, 1000, -1):  # a chunk's first, a chunk boundary, the last
        y = x.copy()
        y.reshape(-1)[where] += 1
        assert not equal_in_chunks(x, y, chunk=1000)
    assert not equal_in_chunks(x, x[:2])
    y = x.copy()
    y[2, 4, 6998] += 1  # in a strided view's last row
    assert not equal_in_chunks(x[:, ::2], y[:, ::2], chunk=1000)
    assert equal_in_chunks(x[0, 0, ::3], x[0, 0, ::3].copy())  # 1-D, strided
    assert equal_in_chunks(x[0, 0, 0], y[0, 0, 0])  # 0-d
    assert not equal_in_chunks(x[0, 0, 0], x[0, 0, 0] + 1)


@pytest.mark.parametrize("compare", ["np.array_equal", "equal_in_chunks"])
def test_copy_check_leaves_glibcs_mmap_threshold_where_it_was(compare):
    """A whole-batch comparison's bools (2 MiB here) went to a mapping of their own and, freed,
    raised glibc's threshold past 1 MiB: a later 1 MiB block came from the heap. The chunked
    check's do not: that block is still mapped."""
    script = f"""
import numpy as np
from knobs import effects
from knobs.benchmarks.copy import equal_in_chunks
x, y = np.ones(1 << 21, dtype=np.float32), np.ones(1 << 21, dtype=np.float32)  # kept
assert {compare}(x, y)
libc = effects._libc()
before = libc.mallinfo2().hblkhd
block = libc.malloc(1 << 20)
print(libc.mallinfo2().hblkhd - before)
"""
    done = subprocess.run([str(PYTHON), "-c", script], capture_output=True, text=True,
                          env={"PYTHONPATH": str(SCRIPTS)})
    assert done.returncode == 0, done.stderr
    assert (int(done.stdout) >= 1 << 20) == (compare == "equal_in_chunks")


@NO_GPU_HERE
@pytest.mark.parametrize("framework", GPU_CAPABLE)
def test_gpu_copy_without_a_gpu_fails_at_once_and_writes_nothing(framework, tmp_path):
    done, out = run_benchmark(tmp_path, "glibc", framework=framework, device="gpu")
    assert done.returncode != 0
    library = frameworks.FRAMEWORKS[framework].gpu_library
    assert f"device gpu asked for, but {library} sees no GPU here" in done.stderr
    assert not out.exists()


def test_a_framework_refuses_a_device_it_does_not_run_on(tmp_path):
    done, out = run_benchmark(tmp_path, "glibc", framework="numpy", device="gpu")
    assert done.returncode != 0 and "numpy runs on cpu, not gpu" in done.stderr
    assert not out.exists()


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
    from knobs.benchmarks.copy.frameworks import _torch_transfer

    if problem is None:
        _torch_transfer.prove(pinned, non_blocking, copies, in_flight)
    else:
        with pytest.raises(KnobNotApplied, match=problem):
            _torch_transfer.prove(pinned, non_blocking, copies, in_flight)
