"""The stacked hourglass: the same network in both frameworks, and knobs that prove themselves."""

import json

import numpy as np
import pytest

from knobs.benchmarks.hourglass import network as hourglass
from knobs.benchmarks.hourglass import plan

SIZES = [dict(stacks=2, resolution=128, batch=1, features=256, joints=16),
         dict(stacks=1, resolution=64, batch=2, features=32, joints=4)]


@pytest.fixture(scope="module")
def tf():
    import tensorflow

    return tensorflow


@pytest.fixture(scope="module")
def torch():
    import torch

    torch.set_num_threads(1)
    return torch


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s['stacks']}x{s['resolution']}")
def test_same_parameters_shapes_and_flops_in_both_frameworks(size, tf, torch):
    from torch.utils.flop_counter import FlopCounterMode

    from knobs.benchmarks.hourglass import tf_model, torch_model

    n, r, j = size["batch"], size["resolution"], size["joints"]
    net = torch_model.StackedHourglass(size["stacks"], size["features"], j)
    with FlopCounterMode(display=False) as counter:
        out = net(torch.zeros(n, 3, r, r))
    assert tuple(out.shape) == (size["stacks"], n, j, r // 4, r // 4)
    assert counter.get_total_flops() == hourglass.forward_flops(**size)
    model = tf_model.StackedHourglass(size["stacks"], size["features"], j)
    tf_out = model(tf.zeros((n, r, r, 3)))
    assert tuple(tf_out.shape) == (size["stacks"], n, r // 4, r // 4, j)
    assert tf_model.parameter_count(model) == torch_model.parameter_count(net)


def test_paper_size_has_the_torch7_parameter_count(torch):
    from knobs.benchmarks.hourglass import torch_model

    assert torch_model.parameter_count(torch_model.StackedHourglass(8)) == 25_434_112


def test_fused_and_unfused_batch_norm_agree(tf):
    from knobs.benchmarks.hourglass import tf_model

    x = tf.constant(np.random.default_rng(1).random((2, 64, 64, 3), dtype=np.float32))
    outputs = [tf_model.StackedHourglass(1, 32, 4, fused=fused, seed=3)(x).numpy()
               for fused in (False, True)]
    np.testing.assert_allclose(outputs[0], outputs[1], rtol=1e-3, atol=1e-4)


def test_xla_upsample_equals_the_seeds_resize(tf):
    from knobs.benchmarks.hourglass import tf_model

    x = tf.constant(np.random.default_rng(2).random((2, 4, 6, 3), dtype=np.float32))
    resize = tf_model.StackedHourglass(1, upsample="resize").upsample(x)
    broadcast = tf_model.StackedHourglass(1, upsample="broadcast").upsample(x)
    np.testing.assert_array_equal(resize.numpy(), broadcast.numpy())


SMALL = dict(stacks=1, resolution=64, batch=2, features=16, joints=4)


@pytest.mark.parametrize("variant", ["session-feed_dict-unfused-NHWC",
                                     "function-resident-fused-NHWC",
                                     "function-resident-unfused-NHWC-float16",
                                     "session-feed_dict-fused-NHWC-bfloat16",
                                     "session-prefetch-fused-NHWC",
                                     "session-feed_float64-unfused-NHWC",
                                     "function-feed_float64-fused-NHWC"])
def test_tensorflow_train_step_lowers_the_loss_and_proves_its_knobs(variant, tf):
    from knobs.benchmarks.hourglass import tf_runner

    # eager TensorFlow fixes its threads once per process: keep what earlier tests started
    threads = (tf.config.threading.get_intra_op_parallelism_threads(),
               tf.config.threading.get_inter_op_parallelism_threads())
    runner = tf_runner.Runner(SMALL, hourglass.parse_tf_variant(variant), *threads)
    losses = [runner.train_step() for _ in range(4)]
    assert losses[-1] < losses[0]
    evidence = runner.evidence()
    assert (evidence["fused_batch_norm_ops"] > 0) == ("fused" in variant.split("-"))
    assert evidence["conv_data_formats"] == ["NHWC"]
    precision = hourglass.parse_tf_variant(variant)["precision"]
    assert evidence["conv_dtypes"] == [precision]  # mixed precision: narrow convolutions
    assert all(v.dtype == tf.float32 for v in runner.model.variables)  # float32 variables
    assert (evidence["loss_scale"] is not None) == (precision == "float16")
    feeds = {"feed_dict": "float32", "feed_float64": "float64"}
    assert evidence["fed_dtype"] == feeds.get(hourglass.parse_tf_variant(variant)["input"])


def test_torch_train_step_lowers_the_loss_and_channels_last_is_proven(torch):
    from knobs.environment import KnobNotApplied
    from knobs.benchmarks.hourglass import torch_runner

    runner = torch_runner.Runner(SMALL, "channels_last", 1, 1)
    losses = [runner.train_step() for _ in range(4)]
    assert losses[-1] < losses[0]
    assert runner.evidence()["input_channels_last"]
    runner.x = runner.x.contiguous()  # the knob undone behind the runner's back
    with pytest.raises(KnobNotApplied, match="channels_last"):
        runner.evidence()


@pytest.mark.parametrize("variant,dtype", [("amp_bf16", "bfloat16"),
                                           ("channels_last-amp_bf16", "bfloat16")])
def test_torch_autocast_is_proven_from_the_output_type(variant, dtype, torch):
    from knobs.environment import KnobNotApplied
    from knobs.benchmarks.hourglass import torch_runner

    runner = torch_runner.Runner(SMALL, variant, 1, 1)
    losses = [runner.train_step() for _ in range(4)]
    assert losses[-1] < losses[0]
    evidence = runner.evidence()
    assert evidence["output_dtype"] == dtype and evidence["knobs"] == variant.split("-")
    runner.amp = None  # autocast undone behind the runner's back
    runner.knobs = tuple(variant.split("-"))
    with pytest.raises(KnobNotApplied, match="outputs"):
        runner.evidence()


@pytest.mark.parametrize("variant", ["cudnn_benchmark", "channels_last-amp_fp16"])
def test_gpu_only_torch_knobs_refuse_the_cpu(variant, torch):
    from knobs.environment import KnobNotApplied
    from knobs.benchmarks.hourglass import torch_runner

    with pytest.raises(KnobNotApplied, match="acts on a GPU only"):
        torch_runner.Runner(SMALL, variant, 1, 1)


def test_variant_names_round_trip_and_float32_stays_unnamed():
    knobs = hourglass.parse_tf_variant("function-resident-fused-NCHW")
    assert knobs["precision"] == "float32"
    assert hourglass.tf_variant(knobs) == "function-resident-fused-NCHW"
    mixed = {**knobs, "precision": "bfloat16"}
    assert hourglass.tf_variant(mixed) == "function-resident-fused-NCHW-bfloat16"
    assert hourglass.parse_tf_variant(hourglass.tf_variant(mixed)) == mixed
    assert hourglass.parse_torch_variant("eager") == ()
    assert hourglass.precision_of("torch", "channels_last-amp_fp16") == "float16"
    assert hourglass.precision_of("tensorflow", "xla-resident-fused-NCHW-bfloat16") == "bfloat16"


@pytest.mark.parametrize("precision,device,measured,compared", [
    ("float32", "cpu", {"float32": 1}, "float32"),
    ("float32", "gpu", {"float32": 1, "tf32": 2, "bfloat16": 3}, "tf32"),
    ("bfloat16", "gpu", {"float32": 1, "tf32": 2, "bfloat16": 3}, "bfloat16"),
    ("bfloat16", "cpu", {"float32": 1}, "float32"),  # not measured there
])
def test_each_run_is_compared_with_the_peak_of_its_precision(precision, device, measured,
                                                             compared):
    assert hourglass.peak_precision(precision, device, measured) == compared


GOOD = {"fused_batch_norm_ops": 8, "conv_data_formats": ["NHWC"], "iterator_ops": 0,
        "feeds_per_call": 2, "conv_dtypes": ["float32"]}


@pytest.mark.parametrize("change,message", [
    ({"fused_batch_norm_ops": 0}, "batch_norm=fused"),
    ({"conv_data_formats": ["NCHW"]}, "data_format=NHWC"),
    ({"feeds_per_call": 0}, "feeds 0"),
    ({"iterator_ops": 1}, "iterator ops"),
    ({"conv_dtypes": ["bfloat16"]}, "precision=float32"),
    ({"variable_dtypes": ["bfloat16"]}, "variables should be float32"),
    ({"layout_optimizer": "on"}, "layout optimizer is on"),
    ({"fed_dtype": "float64"}, "host arrays are float64"),
    ({"placeholder_dtypes": ["float64"]}, "placeholders are"),
])
def test_tensorflow_knob_checks_catch_a_knob_that_did_not_apply(change, message):
    from knobs.environment import KnobNotApplied
    from knobs.benchmarks.hourglass.tf_runner import check

    knobs = hourglass.parse_tf_variant("session-feed_dict-fused-NHWC")
    check(knobs, GOOD)  # the positive case
    with pytest.raises(KnobNotApplied, match=message):
        check(knobs, {**GOOD, **change})


def test_gpu_input_must_be_on_the_gpu():
    from knobs.environment import KnobNotApplied
    from knobs.benchmarks.hourglass.tf_runner import check

    knobs = hourglass.parse_tf_variant("function-prefetch-fused-NHWC")
    evidence = {**GOOD, "feeds_per_call": 0, "args_per_call": ["EagerTensor"] * 2,
                "jit_compile": False, "device": "gpu",
                "args_devices": ["/job:localhost/replica:0/task:0/device:GPU:0"] * 2}
    check(knobs, evidence)
    with pytest.raises(KnobNotApplied, match="on the GPU but the batch is on"):
        check(knobs, {**evidence, "args_devices": ["/job:localhost/replica:0/task:0/device:CPU:0"] * 2})


def test_gpu_trace_counts_kernels_once_under_the_op_that_launched_them(tf, tmp_path):
    """A profiler XSpace as TensorFlow writes it on a GPU (built here by hand): kernel time on
    the device's streams goes to the op type named by the kernel's tf_op stat, host op events
    are then left out, so nothing is counted twice."""
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    from knobs.benchmarks.hourglass.tf_runner import xplane_to_chrome

    space = xplane_pb2.XSpace()
    host = space.planes.add(name="/host:CPU")
    host.event_metadata[1].CopyFrom(xplane_pb2.XEventMetadata(
        id=1, name="model/conv/Conv2D:Conv2D", display_name="Conv2D"))
    host.lines.add(name="tf_Compute").events.add(metadata_id=1, duration_ps=5_000_000)
    gpu = space.planes.add(name="/device:GPU:0")
    gpu.stat_metadata[1].CopyFrom(xplane_pb2.XStatMetadata(id=1, name="tf_op"))
    gpu.stat_metadata[2].CopyFrom(xplane_pb2.XStatMetadata(id=2, name="model/conv/Conv2D:Conv2D"))
    gpu.event_metadata[7].CopyFrom(xplane_pb2.XEventMetadata(id=7, name="sm90_xmma_fprop"))
    gpu.event_metadata[8].CopyFrom(xplane_pb2.XEventMetadata(id=8, name="memcpy"))
    stream = gpu.lines.add(name="Stream #7(Compute)")
    for duration in (2_000_000, 3_000_000):
        kernel = stream.events.add(metadata_id=7, duration_ps=duration)
        kernel.stats.add(metadata_id=1, ref_value=2)
    stream.events.add(metadata_id=8, duration_ps=1_000_000)
    path = tmp_path / "trace.xplane.pb"
    path.write_bytes(space.SerializeToString())
    per_op = xplane_to_chrome(path, tmp_path / "trace.json")
    assert per_op == pytest.approx({"Conv2D": 5e-6, "(unattributed kernels)": 1e-6})
    assert len(json.loads((tmp_path / "trace.json").read_text())["traceEvents"]) == 4


def test_function_input_check():
    from knobs.environment import KnobNotApplied
    from knobs.benchmarks.hourglass.tf_runner import check

    knobs = hourglass.parse_tf_variant("function-resident-fused-NHWC")
    evidence = {**GOOD, "feeds_per_call": 0, "args_per_call": ["EagerTensor"] * 2,
                "jit_compile": False}
    check(knobs, evidence)
    with pytest.raises(KnobNotApplied, match="input=resident"):
        check(knobs, {**evidence, "args_per_call": ["ndarray", "ndarray"]})


def test_ladder_plan_orders_rungs_and_ablates_the_best():
    tf_config = {
        "seed": dict(execution="session", input="feed_dict", batch_norm="unfused",
                     data_format="NHWC", environment="glibc"),
        "ladder": [{"batch_norm": "fused"}, {"execution": "function"}],
        "ablate": True,
        "variations": [{"environment": "tcmalloc"}],
    }
    entries = plan.tensorflow_plan(tf_config)
    variants = [(variant, env) for _, variant, env in entries]
    assert variants == [
        ("session-feed_dict-unfused-NHWC", "glibc"),
        ("session-feed_dict-fused-NHWC", "glibc"),
        ("function-feed_dict-fused-NHWC", "glibc"),
        # without execution=function is rung 1 again (not repeated); without fused is new
        ("function-feed_dict-unfused-NHWC", "glibc"),
        ("function-feed_dict-fused-NHWC", "tcmalloc"),
    ]
    grid = plan.tensorflow_plan({**tf_config, "grid": True, "values": {
        "execution": ["session", "function"], "input": ["feed_dict"],
        "batch_norm": ["unfused", "fused"], "data_format": ["NHWC"], "environment": ["glibc"]}})
    assert len(grid) == 4


@pytest.mark.parametrize("size,fragment", [
    (dict(SMALL, resolution=64, batch=1), "innermost"),
    (dict(SMALL, resolution=96), "multiple of 64"),
    (dict(SMALL, features=31), "even"),
])
def test_impossible_sizes_are_named(size, fragment):
    assert any(fragment in error for error in hourglass.check_size(**size))
    assert hourglass.check_size(**SMALL) == []


@pytest.mark.parametrize("framework,variant", [("torch", "eager"),
                                               ("tensorflow", "function-resident-fused-NHWC")])
def test_gpu_run_without_a_gpu_fails_at_once_and_writes_nothing(framework, variant, tmp_path):
    import subprocess

    from conftest import PYTHON, SCRIPTS

    out = tmp_path / "run.json"
    params = {"framework": framework, "variant": variant, **SMALL, "threads": 1,
              "inter_op_threads": 1}
    done = subprocess.run(
        [str(PYTHON), str(SCRIPTS / "run_benchmark.py"), "--experiment", "hourglass",
         "--label", f"framework={framework}", "--benchmark", "hourglass",
         "--params", json.dumps(params), "--environment", "glibc", "--device", "gpu",
         "--trace", str(tmp_path / "trace.json"), "--out", str(out)],
        capture_output=True, text=True)
    assert done.returncode != 0 and "sees no GPU here" in done.stderr
    assert not out.exists()


def test_each_knob_is_compared_with_what_it_changes():
    """Rungs against the rung before; ablations and variations against the last rung; torch
    variants against eager, torch environments against glibc."""
    hourglass = {
        "tensorflow": {"seed": dict(execution="session", input="feed_float64",
                                    batch_norm="unfused", data_format="NHWC", environment="glibc"),
                       "ladder": [{"input": "feed_dict"}, {"batch_norm": "fused"}],
                       "ablate": True, "variations": [{"environment": "tcmalloc"}]},
        "torch": {"variants": ["eager", "channels_last"], "environments": ["glibc", "tcmalloc"]},
    }
    found = {(c["kind"], c["label"]): (c["configuration"], c["reference"])
             for c in plan.comparisons(hourglass)}
    last = ("tensorflow", "session-feed_dict-fused-NHWC", "glibc")
    assert found[("rung", "+ batch_norm=fused")] == (
        last, ("tensorflow", "session-feed_dict-unfused-NHWC", "glibc"))
    assert found[("ablation", "last rung without input=feed_dict")][1] == last
    assert found[("variation", "last rung + environment=tcmalloc")] == (
        ("tensorflow", "session-feed_dict-fused-NHWC", "tcmalloc"), last)
    assert found[("torch variant", "torch channels_last (tcmalloc)")] == (
        ("torch", "channels_last", "tcmalloc"), ("torch", "eager", "tcmalloc"))
    assert found[("torch environment", "torch eager (tcmalloc)")] == (
        ("torch", "eager", "tcmalloc"), ("torch", "eager", "glibc"))
    assert not any(kind == "seed" for kind, _ in found)
