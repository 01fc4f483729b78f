"""Address-space layout randomization (`aslr: false`): the measured process starts with
ADDR_NO_RANDOMIZE (what `setarch -R` sets), proven by its /proc/self/personality."""

from knobs import effects
from knobs.kinds.base import Kind, Knob, KnobNotApplied


class Layout(Kind):
    key = "aslr"
    knob_kind = "personality"
    option = "--aslr"
    schema = {"description": (
        "Address-space layout randomization in the measured process. false: the process "
        "starts with ADDR_NO_RANDOMIZE (what `setarch -R` sets), proven by its "
        "/proc/self/personality; every fresh mapping then lands where it landed in the "
        "process before, and so does its alignment to 2 MiB huge pages."),
        "type": "boolean", "default": True}

    def words(self, value):
        return [self.option, "off"] if value is False else []

    def read(self, given):
        return False if given and given[-1] == "off" else None

    def knobs(self, environment, value, resolve=True):
        return [Knob("aslr", "off", self.knob_kind)] if value is False else []

    def before_exec(self, knobs):
        return effects.fix_layout if knobs else None

    def combine(self, first, second):
        return False if False in (first, second) else None

    def recipe(self, value, runtime):
        return ([], ["start it under `setarch -R` (no layout randomization)"], []) \
            if value is False else ([], [], [])

    present_is_effect = True

    def present(self, knob, environ, real_maps, path="/proc/self/personality"):
        flags = effects.personality(path)
        fixed = flags is not None and bool(flags & effects.ADDR_NO_RANDOMIZE)
        seen = {"personality": None if flags is None else hex(flags)}
        if fixed != (knob.value == "off"):
            raise KnobNotApplied(f"aslr: {knob.value} was asked for, but the kernel "
                                 f"randomizes this process's layout ({seen})")
        return seen
