"""The stacked hourglass in TensorFlow raw ops, the same shape as `torch_model`.

Raw ops (tf.nn, tf.Variable) run unchanged in a tf.compat.v1 graph and Session (the seed's
setup) and in tf.function, and let batch norm be fused (`FusedBatchNormV3`) or unfused
(moments and elementwise ops), in NHWC or NCHW, in float32 or mixed precision (variables and
loss in float32, everything between in bfloat16 or float16).
"""

import numpy as np
import tensorflow as tf

from knobs.benchmarks.hourglass.network import DEPTH, RMSPROP

EPSILON = 1e-5


class StackedHourglass:
    """Variables are made on the first call (eagerly, or inside the graph being built) and
    reused, in the same order, on every later call."""

    def __init__(self, stacks, features=256, joints=16, fused=False, data_format="NHWC",
                 seed=0, upsample="resize", compute_dtype="float32"):
        self.stacks, self.features, self.joints = stacks, features, joints
        self.upsample_op = upsample  # "resize" (the seed's op) or "broadcast" (XLA on CPU)
        self.fused, self.data_format = fused, data_format
        self.channel_axis = 3 if data_format == "NHWC" else 1
        self.compute_dtype = tf.as_dtype(compute_dtype)
        self.rng = np.random.default_rng(seed)
        self.variables, self._next = [], None

    # -- variables ---------------------------------------------------------------------------
    def _variable(self, make):
        if self._next is None:
            self.variables.append(tf.Variable(make()))
            return self.variables[-1]
        variable = self.variables[self._next]
        self._next += 1
        return variable

    def __call__(self, x):
        self._next = 0 if self.variables else None
        try:
            return tf.cast(self._forward(self._narrow(x)), tf.float32)
        finally:
            self._next = 0

    def _narrow(self, tensor):
        """The compute type (a cast only under mixed precision; gradients flow through it)."""
        return tensor if self.compute_dtype == tf.float32 else tf.cast(tensor, self.compute_dtype)

    # -- layers ------------------------------------------------------------------------------
    def conv(self, x, cin, cout, k, stride=1):
        fan_in = cin * k * k
        w = self._narrow(self._variable(lambda: (self.rng.standard_normal((k, k, cin, cout))
                                                 * np.sqrt(2 / fan_in)).astype(np.float32)))
        b = self._narrow(self._variable(lambda: np.zeros(cout, np.float32)))
        padding = "SAME"  # symmetric for odd kernels at stride 1, as Torch pads
        if stride > 1:  # SAME would pad asymmetrically: pad as Torch does, explicitly
            pad = [[0, 0], [k // 2, k // 2], [k // 2, k // 2]]
            x = tf.pad(x, pad + [[0, 0]] if self.data_format == "NHWC" else [[0, 0], [0, 0]] + pad[1:])
            padding = "VALID"
        strides = [1, stride, stride, 1] if self.data_format == "NHWC" else [1, 1, stride, stride]
        y = tf.nn.conv2d(x, w, strides, padding, data_format=self.data_format)
        return tf.nn.bias_add(y, b, data_format=self.data_format)

    def batch_norm(self, x, channels):
        gamma = self._variable(lambda: np.ones(channels, np.float32))
        beta = self._variable(lambda: np.zeros(channels, np.float32))
        if self.fused:  # scale and offset stay float32, as the fused kernel takes them
            y, _, _ = tf.compat.v1.nn.fused_batch_norm(
                x, gamma, beta, epsilon=EPSILON, data_format=self.data_format, is_training=True)
            return y
        # Unfused, the statistics overflow in float16: computed in float32, as Keras does.
        axes = [0, 1, 2] if self.data_format == "NHWC" else [0, 2, 3]
        wide = tf.cast(x, tf.float32) if x.dtype != tf.float32 else x
        mean, variance = tf.nn.moments(wide, axes, keepdims=True)
        shape = [1, 1, 1, channels] if self.data_format == "NHWC" else [1, channels, 1, 1]
        return self._narrow(tf.nn.batch_normalization(
            wide, mean, variance, tf.reshape(beta, shape), tf.reshape(gamma, shape), EPSILON))

    def residual(self, x, cin, cout):
        mid = cout // 2
        y = self.conv(tf.nn.relu(self.batch_norm(x, cin)), cin, mid, 1)
        y = self.conv(tf.nn.relu(self.batch_norm(y, mid)), mid, mid, 3)
        y = self.conv(tf.nn.relu(self.batch_norm(y, mid)), mid, cout, 1)
        return y + (self.conv(x, cin, cout, 1) if cin != cout else x)

    def pool(self, x):
        return tf.nn.max_pool2d(x, 2, 2, "VALID", data_format=self.data_format)

    def upsample(self, x):
        """Nearest-neighbour x2. XLA on CPU has no kernel for ResizeNearestNeighborGrad, so
        under XLA the same values come from a reshape and a broadcast instead."""
        if self.upsample_op == "broadcast":
            n, a, b, c = (tf.shape(x)[i] for i in range(4))
            if self.data_format == "NHWC":  # (n, h, w, c) -> (n, h, 2, w, 2, c)
                y = tf.broadcast_to(x[:, :, None, :, None, :], [n, a, 2, b, 2, c])
                return tf.reshape(y, [n, 2 * a, 2 * b, c])
            y = tf.broadcast_to(x[:, :, :, None, :, None], [n, a, b, 2, c, 2])
            return tf.reshape(y, [n, a, 2 * b, 2 * c])
        if self.data_format == "NHWC":
            size = tf.shape(x)[1:3] * 2
            return tf.compat.v1.image.resize_nearest_neighbor(x, size)
        y = tf.transpose(x, [0, 2, 3, 1])
        y = tf.compat.v1.image.resize_nearest_neighbor(y, tf.shape(y)[1:3] * 2)
        return tf.transpose(y, [0, 3, 1, 2])

    def hourglass(self, x, depth, f):
        up = self.residual(x, f, f)
        low = self.residual(self.pool(x), f, f)
        low = self.hourglass(low, depth - 1, f) if depth > 1 else self.residual(low, f, f)
        low = self.residual(low, f, f)
        return up + self.upsample(low)

    def _forward(self, x):
        f, joints = self.features, self.joints
        x = tf.nn.relu(self.batch_norm(self.conv(x, 3, 64, 7, 2), 64))
        x = self.pool(self.residual(x, 64, 128))
        inter = self.residual(self.residual(x, 128, 128), 128, f)
        outputs = []
        for stack in range(self.stacks):
            y = self.residual(self.hourglass(inter, DEPTH, f), f, f)
            features = tf.nn.relu(self.batch_norm(self.conv(y, f, f, 1), f))
            heatmaps = self.conv(features, f, joints, 1)
            outputs.append(heatmaps)
            if stack < self.stacks - 1:
                inter = inter + self.conv(features, f, f, 1) + self.conv(heatmaps, joints, f, 1)
        return tf.stack(outputs)


def loss_fn(outputs, target):
    return tf.reduce_mean(tf.square(outputs - target[None]))


def parameter_count(model):
    return int(sum(np.prod(v.shape) for v in model.variables))


class RMSProp:
    """RMSprop with TensorFlow's fused kernel (`ResourceApplyRMSProp`), usable in a Session
    graph and in tf.function alike."""

    def __init__(self, variables):
        self.slots = [(tf.Variable(tf.zeros_like(v)), tf.Variable(tf.zeros_like(v)))
                      for v in variables]
        self.variables = variables

    def apply(self, gradients):
        return [tf.raw_ops.ResourceApplyRMSProp(
            var=v.handle, ms=ms.handle, mom=mom.handle, lr=RMSPROP["lr"], rho=RMSPROP["rho"],
            momentum=0.0, epsilon=RMSPROP["eps"], grad=g)
            for v, (ms, mom), g in zip(self.variables, self.slots, gradients)]
