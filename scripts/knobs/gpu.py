"""A GPU knob on a machine (or a build) without a GPU fails at once, saying what to change.

`require` runs inside a measured process before anything is measured; Snakemake's parse-time
check (rules/common.smk) uses `machine.gpus()`, which needs no framework.
"""

from knobs.environment import KnobNotApplied

FIXES = {
    "torch": "a CUDA build of PyTorch",
    "tensorflow": "a TensorFlow GPU build (pip install tensorflow[and-cuda])",
    "jax": "a CUDA build of JAX (pip install jax[cuda13])",
}


def visible(library):
    """Whether `library` sees a GPU here."""
    if library == "torch":
        import torch

        return torch.cuda.is_available()
    if library == "tensorflow":
        import tensorflow as tf

        return bool(tf.config.list_physical_devices("GPU"))
    if library == "jax":
        import jax

        try:
            return bool(jax.devices("gpu"))
        except RuntimeError:  # no GPU backend in this build, or no device
            return False
    raise ValueError(f"unknown library {library!r}; known: {', '.join(FIXES)}")


def require(library):
    if not visible(library):
        raise KnobNotApplied(
            f"device gpu asked for, but {library} sees no GPU here: run it on a GPU machine "
            f"with {FIXES[library]}, or use device cpu")
