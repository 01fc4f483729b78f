"""The stacked hourglass network (Newell et al. 2016), written twice with the same shape:
`torch_model` (PyTorch) and `tf_model` (TensorFlow raw ops, fused or unfused batch norm).

This module holds what both share and what Snakemake needs without a framework: the sizes,
the depth check, and the analytic FLOP count.
"""

DEPTH = 4  # levels per hourglass, as in the paper and the seed
RMSPROP = {"lr": 2.5e-4, "rho": 0.99, "eps": 1e-8}  # Torch7's optim.rmsprop defaults
# The seed's train steps (seconds, Titan X Pascal) at its size (stacks, resolution, batch).
SEED_SECONDS = {"tensorflow": 0.717, "torch": 0.343}
SEED_SIZE = (8, 256, 6)


def check_size(stacks, resolution, batch, features, joints):
    """Errors a size would only reveal minutes into a run, as messages naming the key."""
    errors = []
    for key, value in dict(stacks=stacks, resolution=resolution, batch=batch,
                           features=features, joints=joints).items():
        if value < 1:
            errors.append(f"{key} must be at least 1 (got {value})")
    if resolution % (4 * 2**DEPTH):
        errors.append(
            f"resolution {resolution} is too small or not a multiple of {4 * 2**DEPTH}: the "
            f"stem divides it by 4 and each of the {DEPTH} hourglass levels by 2")
    elif (resolution // (4 * 2**DEPTH)) ** 2 * batch < 2:
        errors.append(
            f"resolution {resolution} with batch {batch} leaves one value per channel at the "
            f"innermost hourglass level; batch norm cannot train on that (use a larger size)")
    if features % 2:
        errors.append(f"features must be even (got {features}): bottlenecks use half")
    return errors


def _conv(n, cin, cout, k, h, w):
    return 2 * n * cin * cout * k * k * h * w


def _residual(n, cin, cout, h, w):
    mid = cout // 2
    flops = _conv(n, cin, mid, 1, h, w) + _conv(n, mid, mid, 3, h, w) + _conv(n, mid, cout, 1, h, w)
    return flops + (_conv(n, cin, cout, 1, h, w) if cin != cout else 0)


def _hourglass(n, depth, f, h, w):
    low = _residual(n, f, f, h // 2, w // 2) * 2  # low1 and low3
    inner = _hourglass(n, depth - 1, f, h // 2, w // 2) if depth > 1 else _residual(n, f, f, h // 2, w // 2)
    return _residual(n, f, f, h, w) + low + inner


def forward_flops(stacks, resolution, batch, features, joints):
    """Multiply-adds x 2 of the convolutions in one forward pass (what dominates; pooling,
    batch norm and elementwise ops are left out, as torch.utils.flop_counter does)."""
    n, r, f = batch, resolution, features
    flops = _conv(n, 3, 64, 7, r // 2, r // 2) + _residual(n, 64, 128, r // 2, r // 2)
    q = r // 4
    flops += _residual(n, 128, 128, q, q) + _residual(n, 128, f, q, q)
    for stack in range(stacks):
        flops += _hourglass(n, DEPTH, f, q, q) + _residual(n, f, f, q, q)
        flops += _conv(n, f, f, 1, q, q) + _conv(n, f, joints, 1, q, q)
        if stack < stacks - 1:
            flops += _conv(n, f, f, 1, q, q) + _conv(n, joints, f, 1, q, q)
    return flops


def train_flops(stacks, resolution, batch, features, joints):
    """A train step: forward, then gradients for inputs and weights (2x forward each layer);
    the input image needs no gradient, so the first convolution's input gradient is skipped."""
    first = _conv(batch, 3, 64, 7, resolution // 2, resolution // 2)
    return 3 * forward_flops(stacks, resolution, batch, features, joints) - first


# TensorFlow's framework-level knobs, in the order they appear in a variant's name
# (e.g. `session-feed_dict-unfused-NHWC`); each value allowed for each, the first of
# `precision` (float32) left out of the name. bfloat16 / float16: mixed precision, float32
# variables and loss, convolutions and batch norm in the narrow type.
TF_KNOBS = {
    "execution": ("session", "function", "xla"),
    "input": ("feed_dict", "feed_float64", "dataset", "prefetch", "resident"),
    "batch_norm": ("unfused", "fused"),
    "data_format": ("NHWC", "NCHW"),
    "precision": ("float32", "bfloat16", "float16"),
}
TF_DEFAULTS = {"precision": "float32"}


def tf_variant(knobs):
    knobs = {**TF_DEFAULTS, **knobs}
    return "-".join(knobs[key] for key in TF_KNOBS
                    if key not in TF_DEFAULTS or knobs[key] != TF_DEFAULTS[key])


def parse_tf_variant(name):
    values = name.split("-")
    if len(values) not in (len(TF_KNOBS) - len(TF_DEFAULTS), len(TF_KNOBS)):
        raise ValueError(f"TensorFlow variant {name!r} should name {', '.join(TF_KNOBS)} "
                         f"({', '.join(TF_DEFAULTS)} may be left out)")
    knobs = {**TF_DEFAULTS, **dict(zip(TF_KNOBS, values))}
    for key, value in knobs.items():
        if value not in TF_KNOBS[key]:
            raise ValueError(f"{key}={value!r}: allowed {', '.join(TF_KNOBS[key])}")
    return knobs


# PyTorch's knobs: a variant names the ones it turns on, joined by "-" in this order
# (e.g. `channels_last-amp_bf16`); `eager` turns on none. Some act only on a GPU.
TORCH_KNOBS = ("channels_last", "cudnn_benchmark", "amp_bf16", "amp_fp16", "compile")
TORCH_GPU_ONLY = ("cudnn_benchmark", "amp_fp16")


def parse_torch_variant(name):
    """The knobs a torch variant turns on; a ValueError names what is wrong."""
    if name == "eager":
        return ()
    knobs = tuple(name.split("-"))
    unknown = [k for k in knobs if k not in TORCH_KNOBS]
    if unknown:
        raise ValueError(f"torch variant {name!r}: unknown {', '.join(unknown)}; "
                         f"use eager or {', '.join(TORCH_KNOBS)} joined by '-'")
    if "amp_bf16" in knobs and "amp_fp16" in knobs:
        raise ValueError(f"torch variant {name!r}: choose one of amp_bf16, amp_fp16")
    canonical = tuple(k for k in TORCH_KNOBS if k in knobs)
    if knobs != canonical:
        raise ValueError(f"torch variant {name!r}: write it as {'-'.join(canonical)}")
    return knobs


def precision_of(framework, variant):
    """The type the variant's convolutions run in: float32, bfloat16 or float16."""
    if framework == "tensorflow":
        return parse_tf_variant(variant)["precision"]
    knobs = parse_torch_variant(variant)
    return "bfloat16" if "amp_bf16" in knobs else "float16" if "amp_fp16" in knobs else "float32"


def peak_precision(precision, device, measured):
    """Which measured matmul peak a run is compared with: its own precision's, and on a GPU
    TF32's for float32 (cuDNN convolutions in PyTorch and TensorFlow use TF32 by default);
    float32's where that precision was not measured."""
    wanted = "tf32" if precision == "float32" and device == "gpu" else precision
    return wanted if wanted in measured else "float32"
