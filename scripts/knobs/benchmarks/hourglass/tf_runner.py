"""The hourglass step in TensorFlow under its framework-level knobs, with the evidence that
each applied.

Knobs: execution (`session`: tf.compat.v1 graph and Session, as in the seed; `function`:
tf.function; `xla`: tf.function(jit_compile=True)), input (`feed_dict`: host arrays handed to
every call; `feed_float64`: float64 host arrays, as the seed fed `np.random.rand` into float32
placeholders, converted on every call; `dataset`: tf.data from host arrays; `prefetch`: tf.data with prefetch, to the
device where there is one; `resident`: the batch already on the device), batch_norm
(`unfused` / `fused`), data_format (`NHWC` / `NCHW`), precision (`float32`; `bfloat16` /
`float16`: mixed precision, float16 with a static loss scale).
"""

import glob
import json
import os
import tempfile

import numpy as np
import tensorflow as tf
from tensorflow.core.protobuf import rewriter_config_pb2

from knobs.environment import KnobNotApplied
from knobs.benchmarks.hourglass import tf_model

FUSED_OPS = ("FusedBatchNorm", "FusedBatchNormV2", "FusedBatchNormV3",
             "FusedBatchNormGrad", "FusedBatchNormGradV2", "FusedBatchNormGradV3")
ITERATOR_OPS = ("IteratorGetNext",)
FEEDS = ("feed_dict", "feed_float64")  # host arrays handed to every call
# float16 gradients underflow unscaled; a static scale keeps the step's ops fixed (Keras'
# dynamic scale adds a finiteness check and a conditional update per step).
LOSS_SCALE = {"float16": 1024.0}


def scaled(loss, precision):
    """What to differentiate: the loss, times the loss scale where the precision needs one."""
    return loss * LOSS_SCALE[precision] if precision in LOSS_SCALE else loss


def unscaled(gradients, precision):
    return [g / LOSS_SCALE[precision] for g in gradients] if precision in LOSS_SCALE else gradients


def _dataset(x, y, knobs, device):
    data = tf.data.Dataset.from_tensors((x, y)).repeat()
    if knobs["input"] == "prefetch":
        if device == "gpu":
            return data.apply(tf.data.experimental.prefetch_to_device("/gpu:0", 2))
        return data.prefetch(2)
    return data


def pin_device(device):
    """Run where the label says: a cpu run on a GPU machine hides the GPU (TensorFlow would
    place its ops there), and Grappler's layout optimizer is off, which would otherwise turn a
    GPU's NHWC convolutions into NCHW (or back, for float16), so `data_format` is what runs."""
    if device == "cpu" and tf.config.list_physical_devices("GPU"):
        tf.config.set_visible_devices([], "GPU")
    tf.config.optimizer.set_experimental_options({"layout_optimizer": False})


class Runner:
    def __init__(self, size, knobs, threads, inter_op_threads, device="cpu", seed=0):
        self.knobs, self.device = knobs, device
        pin_device(device)
        rng = np.random.default_rng(seed)
        n, r, j = size["batch"], size["resolution"], size["joints"]
        shape = (n, r, r, 3) if knobs["data_format"] == "NHWC" else (n, 3, r, r)
        out_shape = (n, r // 4, r // 4, j) if knobs["data_format"] == "NHWC" else (n, j, r // 4, r // 4)
        self.x = rng.random(shape, dtype=np.float32)
        self.y = rng.random(out_shape, dtype=np.float32)
        if knobs["input"] == "feed_float64":  # what the seed fed: np.random.rand, float64
            self.x, self.y = self.x.astype(np.float64), self.y.astype(np.float64)
        self.model = tf_model.StackedHourglass(
            size["stacks"], size["features"], j, fused=knobs["batch_norm"] == "fused",
            data_format=knobs["data_format"], seed=seed,
            upsample="broadcast" if knobs["execution"] == "xla" else "resize",
            compute_dtype=knobs["precision"])
        self.threads = {"intra_op": threads, "inter_op": inter_op_threads}
        if knobs["execution"] == "session":
            self._build_session()
        else:
            threading = tf.config.threading
            try:
                if threading.get_intra_op_parallelism_threads() != threads:
                    threading.set_intra_op_parallelism_threads(threads)
                if threading.get_inter_op_parallelism_threads() != inter_op_threads:
                    threading.set_inter_op_parallelism_threads(inter_op_threads)
            except RuntimeError as error:  # TensorFlow already started with other threads
                raise KnobNotApplied(f"threads {self.threads}: {error}") from error
            self._build_function()

    # -- tf.compat.v1 graph and Session ------------------------------------------------------
    def _build_session(self):
        v1 = tf.compat.v1
        self.graph = tf.Graph()
        with self.graph.as_default():
            mode = self.knobs["input"]
            self.feed = {}
            if mode in FEEDS:  # float32 placeholders, whatever is fed
                x = v1.placeholder(tf.float32, self.x.shape, name="x")
                y = v1.placeholder(tf.float32, self.y.shape, name="y")
                self.feed = {x: self.x, y: self.y}
            elif mode in ("dataset", "prefetch"):
                # initializable: a one-shot iterator cannot prefetch to a GPU
                iterator = v1.data.make_initializable_iterator(
                    _dataset(self.x, self.y, self.knobs, self.device))
                x, y = iterator.get_next()
            else:  # resident: variables initialised once from the host arrays
                x = tf.Variable(self.x, trainable=False)
                y = tf.Variable(self.y, trainable=False)
            self.loss = tf_model.loss_fn(self.model(x), y)
            precision = self.knobs["precision"]
            gradients = unscaled(v1.gradients(scaled(self.loss, precision), self.model.variables),
                                 precision)
            self.train_op = tf.group(tf_model.RMSProp(self.model.variables).apply(gradients))
            init = v1.global_variables_initializer()
        config = v1.ConfigProto(intra_op_parallelism_threads=self.threads["intra_op"],
                                inter_op_parallelism_threads=self.threads["inter_op"])
        if self.device == "cpu":
            config.device_count["GPU"] = 0
        config.graph_options.rewrite_options.layout_optimizer = (
            rewriter_config_pb2.RewriterConfig.OFF)
        self.session_config = config
        self.session = v1.Session(graph=self.graph, config=config)
        self.session.run(init)
        if mode in ("dataset", "prefetch"):
            self.session.run(iterator.initializer)
        self.graph.finalize()  # nothing may be added per step

    # -- tf.function (and XLA) ---------------------------------------------------------------
    def _build_function(self):
        model, jit = self.model, self.knobs["execution"] == "xla"
        precision = self.knobs["precision"]
        model(tf.constant(self.x, tf.float32))  # make the variables, eagerly, once
        optimizer = tf_model.RMSProp(model.variables)

        @tf.function(jit_compile=jit)
        def forward(x, y):
            return tf_model.loss_fn(model(x), y)

        @tf.function(jit_compile=jit)
        def train(x, y):
            with tf.GradientTape() as tape:
                loss = tf_model.loss_fn(model(x), y)
                target = scaled(loss, precision)
            optimizer.apply(unscaled(tape.gradient(target, model.variables), precision))
            return loss

        self.forward_fn, self.train_fn = forward, train
        mode = self.knobs["input"]
        if mode == "feed_dict":  # host arrays converted on every call, as a feed copies
            self.next_args = lambda: (self.x, self.y)
        elif mode == "feed_float64":  # float64 host arrays made float32 on every call
            self.next_args = lambda: (self.x.astype(np.float32), self.y.astype(np.float32))
        elif mode in ("dataset", "prefetch"):
            iterator = iter(_dataset(self.x, self.y, self.knobs, self.device))
            self.next_args = lambda: next(iterator)
        else:
            resident = (tf.identity(tf.constant(self.x)), tf.identity(tf.constant(self.y)))
            self.next_args = lambda: resident

    # -- steps: each returns the loss as a Python float, so the step has finished ------------
    def forward_step(self):
        if self.knobs["execution"] == "session":
            return float(self.session.run(self.loss, self.feed))
        return float(self.forward_fn(*self.next_args()).numpy())

    def train_step(self):
        if self.knobs["execution"] == "session":
            return float(self.session.run([self.train_op, self.loss], self.feed)[1])
        return float(self.train_fn(*self.next_args()).numpy())

    # -- evidence ----------------------------------------------------------------------------
    def _train_graph(self):
        if self.knobs["execution"] == "session":
            return self.graph
        return self.train_fn.get_concrete_function(*self.next_args()).graph

    def evidence(self):
        """What the graph that ran contains, checked against the knobs it claims."""
        ops = self._train_graph().get_operations()
        types = [op.type for op in ops]
        fused = sum(t in FUSED_OPS for t in types)
        conv_formats = sorted({op.get_attr("data_format").decode() for op in ops
                               if op.type.startswith("Conv2D")})
        conv_dtypes = sorted({op.get_attr("T").name for op in ops if op.type.startswith("Conv2D")})
        evidence = {
            "fused_batch_norm_ops": fused,
            "conv_data_formats": conv_formats,
            "conv_dtypes": conv_dtypes,
            "loss_scale": LOSS_SCALE.get(self.knobs["precision"]),
            "iterator_ops": sum(t in ITERATOR_OPS for t in types),
            "feeds_per_call": len(getattr(self, "feed", {})),
            "fed_dtype": self.x.dtype.name if self.knobs["input"] in FEEDS else None,
            "placeholder_dtypes": sorted({op.get_attr("dtype").name for op in ops
                                          if op.type == "Placeholder"}),
            "threads": self.threads,
            "onednn": _onednn_enabled(),
            "upsample": self.model.upsample_op,
            "device": self.device,
            "layout_optimizer": self._layout_optimizer(),
            "variable_dtypes": sorted({v.dtype.name for v in self.model.variables}),
        }
        if self.knobs["execution"] != "session":
            args = self.next_args()
            evidence["args_per_call"] = [type(a).__name__ for a in args]
            evidence["args_devices"] = [getattr(a, "device", "host") for a in args]
            evidence["jit_compile"] = bool(self.train_fn._jit_compile)
            if self.knobs["execution"] == "xla":
                hlo = self.train_fn.experimental_get_compiler_ir(*args)(stage="hlo")
                evidence["xla_hlo_chars"] = len(hlo)
        check(self.knobs, evidence)
        return evidence

    def _layout_optimizer(self):
        """Grappler's layout optimizer as TensorFlow reports it: "off" or "on"."""
        if self.knobs["execution"] == "session":
            rewrite = self.session_config.graph_options.rewrite_options
            return "off" if rewrite.layout_optimizer == rewriter_config_pb2.RewriterConfig.OFF else "on"
        setting = tf.config.optimizer.get_experimental_options().get("layout_optimizer")
        return "off" if setting is False else "on"

    def trace_train_step(self, path):
        """One train step under the TensorFlow profiler, written as a Chrome trace; returns
        the time per op type (summed over threads)."""
        logdir = tempfile.mkdtemp(prefix="tf-trace-")
        tf.profiler.experimental.start(logdir)
        self.train_step()
        tf.profiler.experimental.stop()
        (xplane,) = glob.glob(os.path.join(logdir, "**", "*.xplane.pb"), recursive=True)
        return xplane_to_chrome(xplane, path)


def _onednn_enabled():
    from tensorflow.python.util import _pywrap_util_port

    return bool(_pywrap_util_port.IsMklEnabled())


def check(knobs, evidence):
    """A knob that did not apply fails the run."""
    problems = []
    if (knobs["batch_norm"] == "fused") != (evidence["fused_batch_norm_ops"] > 0):
        problems.append(f"batch_norm={knobs['batch_norm']} but the graph has "
                        f"{evidence['fused_batch_norm_ops']} fused batch norm ops")
    if evidence["conv_data_formats"] != [knobs["data_format"]]:
        problems.append(f"data_format={knobs['data_format']} but convolutions run in "
                        f"{evidence['conv_data_formats']}")
    wanted = {"feed_float64": "float64", "feed_dict": "float32"}.get(knobs["input"])
    if evidence.get("fed_dtype", wanted) != wanted:
        problems.append(f"input={knobs['input']} but the host arrays are {evidence['fed_dtype']}")
    if knobs["execution"] == "session" and wanted and evidence.get(
            "placeholder_dtypes", ["float32"]) != ["float32"]:
        problems.append(f"the placeholders are {evidence['placeholder_dtypes']}, not float32")
    if evidence.get("layout_optimizer", "off") != "off":
        problems.append("Grappler's layout optimizer is on: data_format may not be what runs")
    if evidence.get("variable_dtypes", ["float32"]) != ["float32"]:
        problems.append(f"variables should be float32, are {evidence['variable_dtypes']}")
    if evidence["conv_dtypes"] != [knobs["precision"]]:
        problems.append(f"precision={knobs['precision']} but convolutions run in "
                        f"{evidence['conv_dtypes']}")
    expect_iterator = knobs["input"] in ("dataset", "prefetch")
    if knobs["execution"] == "session":
        if (evidence["iterator_ops"] > 0) != expect_iterator:
            problems.append(f"input={knobs['input']} but the graph has "
                            f"{evidence['iterator_ops']} iterator ops")
        if (evidence["feeds_per_call"] > 0) != (knobs["input"] in FEEDS):
            problems.append(f"input={knobs['input']} but each run call feeds "
                            f"{evidence['feeds_per_call']} tensors")
    else:
        host = all(kind == "ndarray" for kind in evidence["args_per_call"])
        if host != (knobs["input"] in FEEDS):
            problems.append(f"input={knobs['input']} but each call passes "
                            f"{evidence['args_per_call']}")
        on_device = knobs["input"] in ("prefetch", "resident") and evidence.get("device") == "gpu"
        if on_device and not all(d.endswith("GPU:0") for d in evidence["args_devices"]):
            problems.append(f"input={knobs['input']} on the GPU but the batch is on "
                            f"{evidence['args_devices']}")
        if evidence["jit_compile"] != (knobs["execution"] == "xla"):
            problems.append(f"execution={knobs['execution']} but jit_compile is "
                            f"{evidence['jit_compile']}")
    if problems:
        raise KnobNotApplied("; ".join(problems))


def _stat_text(plane, stat):
    kind = stat.WhichOneof("value")
    if kind == "ref_value":
        return plane.stat_metadata[stat.ref_value].name
    return stat.str_value if kind == "str_value" else None


def _gpu_op_type(plane, event, meta):
    """The op type a GPU kernel ran for, from its `tf_op` stat ("node:OpType"), or None."""
    for stat in list(event.stats) + list(meta.stats):
        if plane.stat_metadata[stat.metadata_id].name == "tf_op":
            text = _stat_text(plane, stat)
            return text.rpartition(":")[2] if text else None
    return None


def xplane_to_chrome(xplane_path, chrome_path):
    """TensorFlow's profiler output (XSpace) -> a Chrome trace of its events, and the time per
    op type: on a GPU the kernels' time on the device streams, grouped by the op that launched
    them; on a CPU the op kernels' time on the host threads."""
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    space = xplane_pb2.XSpace()
    with open(xplane_path, "rb") as handle:
        space.ParseFromString(handle.read())
    events, host_ops, device_ops = [], {}, {}
    for pid, plane in enumerate(space.planes):
        metadata = plane.event_metadata
        on_gpu = plane.name.startswith("/device:GPU:")
        for tid, line in enumerate(plane.lines):
            for event in line.events:
                meta = metadata[event.metadata_id]
                op_type = meta.display_name
                name = op_type or meta.name
                start_us = line.timestamp_ns / 1e3 + event.offset_ps / 1e6
                seconds = event.duration_ps / 1e12
                events.append({"name": name, "ph": "X", "ts": start_us,
                               "dur": event.duration_ps / 1e6, "pid": pid, "tid": tid,
                               "args": {"node": meta.name}})
                if on_gpu and line.name.startswith("Stream"):
                    kernel_op = _gpu_op_type(plane, event, meta) or "(unattributed kernels)"
                    device_ops[kernel_op] = device_ops.get(kernel_op, 0.0) + seconds
                elif not on_gpu and op_type and ":" in meta.name:  # "node:OpType"
                    host_ops[op_type] = host_ops.get(op_type, 0.0) + seconds
    with open(chrome_path, "w") as out:
        json.dump({"traceEvents": events, "displayTimeUnit": "ms"}, out)
    return device_ops or host_ops
