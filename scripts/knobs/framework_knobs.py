"""The knobs the runner applies inside the measured process, to a model it did not write: each
kind's own hooks (knobs/kinds/: the precision's autocast or Keras policy, PyTorch's inter-op
pool, ...) at their moments, and oneDNN's verbose lines for the proofs that read them. Which
framework is the one the benchmark's module imported.
"""

import sys

from knobs import environment, onednn


def _hooks(knobs):
    return environment.by_kind(knobs, environment.kind_files_in_process())


def prepare(knobs):
    """Before the benchmark is built: each kind checks that its knobs can act here
    (NotApplicable if not) and sets what must be set before a model exists; PyTorch's
    oneDNN is kept quiet until the proof step."""
    for kind, mine in _hooks(knobs):
        if mine:
            kind.prepare(mine)
    if _needs_lines(knobs) and "torch" in sys.modules:
        # ONEDNN_VERBOSE is set for TensorFlow's sake: PyTorch's lines wait for `traced`
        sys.modules["torch"].backends.mkldnn.verbose(0).__enter__()


def check_built(knobs):
    """Once the benchmark is built (its framework loaded), before any step is timed: a knob
    that cannot act on what was built (a precision no framework can take, an OpenMP knob
    where nothing uses OpenMP) is not applicable."""
    for kind, mine in _hooks(knobs):
        if mine:
            kind.check_built(mine)


def wrap(step, knobs):
    """The step as the runner times it, wrapped by each kind that acts around it."""
    for kind, mine in _hooks(knobs):
        if mine:
            step = kind.wrap(step, mine)
    return step


def _needs_lines(knobs):
    return environment.needs_onednn_lines(knobs, environment.kind_files_in_process())


def traced(step, knobs):
    """One more step, untimed, with PyTorch's oneDNN lines on, where a proof reads them."""
    if _needs_lines(knobs) and "torch" in sys.modules:
        torch = sys.modules["torch"]
        with torch.backends.mkldnn.verbose(torch.backends.mkldnn.VERBOSE_ON):
            step()


def capture(knobs):
    """The process's output held for oneDNN's lines where a proof reads them, else None."""
    return onednn.Capture().start() if _needs_lines(knobs) else None
