"""Benchmarks: each is one Python module (or package) defining a class `Benchmark`. The runner
(knobs/runner.py) does everything else: the environment and its proof, threads, the order of
cases, warm-up, the timed samples with their counters, the result file.

    class Benchmark:
        def __init__(self, params, device, seed):
            # Build the work from the config's `params` (a dict), on `device` ("cpu" or
            # "gpu"), with `seed` (the rep). Not timed, apart from `build_seconds`.

        def setup(self, case):
            # Prepare one case and return its step: a function of no arguments that returns
            # only when the work is done (synchronise a GPU first). What it returns is
            # dropped inside the clock; a number (a loss) is kept as the sample's `value`.
            # The step of the previous case is released before the next setup.

    Optional:
        cases = ["forward", "train"]   # or a method; default: one case named "step"
        def info(self, case) -> dict        # facts about the case (bytes, FLOPs), after it ran;
                                            # one a record column names (kernel, host) becomes
                                            # case_<name> in the table
        def evidence(self) -> dict          # proof that the benchmark's own knobs applied;
                                            # raise knobs.environment.KnobNotApplied if not
        def trace(self, path) -> dict       # trace one step to `path` (Chrome trace);
                                            # return seconds per op
        def versions(self) -> dict          # library versions worth recording
        def describe(self, devices) -> str  # evidence text (compiled graph, profile)

A benchmark that cannot run on this machine for a reason worth reporting (torch.compile
without a compiler) raises `Unavailable`; the result then says so instead of a failure.

A benchmark is named by its file's path (`benchmarks/my_model.py`, anywhere), or by its name
where the workflow finds it: `scripts/knobs/benchmarks/<name>.py` (or `<name>/__init__.py`)
for the built-in ones, `studies/<study>/benchmarks/<name>.py` for a study's.

**A section of its own.** A benchmark may also own the top-level config section named after
it (the copy step's `copy:`, the hourglass's `hourglass:`), for configurations that are more
than a grid (the copy limit's references, the TensorFlow ladder). Its hooks live in its
`section.py` (a package) or at its module's top level (a single file, whose framework is then
imported inside `Benchmark` only: the workflow reads hooks in its own interpreter, never in
the measured process):

    SECTION_SCHEMA = '''...'''                  # YAML: the JSON schema of its section
    def experiments(config) -> [Experiment]     # what its section asks for (knobs/experiments)

and where it needs them:

    def check(config, available_bytes)          # errors a schema cannot see (ConfigError)
    def table_columns(table, settings, tables)  # its table's own columns
    def draw(figure, inputs, settings, config, png, svg)  # its figures (Experiment.figures)
    def same_work(comparison, configs)          # make compare: a key per row, alike for the
                                                # same work (its machine's move set aside)

An Experiment names the benchmark whose `table_columns`, `draw` and `same_work` apply to it
(`plugin`); a section under `benchmarks:` gets the generic table and figure. What finds them
all is knobs/finder.py, below every benchmark.
"""



class Unavailable(RuntimeError):
    """This benchmark cannot run here, for a reason the result records."""


def cases_of(benchmark):
    """A built benchmark's cases, by name (`cases`: a list or a method; default: one, "step")."""
    cases = getattr(benchmark, "cases", ["step"])
    return [str(case) for case in (cases() if callable(cases) else cases)]
