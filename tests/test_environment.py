"""Environments prove themselves: a knob that did not apply is a failed run, never a result."""

import json
import os
import subprocess

import pytest

from conftest import PYTHON, SCRIPTS
from knobs.environment import SPEC_VARIABLE, launch_env

TCMALLOC = "libtcmalloc.so.4"


def copy_run(tmp_path, environment, launcher_args=None, env=None):
    """copy_run.py on a tiny batch, through the launcher unless launcher_args is None."""
    out = tmp_path / "result.json"
    command = [str(PYTHON), str(SCRIPTS / "copy_run.py"), "--framework", "numpy",
               "--environment", environment, "--batches", "1", "--image", "3", "8", "8",
               "--warmup", "0", "--calls", "2", "--out", str(out)]
    if launcher_args is not None:
        command = [str(PYTHON), str(SCRIPTS / "with_environment.py"), "--name", environment,
                   *launcher_args, "--", *command]
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    return done, out


def test_missing_preload_is_a_failed_run_naming_environment_and_library(tmp_path):
    done, out = copy_run(tmp_path, "lie", ["--preload", "libdoesnotexist.so.1"])
    assert done.returncode != 0
    assert "environment 'lie'" in done.stderr and "libdoesnotexist.so.1" in done.stderr
    assert not out.exists()


def test_missing_tcmalloc_names_the_package_to_install(tmp_path):
    done, _ = copy_run(tmp_path, "tc", ["--preload", "/nonexistent/libtcmalloc.so.4"])
    assert done.returncode != 0 and "libgoogle-perftools4" in done.stderr


def test_preload_that_the_loader_ignored_is_caught(tmp_path):
    """The spec claims a preload the process does not have (as when ld.so ignores one)."""
    spec = launch_env("tcmalloc", {}, [TCMALLOC])[SPEC_VARIABLE]
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    env[SPEC_VARIABLE] = spec
    done, out = copy_run(tmp_path, "tcmalloc", env=env)
    assert done.returncode != 0
    assert "not mapped" in done.stderr and "tcmalloc" in done.stderr
    assert not out.exists()


def test_tcmalloc_preload_is_mapped_and_recorded(tmp_path):
    done, out = copy_run(tmp_path, "tcmalloc", ["--preload", TCMALLOC])
    assert done.returncode == 0, done.stderr
    knobs = json.loads(out.read_text())["knobs"]
    (preload,) = knobs["preloads"]
    assert preload["requested"] == TCMALLOC and preload["mapped"]
    assert "libtcmalloc" in os.path.basename(preload["path"])
    assert preload["path"] in knobs["allocator_libraries"]


def test_benchmark_refuses_to_run_without_the_launcher(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != SPEC_VARIABLE}
    done, out = copy_run(tmp_path, "glibc", env=env)
    assert done.returncode != 0 and "with_environment.py" in done.stderr
    assert not out.exists()


def test_label_must_match_the_launched_environment(tmp_path):
    done, out = copy_run(tmp_path, "glibc", ["--set", "X=1"])
    assert done.returncode == 0  # same name: fine
    command_env = launch_env("other", {}, [])
    done, out = copy_run(tmp_path, "glibc", env={**os.environ, **command_env})
    assert done.returncode != 0 and "labelled 'glibc'" in done.stderr


PROVE = """
import json, os, sys
sys.path.insert(0, {scripts!r})
from knobs.environment import KnobNotApplied, prove
environ = dict(os.environ, **json.loads(sys.argv[1]))
try:
    print(json.dumps(prove(environ=environ)))
except KnobNotApplied as error:
    sys.exit(str(error))
"""


def prove_in_child(claimed, actual):
    """prove() in a fresh process started with `actual`, while `claimed` says otherwise."""
    spec = launch_env("probe", claimed, [], base={})[SPEC_VARIABLE]
    env = {**os.environ, **actual}
    env.pop("LD_PRELOAD", None)
    return subprocess.run([str(PYTHON), "-c", PROVE.format(scripts=str(SCRIPTS)),
                           json.dumps({**claimed, SPEC_VARIABLE: spec})],
                          capture_output=True, text=True, env=env)


@pytest.mark.parametrize("variable,value", [
    ("MALLOC_MMAP_THRESHOLD_", "1073741824"),
    ("NUMPY_MADVISE_HUGEPAGE", "0"),
    ("PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION", "python"),
    ("TF_ENABLE_ONEDNN_OPTS", "0"),
])
def test_variable_seen_too_late_has_no_effect_and_fails(variable, value):
    """A variable present in os.environ but absent when the process started (the pyperf
    lesson) is caught by observing its effect, not just its value."""
    late = prove_in_child({variable: value}, actual={})
    assert late.returncode != 0 and "has no effect" in late.stderr
    on_time = prove_in_child({variable: value}, actual={variable: value})
    assert on_time.returncode == 0, on_time.stderr


def test_wrong_value_fails():
    done = subprocess.run(
        [str(PYTHON), "-c", PROVE.format(scripts=str(SCRIPTS)),
         json.dumps({"KNOB": "2", SPEC_VARIABLE: launch_env("probe", {"KNOB": "1"}, [],
                                                             base={})[SPEC_VARIABLE]})],
        capture_output=True, text=True)
    assert done.returncode != 0 and "KNOB should be '1'" in done.stderr


def test_inherited_allocator_knobs_are_dropped():
    env = launch_env("glibc", {}, [], base={"LD_PRELOAD": "/x.so", "MALLOC_ARENA_MAX": "2",
                                            "PATH": "/bin"})
    assert "LD_PRELOAD" not in env and "MALLOC_ARENA_MAX" not in env and env["PATH"] == "/bin"


def test_gpu_thread_mode_is_proven_from_the_threads_tensorflow_names():
    """TF_GPU_THREAD_MODE=gpu_private acts once TensorFlow starts a GPU: its pool's threads,
    named tf_gpu_private*, must be there; without them the knob did not apply."""
    import ctypes
    import threading

    from knobs.environment import KnobNotApplied, prove_started

    spec = launch_env("gpu_private", {"TF_GPU_THREAD_MODE": "gpu_private"}, [], base={})
    with pytest.raises(KnobNotApplied, match="TF_GPU_THREAD_MODE"):
        prove_started({"effects": {}}, environ=spec)
    named, stop = threading.Event(), threading.Event()

    def pool_thread():  # named as TensorFlow names its gpu_private pool (15 characters kept)
        ctypes.CDLL(None).prctl(15, b"tf_gpu_private_0", 0, 0, 0)  # PR_SET_NAME
        named.set()
        stop.wait()

    thread = threading.Thread(target=pool_thread)
    thread.start()
    try:
        named.wait()
        evidence = prove_started({"effects": {}}, environ=spec)
        assert evidence["effects"]["threads_named_tf_gpu_private"] == 1
    finally:
        stop.set()
        thread.join()
