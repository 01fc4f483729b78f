"""What every knob kind is (knobs/kinds/__init__.py lists them): a `Kind` reads one key of an
environment spec (`env`, `preload`, `threads`, ...), says what that adds to the measured
process's environment, proves itself inside that process (or says why it cannot apply there),
writes its words of the recipe and declares its schema. Launch side and proof side are apart:
the first runs in the parent (run_benchmark.py), the second in the measured process.
"""

# What a kind's hooks take and raise, here too so that a kind of one's own imports one module
from knobs.knob import Effect, Knob, KnobNotApplied, NotApplicable  # noqa: F401


class Kind:
    """One key of an environment spec. The defaults fit a key with one scalar value (a count,
    a name): one knob named by the key, one option of run_benchmark.py, the later value winning
    in a combination, proven present only."""

    key = None  # the environment spec's key, e.g. "precision"
    knob_kind = None  # what its knobs are called (in the spec and the results); default: key
    option = None  # run_benchmark.py's option that carries it, e.g. "--precision"
    schema = {}  # the JSON schema of its value (config/schema.yaml's environments take it)
    recipe_late = False  # its words of the recipe's line after the other kinds'

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls.knob_kind = cls.knob_kind or cls.key

    # ---- The parent's side: config -> run_benchmark.py's words -> the measured process's env
    def words(self, value):
        """run_benchmark.py's words for the spec's value (none where it sets nothing)."""
        return [] if value is None else [self.option, str(value)]

    def read(self, given):
        """The spec's value back from what run_benchmark.py was given after `option` (a list
        of strings, one per time it was given); None where it was not."""
        return given[-1] if given else None

    def knobs(self, environment, value, resolve=True):
        """The knobs the value sets (`resolve`: find what it names on this machine)."""
        return [] if value is None else [Knob(self.key, str(value), self.knob_kind)]

    def launch(self, knobs, env):
        """Add to `env` (the measured process's environment) what `knobs` need set at start."""

    def before_exec(self, knobs):
        """A function to run in the child before it executes the measured process, or None."""
        return None

    def combine(self, first, second):
        """The value of a combination of two environments (None: neither sets it)."""
        return first if second is None else second

    def recipe(self, value, runtime):
        """(words of the shell line, lines for the code, notes) that set the value by hand."""
        return [], [], []

    # ---- The measured process's side ----------------------------------------------------------
    present_is_effect = False  # being there is an effect (a library mapped, a personality)

    def present(self, knob, environ, real_maps):
        """Evidence that the knob is there before anything runs, or KnobNotApplied."""
        return {}

    def effect(self, knob):
        """How the knob's effect is seen (an Effect), None where only its presence can be."""
        return None

    def prepare(self, knobs):
        """Before the benchmark is built: NotApplicable where the knob cannot act here."""

    def check_built(self, knobs):
        """Once the benchmark is built, before any step is timed: NotApplicable if it cannot
        act on what was built."""

    def wrap(self, step, knobs):
        """The step as the runner times it under these knobs."""
        return step
