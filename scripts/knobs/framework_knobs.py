"""The knobs the runner applies inside the measured process, to a model it did not write:
the precision (PyTorch's CPU autocast around each step; Keras's global policy, set before the
benchmark builds its model) and oneDNN's verbose lines for the proofs that read them. Which
framework is the one the benchmark's module imported.
"""

import sys

from knobs import environment, machine, onednn, openmp

BFLOAT16_FLAGS = ("avx512_bf16", "amx_bf16")  # the CPU's own bfloat16 arithmetic


def bfloat16_arithmetic():
    """Whether this CPU does bfloat16 arithmetic itself (else the precision knob cannot act)."""
    return bool(set(machine.cpu_flags()) & set(BFLOAT16_FLAGS))


def _precision(knobs):
    return next((k.value for k in knobs if k.kind == "precision"), None)


def prepare(knobs):
    """Before the benchmark is built: check that each knob can act here (NotApplicable if
    not), set Keras's policy, and keep PyTorch's oneDNN quiet until the proof step."""
    precision = _precision(knobs)
    if precision is not None:
        if not bfloat16_arithmetic():
            raise environment.NotApplicable(
                f"precision {precision}: this CPU has no bfloat16 arithmetic "
                f"({' or '.join(BFLOAT16_FLAGS)} missing from its flags)")
        if "tensorflow" in sys.modules and "torch" not in sys.modules:
            sys.modules["tensorflow"].keras.mixed_precision.set_global_policy(
                f"mixed_{precision}")
    set_interop_threads(knobs)
    if environment.needs_onednn_lines(knobs) and "torch" in sys.modules:
        # ONEDNN_VERBOSE is set for TensorFlow's sake: PyTorch's lines wait for `traced`
        sys.modules["torch"].backends.mkldnn.verbose(0).__enter__()


OPENMP_VARIABLES = ("OMP_PROC_BIND", "OMP_PLACES", "GOMP_CPU_AFFINITY", "KMP_AFFINITY",
                    "KMP_BLOCKTIME")


def set_interop_threads(knobs):
    """PyTorch's inter-op pool, sized before it runs anything (TensorFlow's: its variable)."""
    count = next((int(k.value) for k in knobs if k.kind == "interop_threads"), None)
    torch = sys.modules.get("torch")
    if count is not None and torch is not None and torch.get_num_interop_threads() != count:
        try:
            torch.set_num_interop_threads(count)
        except RuntimeError as error:  # once inter-op work has started: the proof will say
            print(f"run_benchmark: inter-op threads not set: {error}", file=sys.stderr)


def check_built(knobs):
    """Once the benchmark is built (its framework loaded), before any step is timed: a
    precision no framework can take, or an OpenMP knob where nothing uses OpenMP, is not
    applicable."""
    set_interop_threads(knobs)  # where the benchmark imported PyTorch only while building
    precision = _precision(knobs)
    if precision is not None and "torch" not in sys.modules:
        tensorflow = sys.modules.get("tensorflow")
        policy = tensorflow and tensorflow.keras.mixed_precision.global_policy().name
        if policy != f"mixed_{precision}":
            raise environment.NotApplicable(
                f"precision {precision}: it acts through PyTorch's autocast around the step, "
                "or Keras's policy set before the model is built, and this benchmark's module "
                "does not import TensorFlow at its top (or imports neither framework)")
    openmp_knobs = [k.name for k in knobs if k.name in OPENMP_VARIABLES
                    or (k.kind == "preload" and openmp.is_intel(k.value))]
    if openmp_knobs:
        environment.needs_openmp(", ".join(openmp_knobs))


def wrap(step, knobs):
    """The step as the runner times it: in PyTorch's autocast where a precision is set."""
    precision = _precision(knobs)
    if precision is None or "torch" not in sys.modules:
        return step
    torch = sys.modules["torch"]
    dtype = getattr(torch, precision)

    def autocast_step():
        with torch.autocast("cpu", dtype=dtype):
            return step()

    return autocast_step


def traced(step, knobs):
    """One more step, untimed, with PyTorch's oneDNN lines on, where a proof reads them."""
    if environment.needs_onednn_lines(knobs) and "torch" in sys.modules:
        torch = sys.modules["torch"]
        with torch.backends.mkldnn.verbose(torch.backends.mkldnn.VERBOSE_ON):
            step()


def capture(knobs):
    """The process's output held for oneDNN's lines where a proof reads them, else None."""
    return onednn.Capture().start() if environment.needs_onednn_lines(knobs) else None
