"""The knob kinds, each one class (knobs/kinds/base.py says what a kind is): the catalog of the
built-in ones, in the order their words go on run_benchmark.py's command line, then a study's
(studies/<study>/kinds/) and the files a config's `kinds:` names. Adding a kind: its module
here and its catalog entry, its README row, its test; or a module of your own, named in your
config.
"""

import functools
from pathlib import Path

from knobs import finder
from knobs.kinds.base import Kind

CATALOG = ("variable", "preload", "aslr", "threads", "interop_threads", "precision")
HERE = Path(__file__).resolve().parent


def _kinds_of(module):
    found = [value() for value in vars(module).values()
             if isinstance(value, type) and issubclass(value, Kind) and value is not Kind
             and value.__module__ == module.__name__]
    if not found:
        raise ImportError(f"{module.__file__} defines no knob kind (a subclass of "
                          "knobs.kinds.base.Kind)")
    return found


@functools.lru_cache(maxsize=None)
def load(files=()):
    """Every kind: the catalog's, a study's, then those of `files` (a config's `kinds:`);
    a key or an option taken twice is an error naming both."""
    modules = finder.found("kinds", own=HERE)
    modules.pop("base")  # what a kind is, not one
    paths = [modules.pop(name) for name in CATALOG] + list(modules.values()) + \
        [Path(f).resolve() for f in files]
    kinds, owner = [], {}
    for path in paths:
        for kind in _kinds_of(finder.import_file(path, prefix="knobs_kind_")):
            for claim in (kind.key, kind.option):
                if claim in owner and owner[claim] != path:
                    raise ImportError(f"two knob kinds claim {claim!r}: {owner[claim]} and {path}")
                owner[claim] = path
            kinds.append(kind)
    return kinds


def of(name, kinds):
    """The kind whose key is `name`."""
    return next(kind for kind in kinds if kind.key == name)
