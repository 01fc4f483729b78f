"""TensorFlow: a `tf.function` running the `DeepCopy` op, TensorFlow's nearest equivalent of
Theano's DeepCopyOp (`tf.identity` may return its input's buffer instead of a copy)."""

import tensorflow as tf

from knobs.frameworks import Identity


def build(example):
    identity = tf.function(lambda x: tf.raw_ops.DeepCopy(x=x))
    graph = identity.get_concrete_function(tf.TensorSpec(example.shape, tf.float32)).graph
    return Identity(call=identity, prepare=tf.constant, to_numpy=lambda y: y.numpy(),
                    version=tf.__version__,
                    evidence={"op": "tf.raw_ops.DeepCopy in tf.function",
                              "graph_ops": [op.type for op in graph.get_operations()],
                              "intra_op_threads": tf.config.threading.get_intra_op_parallelism_threads()})


def describe(example):
    """The graph that runs, as text: no transfer op on the CPU."""
    identity = tf.function(lambda x: tf.raw_ops.DeepCopy(x=x))
    graph = identity.get_concrete_function(tf.TensorSpec(example.shape, tf.float32)).graph
    return str(graph.as_graph_def())
