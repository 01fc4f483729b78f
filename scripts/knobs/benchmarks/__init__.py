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

An Experiment names the benchmark whose `table_columns` and `draw` apply to it (`plugin`); a
section under `benchmarks:` gets the generic table and figure.
"""

import ast
import importlib
import importlib.util
import os
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent
REPO = PACKAGE.parents[2]
HOOKS = ("SECTION_SCHEMA", "experiments", "check", "table_columns", "draw")


class Unavailable(RuntimeError):
    """This benchmark cannot run here, for a reason the result records."""


def found(kind="benchmarks", package=PACKAGE):
    """{name: file} of every module of `kind` the workflow finds by name: the product's own
    (in `package`), then each study's (studies/<study>/<kind>/), a name at most once."""
    places = [package, *sorted((REPO / "studies").glob(f"*/{kind}"))]
    modules = {}
    for place in places:
        files = [(p.stem, p) for p in place.glob("*.py")]
        files += [(p.parent.name, p) for p in place.glob("*/__init__.py")]  # a package
        for name, path in sorted(files):
            if name.startswith("_"):
                continue
            if name in modules:
                raise ImportError(f"two {kind} named {name}: {modules[name]} and {path}")
            modules[name] = path
    return modules


def is_path(name):
    """A user's module is named by its file (`benchmarks/my_model.py`), a found one by name."""
    return name.endswith(".py") or os.sep in name


def file_of(name):
    """The file of a benchmark named by its name or by its path."""
    path, modules = Path(os.path.abspath(name)), found()
    if is_path(name) and path.is_file():
        return path
    if name not in modules:
        raise FileNotFoundError(f"benchmark module {name!r} not found (a .py file, relative to "
                                f"{os.getcwd()}; or by name: {', '.join(modules)})")
    return modules[name]


def import_file(path, prefix="knobs_user_"):
    """The module of `path`: the package's own under its package name, a study's as
    `studies.<study>.<kind>.<name>` (so that it may import its study's other modules), any
    other file under a name of its own."""
    path = Path(path).resolve()
    if path.name == "__init__.py":
        path = path.parent
    parts = path.with_suffix("").parts
    if PACKAGE in path.parents:
        return importlib.import_module(".".join(parts[parts.index("knobs"):]))
    if REPO / "studies" in path.parents:
        if str(REPO) not in sys.path:
            sys.path.insert(0, str(REPO))
        return importlib.import_module(".".join(parts[len(REPO.parts):]))
    spec = importlib.util.spec_from_file_location(prefix + path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load(name):
    """The module of a benchmark (by name or file path), in the measured process."""
    module = import_file(file_of(name))
    if not hasattr(module, "Benchmark"):
        raise AttributeError(f"{name} defines no class Benchmark (see knobs/benchmarks/__init__.py)")
    return module


def defines(path):
    """The names a module defines at its top level, read from its source without running it
    (a user's module imports its framework, which the workflow's own interpreter may lack)."""
    tree = ast.parse(Path(path).read_text(), filename=str(path))
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return names


def hooks_file(path):
    """Where a benchmark's hooks are: a package's section.py, a single file's own top level."""
    path = Path(path)
    return path.parent / "section.py" if path.name == "__init__.py" else path


def plugin(name):
    """The hooks of benchmark `name` (a module), or None where it defines none: a module
    without hooks is never imported outside its measured process."""
    if name is None:
        return None
    path = hooks_file(file_of(name))
    return import_file(path) if path.exists() and defines(path) & set(HOOKS) else None


def sections():
    """{section: the hooks module} of every found benchmark that owns a config section."""
    owners = {name: hooks_file(path) for name, path in found().items()}
    return {name: import_file(path) for name, path in owners.items()
            if path.exists() and "SECTION_SCHEMA" in defines(path)}


def cases_of(benchmark):
    cases = getattr(benchmark, "cases", ["step"])
    return [str(case) for case in (cases() if callable(cases) else cases)]
