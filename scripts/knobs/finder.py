"""Finding benchmarks (and a benchmark's own plug-in modules, such as the copy step's
frameworks) by name or file, and importing them: it imports nothing of what it finds until
asked, and nothing of the package above it. The interface a benchmark meets is in
knobs/benchmarks/__init__.py."""

import ast
import importlib
import importlib.util
import os
import sys
from pathlib import Path

KNOBS = Path(__file__).resolve().parent  # the package: its modules import by their names
REPO = KNOBS.parents[1]
BENCHMARKS = KNOBS / "benchmarks"  # the built-in ones
HOOKS = ("SECTION_SCHEMA", "experiments", "check", "table_columns", "draw", "same_work")


def places(kind="benchmarks", own=BENCHMARKS):
    """Where modules of `kind` are looked for: the product's own folder `own`, then each
    study's (studies/<study>/<kind>/)."""
    return [own, *sorted((REPO / "studies").glob(f"*/{kind}"))]


def found(kind="benchmarks", own=BENCHMARKS):
    """{name: file} of every module of `kind` in its `places`, a name at most once."""
    modules = {}
    for place in places(kind, own):
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
    if KNOBS in path.parents:
        return importlib.import_module(".".join(parts[len(KNOBS.parts) - 1:]))
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

