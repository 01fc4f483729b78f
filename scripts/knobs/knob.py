"""What a knob is, as the launch side and the measured process both see it: one `Knob` of an
environment, how its effect is observed (`Effect`), and the two ways it can fail to act
(`KnobNotApplied`, `NotApplicable`). The kinds (knobs/kinds/) and the checks
(knobs/effects.py) both stand on it.
"""

from dataclasses import dataclass
from typing import Callable


class KnobNotApplied(RuntimeError):
    """A knob is missing from, or has no effect in, the process it was meant for."""


class NotApplicable(RuntimeError):
    """A knob that cannot act in this process on this machine (AMX where the CPU has none, an
    OpenMP runtime where nothing uses OpenMP): the run is recorded as unavailable, with the
    reason, and not measured as if the knob were on."""


@dataclass(frozen=True)
class Effect:
    """How a knob's effect is observed: `check(value) -> (applied, seen)` (applied None: this
    process can show it present only); `started`: once the framework has run (checked after
    the timed steps); `observes`: from what oneDNN ran (`check(value, observed)`)."""

    check: Callable
    started: bool = False
    allocator: str = None  # glibc: meaningless (and unproven) where another allocator is preloaded
    observes: bool = False


@dataclass(frozen=True)
class Knob:
    """One knob of an environment, as it travels to the measured process (in its spec)."""

    name: str  # the variable, the library as the config names it, or the kind's key
    value: str  # the variable's value, the preload's resolved path, the kind's value
    kind: str  # the key of its Kind
