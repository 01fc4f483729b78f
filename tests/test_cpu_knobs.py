"""The CPU knobs of the launchers and tuning guides: each proven where it applied, a failed
run (or `unavailable`, with the reason) where it did not."""

import json
import subprocess
import textwrap

import pytest
import yaml
from conftest import PYTHON, REPO, SCRIPTS

from knobs import config_check, environment, framework_knobs, onednn
from knobs.kinds import precision

IOMP = str(REPO / ".venv" / "lib" / "libiomp5.so")

# A tiny convolutional train step; AUTOCAST_OFF keeps it in float32 whatever wraps it.
MODEL = textwrap.dedent("""\
    import contextlib
    import os
    import torch

    class Benchmark:
        def __init__(self, params, device, seed):
            torch.manual_seed(seed)
            # big enough that PyTorch sends the convolution to oneDNN in float32 too
            self.model = torch.nn.Sequential(torch.nn.Conv2d(3, 16, 3, padding=1),
                                             torch.nn.Flatten(), torch.nn.Linear(16 * 32 * 32, 4))
            self.x = torch.randn(8, 3, 32, 32)

        def setup(self, case):
            def step():
                off = os.environ.get("AUTOCAST_OFF")
                with torch.autocast("cpu", enabled=False) if off else contextlib.nullcontext():
                    loss = self.model(self.x).float().square().mean()
                loss.backward()
                return loss.item()
            return step
    """)


def measure(tmp_path, name, *knobs, model=MODEL):
    module = tmp_path / "model.py"
    module.write_text(model)
    out = tmp_path / f"{name}.json"
    command = [str(PYTHON), str(SCRIPTS / "run_benchmark.py"), "--experiment", "t",
               "--label", f"environment={name}", "--benchmark", str(module),
               "--environment", name, "--threads", "2", "--samples", "2", *knobs,
               "--out", str(out)]
    done = subprocess.run(command, capture_output=True, text=True)
    return done, (json.loads(out.read_text()) if out.exists() else None)


def proofs(result):
    return result["knobs"]["proofs"]


def assert_bfloat16_not_measured(done, result):
    """On a CPU without bfloat16 arithmetic (an AVX2-only EPYC): the run is recorded as
    unavailable, with the reason, and nothing is timed."""
    assert done.returncode == 0, done.stderr
    assert result["status"] == "unavailable" and "cases" not in result, result.get("status")
    assert result["reason"].startswith("precision bfloat16: this CPU has no bfloat16 arithmetic")
    assert "unavailable here" in done.stderr


def measure_with_bfloat16(tmp_path, name, *knobs, model=MODEL):
    """`knobs` and the bfloat16 precision in one run where this CPU can take it; elsewhere
    that run must be `unavailable`, and `knobs` are measured again without the precision."""
    done, result = measure(tmp_path, name, "--precision", "bfloat16", *knobs, model=model)
    if precision.bfloat16_arithmetic():
        return done, result
    assert_bfloat16_not_measured(done, result)
    return measure(tmp_path, f"{name}_float32", *knobs, model=model)


def assert_bfloat16_proven(found):
    """Every oneDNN convolution and product ran in bfloat16 where the CPU has the arithmetic;
    elsewhere the run that proves the other knobs had no precision to prove."""
    if precision.bfloat16_arithmetic():
        seen = found.pop("precision")["seen"]
        assert seen["in_bfloat16"] == seen["onednn_compute_primitives"] > 0
    else:
        assert "precision" not in found


def test_intel_openmp_tuned_and_bfloat16_are_proven_by_their_effects(tmp_path):
    done, result = measure_with_bfloat16(
        tmp_path, "iomp_bf16", "--preload", "libiomp5.so", "--set", "KMP_BLOCKTIME=1",
        "--set", "KMP_AFFINITY=granularity=fine,compact,1,0", "--environment-threads", "2")
    assert done.returncode == 0, done.stderr
    found = proofs(result)
    assert_bfloat16_proven(found)
    assert {k: found[k]["proof"] for k in found} == {
        "libiomp5.so": "effect", "KMP_BLOCKTIME": "effect", "KMP_AFFINITY": "effect",
        "threads": "effect"}
    assert found["libiomp5.so"]["seen"]["GOMP_parallel_served_by"] == IOMP
    assert found["KMP_BLOCKTIME"]["seen"] == {"kmp_get_blocktime": 1}
    assert len(found["KMP_AFFINITY"]["seen"]["threads_pinned"]) == 2  # one CPU each
    assert found["threads"]["seen"] == {"torch.get_num_threads": 2}
    assert "onednn_verbose" not in done.stdout  # the proof's lines are not the user's output


def test_gnu_pinning_an_isa_cap_and_inter_op_threads_are_proven_by_their_effects(tmp_path):
    done, result = measure(tmp_path, "pinned", "--set", "OMP_PROC_BIND=close",
                           "--set", "OMP_PLACES=cores", "--set", "ONEDNN_MAX_CPU_ISA=AVX2",
                           "--interop-threads", "1")
    assert done.returncode == 0, done.stderr
    found = proofs(result)
    assert found["OMP_PROC_BIND"]["proof"] == "effect"
    assert found["OMP_PROC_BIND"]["seen"]["threads_pinned"]
    assert found["ONEDNN_MAX_CPU_ISA"]["proof"] == "effect"
    assert found["ONEDNN_MAX_CPU_ISA"]["seen"]["onednn_isas"] == ["avx2"]
    assert found["interop_threads"]["seen"] == {"torch.get_num_interop_threads": 1}


def test_a_precision_the_step_escapes_fails_the_run(tmp_path):
    done, result = measure(tmp_path, "bf16", "--precision", "bfloat16",
                           "--set", "AUTOCAST_OFF=1")
    if not precision.bfloat16_arithmetic():  # no step runs, so none escapes
        assert_bfloat16_not_measured(done, result)
        return
    assert done.returncode != 0 and result is None
    assert "precision='bfloat16' is set but has no effect" in done.stderr
    assert "'in_bfloat16': " in done.stderr


CHECKS = textwrap.dedent("""\
    import json, os, sys
    sys.path.insert(0, sys.argv[1])
    import torch
    from knobs import effects, onednn
    from knobs.kinds import interop_threads, precision, preload, threads
    x = torch.randn(64, 64)
    (x @ x).sum()  # OpenMP threads exist
    found = {}
    for name, call in [("iomp", lambda: preload.openmp_runtime(sys.argv[2])),
                       ("blocktime", lambda: effects._blocktime("1")),
                       ("pinning", lambda: effects._pinning("close")),
                       ("threads", lambda: threads.check("1")),
                       ("interop", lambda: interop_threads.check(
                           str(torch.get_num_interop_threads() + 1)))]:
        found[name] = call()[0]
    capture = onednn.Capture().start()
    with torch.backends.mkldnn.verbose(torch.backends.mkldnn.VERBOSE_ON):
        torch.nn.functional.conv2d(torch.randn(8, 16, 32, 32), torch.randn(16, 16, 3, 3))
    observed = onednn.parse(capture.stop())
    found["precision"] = precision.check("bfloat16", observed)[0]
    # a cap one set under the best the convolution used: AVX on an AVX2-only CPU
    best = max(onednn.rank(isa) for _, isa, _ in observed["compute"] if isa)
    found["isa_cap"] = effects._onednn_isa(onednn.ISAS[best - 1].upper(), observed)[0]
    print(json.dumps(found))
    """)


def test_each_knob_check_fails_where_its_knob_is_absent():
    """In a PyTorch process with no knob set: Intel's runtime does not serve OpenMP, the block
    time is GNU's (none), no thread is pinned, 2 threads run, not 1, in each pool, the
    convolution ran in float32 and with more than a cap under this CPU's best set."""
    done = subprocess.run([str(PYTHON), "-c", CHECKS, str(SCRIPTS), IOMP],
                          capture_output=True, text=True, env={"OMP_NUM_THREADS": "2"})
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.splitlines()[-1])
    assert found == {"iomp": False, "blocktime": False, "pinning": False, "threads": False,
                     "interop": False, "precision": False, "isa_cap": False}


def test_an_openmp_knob_where_nothing_uses_openmp_is_not_applicable():
    done = subprocess.run(
        [str(PYTHON), "-c", "import sys; sys.path.insert(0, sys.argv[1]);"
         "from knobs import environment\nfrom knobs.kinds import preload\n"
         "try:\n    preload.openmp_runtime(sys.argv[2])\n"
         "except environment.NotApplicable as error:\n    print(error)",
         str(SCRIPTS), IOMP], capture_output=True, text=True)
    assert "no library in this process uses OpenMP" in done.stdout, done.stderr


def test_bfloat16_without_the_cpu_for_it_is_not_applicable(monkeypatch):
    monkeypatch.setattr("knobs.machine.cpu_flags", lambda: ["avx2", "avx512f"])
    with pytest.raises(environment.NotApplicable, match="no bfloat16 arithmetic"):
        framework_knobs.prepare([environment.Knob("precision", "bfloat16", "precision")])


def test_intel_only_variables_without_intel_openmp_are_a_config_error():
    config = {"environments": {"blocktime": {"env": {"KMP_BLOCKTIME": "1"}}},
              "benchmarks": {"t": {"module": "peak", "environments": ["blocktime"],
                                   "baseline": "blocktime"}}}
    with pytest.raises(config_check.ConfigError, match="add `preload: \\[libiomp5.so\\]`"):
        config_check.validated(config)
    with pytest.raises(environment.KnobNotApplied, match="Intel's OpenMP alone"):
        environment.launch_env("blocktime", config["environments"]["blocktime"])


def test_onednn_lines_name_the_instruction_set_and_types():
    lines = ("onednn_verbose,v1,info,cpu,isa:Intel AVX-512 with AMX\n"
             "onednn_verbose,v1,primitive,exec,cpu,convolution,brg_conv_fwd:avx10_1_512_amx,"
             "forward_training,src:bf16:a:blocked:acdb::f0 wei:bf16,,alg,mb1,0.1\n"
             "onednn_verbose,v1,primitive,exec,cpu,reorder,jit:uni,undef,src:f32::blocked,,,1,0\n"
             "onednn_verbose,v1,primitive,create:cache_miss,cpu,matmul,brg_matmul:avx2,undef,"
             "src:f32::blocked:ab::f0 wei:f32,,,8x10,0.5\n")
    observed = onednn.parse(lines)
    assert observed["isa_line"] == "Intel AVX-512 with AMX"
    assert observed["compute"] == [("convolution", "avx10_1_512_amx", "bf16"),
                                   ("matmul", "avx2", "f32")]
    assert onednn.rank("avx10_1_512_amx") == onednn.rank("AVX512_CORE_AMX")
    assert onednn.rank("avx2") < onednn.rank("AVX512_CORE_BF16") < onednn.rank("avx10_1_512")


def test_the_catalog_is_built_in_and_grouped():
    built_in = yaml.safe_load((REPO / "config" / "environments.yaml").read_text())
    for name in ("iomp", "iomp_tuned", "omp_pinned", "bf16", "onednn_no_amx", "tcmalloc"):
        assert "group" in built_in[name], name


KERAS = textwrap.dedent("""\
    import tensorflow as tf

    class Benchmark:
        def __init__(self, params, device, seed):
            self.model = tf.keras.Sequential([
                tf.keras.Input((16, 16, 3)), tf.keras.layers.Conv2D(8, 3, padding="same"),
                tf.keras.layers.GlobalAveragePooling2D(), tf.keras.layers.Dense(4)])
            self.x = tf.random.normal((8, 16, 16, 3))

        @tf.function
        def forward(self):
            return tf.reduce_mean(tf.cast(self.model(self.x), tf.float32))

        def setup(self, case):
            return lambda: float(self.forward())
    """)


def test_keras_bfloat16_and_inter_op_threads_are_proven_in_tensorflow(tmp_path):
    done, result = measure_with_bfloat16(tmp_path, "bf16", "--interop-threads", "1",
                                         model=KERAS)
    assert done.returncode == 0, done.stderr
    found = proofs(result)
    assert_bfloat16_proven(found)
    assert found["interop_threads"]["seen"] == {"threads_named_tf_Compute": 1}
