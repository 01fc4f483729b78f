"""TensorFlow: a `tf.function` running the `DeepCopy` op, TensorFlow's nearest equivalent of
Theano's DeepCopyOp (`tf.identity` may return its input's buffer instead of a copy). On the
GPU the input is a host tensor, the copy runs on the GPU and the result comes back to the
host inside the timed call."""

# What the copy step needs to know without importing it (read from this file).
FRAMEWORK = {"runtime": "tensorflow", "devices": ("cpu", "gpu"), "gpu_library": "tensorflow",
             "graph": True}

import tensorflow as tf

from knobs import gpu
from knobs.environment import KnobNotApplied
from knobs.benchmarks.copy.frameworks import Identity

PLACE = {"cpu": "/CPU:0", "gpu": "/GPU:0"}


def _identity(device):
    @tf.function
    def identity(x):
        with tf.device(PLACE[device]):
            return tf.raw_ops.DeepCopy(x=x)

    return identity


def _on_host(x):
    with tf.device("/CPU:0"):
        return tf.constant(x)


def build(example, device="cpu"):
    if device == "gpu":
        gpu.require("tensorflow")
    identity = _identity(device)
    graph = identity.get_concrete_function(tf.TensorSpec(example.shape, tf.float32)).graph
    placed = identity(_on_host(example)).device
    if not placed.endswith(f"device:{device.upper()}:0"):
        raise KnobNotApplied(f"asked for device {device} but the copy ran on {placed}")
    if device == "gpu":  # back on the host inside the call: the round trip is what is timed
        call, to_numpy = (lambda x: identity(x).numpy()), (lambda y: y)
    else:
        call, to_numpy = identity, (lambda y: y.numpy())
    return Identity(call=call, prepare=_on_host, to_numpy=to_numpy,
                    version=tf.__version__,
                    evidence={"op": "tf.raw_ops.DeepCopy in tf.function", "output_device": placed,
                              "graph_ops": [op.type for op in graph.get_operations()],
                              "intra_op_threads": tf.config.threading.get_intra_op_parallelism_threads(),
                              "cpu_allocator_pool": cpu_allocator_pool()})


def cpu_allocator_pool():
    """Where TensorFlow's CPU buffers come from: with oneDNN on, a BFC pool that keeps its
    memory (it reports its bytes in use and peak); without, malloc (no statistics)."""
    try:
        stats = tf.config.experimental.get_memory_info("CPU:0")
    except ValueError:  # "Allocator stats not available": not a pool
        return "none: malloc"
    return f"BFC pool: {stats['current']} bytes in use, peak {stats['peak']}"


def describe(example, device="cpu"):
    """The graph that ran, as TensorFlow partitioned it over devices, and what each device's
    streams did: on the GPU, _Send/_Recv pairs and MEMCPYHtoD/DtoH; on the CPU, none."""
    if device == "gpu":
        gpu.require("tensorflow")
    graph = tf.Graph()
    with graph.as_default():
        with tf.device("/CPU:0"):
            x = tf.compat.v1.placeholder(tf.float32, example.shape, name="x")
        with tf.device(PLACE[device]):
            copied = tf.raw_ops.DeepCopy(x=x, name="copy")
        with tf.device("/CPU:0"):
            out = tf.identity(copied, name="out")
    metadata = tf.compat.v1.RunMetadata()
    options = tf.compat.v1.RunOptions(trace_level=tf.compat.v1.RunOptions.FULL_TRACE,
                                      output_partition_graphs=True)
    with tf.compat.v1.Session(graph=graph) as session:
        session.run(out, {x: example}, options=options, run_metadata=metadata)
    lines = ["Partition graphs (one per device), op and device of each node:"]
    for number, partition in enumerate(metadata.partition_graphs):
        lines.append(f"  partition {number}:")
        lines += [f"    {node.op:<10} {node.name:<40} {node.device}" for node in partition.node]
    lines.append("\nWhat ran on each device and stream:")
    for stats in metadata.step_stats.dev_stats:
        lines.append(f"  {stats.device}: " + ", ".join(n.node_name for n in stats.node_stats))
    return "\n".join(lines) + "\n"
