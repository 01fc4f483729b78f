"""Environments prove themselves: a knob that did not apply is a failed run, never a result;
every proof says whether it saw the knob's effect or only its presence; the measured process
starts from an allowlist, not from the caller's shell."""

import json
import os
import subprocess

import pytest

from conftest import PYTHON, SCRIPTS, run_benchmark
from knobs.effects import EFFECTS, tensorflow_onednn_default
from knobs.environment import SPEC_VARIABLE, Knob, launch_env, proof_kind, prove_knob

TCMALLOC = "libtcmalloc.so.4"
# TensorFlow's oneDNN switch set against the default this CPU gives it (on with AVX-512 VNNI
# or bfloat16, AVX-VNNI or AMX; off on an AVX2-only CPU): the value that changes something.
ONEDNN_SWITCHED = "0" if tensorflow_onednn_default() else "1"


def test_missing_preload_is_a_failed_run_naming_environment_and_library(tmp_path):
    done, out = run_benchmark(tmp_path, "lie", ["--preload", "libdoesnotexist.so.1"])
    assert done.returncode != 0
    assert "environment 'lie'" in done.stderr and "libdoesnotexist.so.1" in done.stderr
    assert not out.exists()


def test_missing_tcmalloc_names_the_package_to_install(tmp_path):
    done, _ = run_benchmark(tmp_path, "tc", ["--preload", "/nonexistent/libtcmalloc.so.4"])
    assert done.returncode != 0 and "libgoogle-perftools4" in done.stderr


def measured_process(tmp_path, env):
    """The measured process alone (--measure), started with `env` as its whole environment."""
    out = tmp_path / "result.json"
    command = [str(PYTHON), str(SCRIPTS / "run_benchmark.py"), "--measure", "--experiment", "t",
               "--label", "environment=glibc", "--benchmark", "copy", "--params",
               json.dumps({"framework": "numpy", "batches": [1], "image": [3, 8, 8],
                           "input": "random"}),
               "--environment", "tcmalloc", "--samples", "2", "--out", str(out)]
    return subprocess.run(command, capture_output=True, text=True, env=env), out


def test_preload_that_the_loader_ignored_is_caught(tmp_path):
    """The spec claims a preload the process does not have (as when ld.so ignores one)."""
    env = launch_env("tcmalloc", {"preload": [TCMALLOC]}, 1)
    del env["LD_PRELOAD"]
    done, out = measured_process(tmp_path, env)
    assert done.returncode != 0
    assert "not mapped" in done.stderr and "tcmalloc" in done.stderr
    assert not out.exists()


def test_benchmark_refuses_to_run_without_its_environment_spec(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != SPEC_VARIABLE}
    done, out = measured_process(tmp_path, env)
    assert done.returncode != 0 and "run_benchmark.py" in done.stderr
    assert not out.exists()


def test_label_must_match_the_launched_environment(tmp_path):
    done, out = measured_process(tmp_path, launch_env("other", {}, 1))
    assert done.returncode != 0 and "labelled 'tcmalloc'" in done.stderr


def test_tcmalloc_preload_is_mapped_and_proven_by_its_effect(tmp_path):
    done, out = run_benchmark(tmp_path, "tcmalloc", ["--preload", TCMALLOC])
    assert done.returncode == 0, done.stderr
    knobs = json.loads(out.read_text())["knobs"]
    (preload,) = knobs["preloads"]
    assert preload["requested"] == TCMALLOC and "libtcmalloc" in os.path.basename(preload["path"])
    assert knobs["proofs"][TCMALLOC]["proof"] == "effect"


def test_each_knob_says_how_it_was_proven(tmp_path):
    """glibc_tuned's two thresholds: both observed in glibc's own counters; a variable
    nothing can observe is only seen present."""
    done, out = run_benchmark(tmp_path, "tuned", [
        "--set", "MALLOC_MMAP_THRESHOLD_=1073741824", "--set", "MALLOC_TRIM_THRESHOLD_=2147483648",
        "--set", "KNOBS_UNOBSERVABLE=1"])
    assert done.returncode == 0, done.stderr
    proofs = json.loads(out.read_text())["knobs"]["proofs"]
    assert proofs["MALLOC_MMAP_THRESHOLD_"]["proof"] == "effect"
    assert proofs["MALLOC_TRIM_THRESHOLD_"]["proof"] == "effect"
    assert proofs["MALLOC_TRIM_THRESHOLD_"]["seen"]["glibc_keeps_of_8388608_freed_bytes"] >= 8 << 20
    assert proofs["KNOBS_UNOBSERVABLE"]["proof"] == "presence"


def test_a_knob_required_to_show_its_effect_fails_when_only_present(tmp_path):
    done, out = run_benchmark(tmp_path, "strict", ["--set", "KNOBS_UNOBSERVABLE=1",
                                                   "--require-effect", "all"])
    assert done.returncode != 0 and "must be proven by its effect" in done.stderr
    assert not out.exists()
    done, out = run_benchmark(tmp_path, "strict", ["--preload", TCMALLOC,
                                                   "--require-effect", TCMALLOC])
    assert done.returncode == 0, done.stderr


def test_the_caller_environment_does_not_reach_the_measured_process(tmp_path):
    """Variables exported in the caller's shell are absent from the glibc run's recorded
    environment, unless the config names them in pass_env."""
    leaked = {"TF_ENABLE_ONEDNN_OPTS": "0", "MALLOC_ARENA_MAX": "1", "KMP_BLOCKTIME": "0",
              "LD_LIBRARY_PATH": "/opt/elsewhere/lib", "PYTHONPATH": "/opt/elsewhere"}
    env = {**os.environ, **leaked}
    done, out = run_benchmark(tmp_path, "glibc", [], env=env)
    assert done.returncode == 0, done.stderr
    recorded = json.loads(out.read_text())["environ"]
    assert not set(leaked) & set(recorded), recorded
    assert recorded["OMP_NUM_THREADS"] == "1" and "PATH" in recorded
    done, out = run_benchmark(tmp_path, "glibc", ["--pass-env", "KMP_BLOCKTIME"], env=env)
    assert done.returncode == 0, done.stderr
    recorded = json.loads(out.read_text())
    assert recorded["environ"]["KMP_BLOCKTIME"] == "0"
    assert recorded["knobs"]["pass_env"] == ["KMP_BLOCKTIME"]


PROVE = """
import json, os, sys
sys.path.insert(0, {scripts!r})
from knobs.environment import KnobNotApplied, prove
try:
    print(json.dumps(prove()))
except KnobNotApplied as error:
    sys.exit(str(error))
"""


LATE = """
import json, os, sys
sys.path.insert(0, {scripts!r})
from knobs.environment import KnobNotApplied, prove
# The variable is in the environment prove() reads, but was not there when this process (and
# its libraries) started: what the process does is what it did without it.
try:
    prove(environ={{**os.environ, **json.loads(os.environ["_LATE"])}})
except KnobNotApplied as error:
    sys.exit(str(error))
"""


@pytest.mark.parametrize("variable,value", [
    ("MALLOC_MMAP_THRESHOLD_", "1073741824"),
    ("MALLOC_TRIM_THRESHOLD_", "2147483648"),
    ("NUMPY_MADVISE_HUGEPAGE", "0"),
    ("THP_MEM_ALLOC_ENABLE", "1"),
    ("PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION", "python"),
    pytest.param("TF_ENABLE_ONEDNN_OPTS", ONEDNN_SWITCHED,
                 id="TF_ENABLE_ONEDNN_OPTS-against_the_default"),
])
def test_variable_set_too_late_has_no_effect_and_fails(variable, value):
    """A variable in os.environ that was not there when the process started (the pyperf
    lesson) is caught by observing its effect, not only its value."""
    env = launch_env("probe", {"env": {variable: value}}, 1)
    late = {k: v for k, v in env.items() if k != variable}
    late["_LATE"] = json.dumps({variable: value})
    done = subprocess.run([str(PYTHON), "-c", LATE.format(scripts=str(SCRIPTS))],
                          capture_output=True, text=True, env=late)
    assert done.returncode != 0 and "has no effect" in done.stderr, done.stderr
    on_time = subprocess.run([str(PYTHON), "-c", PROVE.format(scripts=str(SCRIPTS))],
                             capture_output=True, text=True, env=env)
    assert on_time.returncode == 0, on_time.stderr
    assert json.loads(on_time.stdout)["proofs"][variable]["proof"] == "effect"


def test_onednn_set_to_this_cpus_default_is_only_present():
    """TF_ENABLE_ONEDNN_OPTS asking for what TensorFlow does anyway on this CPU changes
    nothing a proof could see: it is proven present, with oneDNN as asked, not by an effect."""
    default = "1" if tensorflow_onednn_default() else "0"
    env = launch_env("probe", {"env": {"TF_ENABLE_ONEDNN_OPTS": default}}, 1)
    done = subprocess.run([str(PYTHON), "-c", PROVE.format(scripts=str(SCRIPTS))],
                          capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    proof = json.loads(done.stdout)["proofs"]["TF_ENABLE_ONEDNN_OPTS"]
    on = default == "1"
    assert proof["proof"] == "presence" and proof["seen"] == {"onednn": on, "onednn_default": on}


@pytest.mark.parametrize("flags,default", [
    ("avx avx2 fma", False),  # AMD EPYC Zen 2 or 3: AVX2 only
    ("avx2 avx512f avx512bw avx512vl", False),  # Skylake-SP: AVX-512 without VNNI
    ("avx2 avx512f avx512_vnni avx512_bf16", True),  # AMD EPYC Zen 4
    ("avx2 avx_vnni", True),  # Alder Lake
    ("avx2 avx512f avx512_vnni amx_tile amx_bf16 amx_int8", True),  # Sapphire Rapids
])
def test_tensorflows_onednn_default_follows_the_cpu(monkeypatch, flags, default):
    monkeypatch.setattr("knobs.machine.cpu_flags", lambda: flags.split())
    assert tensorflow_onednn_default() is default


def test_wrong_value_fails():
    env = launch_env("probe", {"env": {"KNOB": "1"}}, 1)
    env["KNOB"] = "2"
    done = subprocess.run([str(PYTHON), "-c", PROVE.format(scripts=str(SCRIPTS))],
                          capture_output=True, text=True, env=env)
    assert done.returncode != 0 and "KNOB should be '1'" in done.stderr


def test_glibc_knobs_are_only_present_where_another_allocator_is_preloaded():
    knob = Knob("MALLOC_MMAP_THRESHOLD_", "1", "variable")
    assert proof_kind(knob, []) == "effect"
    assert proof_kind(knob, [Knob(TCMALLOC, "/x.so", "preload")]) == "presence"
    assert proof_kind(Knob("KNOBS_X", "1", "variable"), []) == "presence"
    assert set(EFFECTS) >= {"MALLOC_TRIM_THRESHOLD_", "THP_MEM_ALLOC_ENABLE"}


def test_gpu_thread_mode_is_proven_from_the_threads_tensorflow_names():
    """TF_GPU_THREAD_MODE=gpu_private acts once TensorFlow starts a GPU: its pool's threads,
    named tf_gpu_private*, must be there; without them the knob did not apply."""
    import ctypes
    import threading

    from knobs.environment import KnobNotApplied, prove, prove_started

    env = launch_env("gpu_private", {"env": {"TF_GPU_THREAD_MODE": "gpu_private"}}, 1)
    evidence = prove(environ=env, maps=set())
    assert evidence["proofs"]["TF_GPU_THREAD_MODE"]["proof"] == "pending"
    with pytest.raises(KnobNotApplied, match="TF_GPU_THREAD_MODE"):
        prove_started(evidence, environ=env)
    named, stop = threading.Event(), threading.Event()

    def pool_thread():  # named as TensorFlow names its gpu_private pool (15 characters kept)
        ctypes.CDLL(None).prctl(15, b"tf_gpu_private_0", 0, 0, 0)  # PR_SET_NAME
        named.set()
        stop.wait()

    thread = threading.Thread(target=pool_thread)
    thread.start()
    try:
        named.wait()
        evidence = prove_started(evidence, environ=env)
        assert evidence["proofs"]["TF_GPU_THREAD_MODE"]["proof"] == "effect"
        assert evidence["effects"]["threads_named_tf_gpu_private"] == 1
    finally:
        stop.set()
        thread.join()


def test_jemalloc_options_are_proven_by_asking_jemalloc(tmp_path):
    """MALLOC_CONF: jemalloc's own mallctl reports each option as set; without jemalloc
    loaded the variable cannot act, and the run fails."""
    conf = "MALLOC_CONF=dirty_decay_ms:-1,muzzy_decay_ms:-1"
    done, out = run_benchmark(tmp_path, "retain", ["--preload", "libjemalloc.so.2", "--set", conf])
    assert done.returncode == 0, done.stderr
    proof = json.loads(out.read_text())["knobs"]["proofs"]["MALLOC_CONF"]
    assert proof["proof"] == "effect" and proof["seen"]["jemalloc_opt_dirty_decay_ms"] == -1
    done, out = run_benchmark(tmp_path, "nojemalloc", ["--set", conf])
    assert done.returncode != 0 and "MALLOC_CONF" in done.stderr and not out.exists()


def test_a_glibc_tunable_is_proven_by_what_the_loader_made_of_it():
    """The loader drops a misspelt tunable or a value out of range without a word: each must
    fail the knob, and the value it took must be in the proof (hex or decimal alike)."""
    from knobs.environment import KnobNotApplied

    name = "glibc.cpu.x86_non_temporal_threshold"
    knob = Knob("GLIBC_TUNABLES", f"{name}=33554432", "variable")
    environ = {"GLIBC_TUNABLES": knob.value}
    proof = prove_knob(knob, environ, set(), [])
    assert proof == {"proof": "effect", "seen": {name: "0x2000000"}}
    for wrong in (f"{name}=0x10", "glibc.cpu.x86_non_temporal_thresold=0x2000000"):
        with pytest.raises(KnobNotApplied, match="no effect"):
            prove_knob(Knob("GLIBC_TUNABLES", wrong, "variable"), {"GLIBC_TUNABLES": wrong}, set(), [])
    # several at once (memcpy_nt_all): each is proven, and one the loader dropped fails them all
    movsb = "glibc.cpu.x86_rep_movsb_threshold"
    both = f"{movsb}=0x40000000:{name}=0x8000"
    proof = prove_knob(Knob("GLIBC_TUNABLES", both, "variable"), {"GLIBC_TUNABLES": both}, set(), [])
    assert proof["seen"] == {movsb: "0x40000000", name: "0x8000"}
    wrong = f"{movsb}=0x40000000:{name}=0x10"  # below the loader's minimum: dropped
    with pytest.raises(KnobNotApplied, match="no effect"):
        prove_knob(Knob("GLIBC_TUNABLES", wrong, "variable"), {"GLIBC_TUNABLES": wrong}, set(), [])


def test_a_glibc_preference_is_proven_by_what_the_loader_derived():
    """glibc.cpu.hwcaps names features, which --list-tunables does not show: the proof reads
    the loader's diagnostics, where a misspelt preference changes nothing and fails."""
    from knobs.environment import KnobNotApplied

    from knobs import machine

    default = machine.glibc_cpu_features()
    if "preferred.Prefer_ERMS" not in default:
        pytest.skip("this glibc's loader lists no x86 preferences")
    assert default["preferred.Prefer_ERMS"] == "0x0"  # both asked the other way round
    assert default["preferred.AVX_Fast_Unaligned_Load"] == "0x1"
    value = "glibc.cpu.hwcaps=Prefer_ERMS,-AVX_Fast_Unaligned_Load"
    proof = prove_knob(Knob("GLIBC_TUNABLES", value, "variable"), {"GLIBC_TUNABLES": value}, set(), [])
    assert proof == {"proof": "effect", "seen": {"glibc.cpu.hwcaps.Prefer_ERMS": "0x1",
                                                 "glibc.cpu.hwcaps.AVX_Fast_Unaligned_Load": "0x0"}}
    for wrong in ("glibc.cpu.hwcaps=Prefer_ERMZ", "glibc.cpu.hwcaps=Prefer_ERMS,kind"):
        with pytest.raises(KnobNotApplied, match="not a preference"):
            prove_knob(Knob("GLIBC_TUNABLES", wrong, "variable"), {"GLIBC_TUNABLES": wrong}, set(), [])


def test_the_machine_record_holds_where_memcpy_uses_rep_movsb():
    """Where glibc's memcpy copies with `rep movsb` (from the first size to the stop) decides
    how a fault inside a copy costs: the record holds both, as the loader derived them."""
    from knobs import machine

    described = machine.describe()
    if described["glibc_rep_movsb_stop_threshold"] is None:
        pytest.skip("this glibc's loader lists no x86 diagnostics")
    start, stop = (int(described[f"glibc_rep_movsb_{end}"], 0)
                   for end in ("threshold", "stop_threshold"))
    assert 0 < start < stop


def test_a_fixed_layout_is_proven_by_the_process_personality(tmp_path):
    """aslr: off starts the measured process without layout randomization (its personality
    says so); a spec that claims it for a process started with randomization fails."""
    done, out = run_benchmark(tmp_path, "fixed", ["--aslr", "off"])
    assert done.returncode == 0, done.stderr
    knobs = json.loads(out.read_text())["knobs"]
    proof = knobs["proofs"]["aslr"]
    assert proof["kind"] == "personality" and proof["proof"] == "effect"
    assert int(proof["seen"]["personality"], 16) & 0x0040000
    assert knobs["effects"]["layout_randomized"] is False
    env = launch_env("fixed", {"aslr": False}, 1)  # started below without the personality
    done = subprocess.run([str(PYTHON), "-c", PROVE.format(scripts=str(SCRIPTS))],
                          capture_output=True, text=True, env=env)
    assert done.returncode != 0 and "randomizes this process's layout" in done.stderr


def test_every_process_records_whether_its_layout_was_randomized(tmp_path):
    from knobs import machine

    done, out = run_benchmark(tmp_path, "glibc")
    assert done.returncode == 0, done.stderr
    result = json.loads(out.read_text())
    assert result["machine"]["aslr"] == machine.aslr()
    assert result["knobs"]["effects"]["layout_randomized"] is (machine.aslr() != 0)


def test_where_glibc_serves_a_block_is_seen():
    """glibc maps a block over its mmap threshold (never above 32 MiB, however far earlier
    frees raised it) afresh, and its pages fault; a small block comes from its heap."""
    import numpy as np

    from knobs.effects import glibc_served

    source, faults = glibc_served(lambda: np.ones(40 << 20, np.uint8))
    assert source == "mapped" and faults >= 20  # 40 MiB: 20 huge pages at the fewest
    small = [glibc_served(lambda: np.ones(1 << 10, np.uint8)) for _ in range(3)]
    assert small[-1] == ("heap", 0)
