"""Config validation with messages that name the key and what is allowed.

The config's schema is config/schema.yaml (what every config may hold: environments,
statistics, `benchmarks:` sections...) joined with the schema of each section a benchmark owns
(its SECTION_SCHEMA, knobs/benchmarks/). The JSON schema catches shapes and types; the checks
here, and each section's own `check`, catch what a schema cannot: a name that refers to
nothing, a size that cannot fit in this machine's memory. Environments a config uses without
defining them come from config/environments.yaml, the built-in ones.
"""

import copy
import os
from pathlib import Path

import yaml

from knobs import finder, kinds

CONFIG = Path(__file__).resolve().parents[2] / "config"
SCHEMA = CONFIG / "schema.yaml"
BUILT_IN_ENVIRONMENTS = CONFIG / "environments.yaml"
# What a `benchmarks:` section may not be named: files every result set writes.
WRITTEN = ("summary", "system", "verdicts")


class ConfigError(ValueError):
    pass


def _key(path):
    return ".".join(str(part) if not isinstance(part, int) else f"[{part}]"
                    for part in path).replace(".[", "[") or "(top level)"


def schema(kind_files=()):
    """config/schema.yaml with each knob kind's schema under the environments' key it reads
    (`kind_files`: the config's own kinds) and each benchmark's section schema under its
    section's name."""
    joined = yaml.safe_load(SCHEMA.read_text())
    environment = joined["properties"]["environments"]["additionalProperties"]
    environment["properties"] = {**{kind.key: kind.schema for kind in kinds.load(tuple(kind_files))},
                                 **environment["properties"]}
    for name, hooks in finder.sections().items():
        section = yaml.safe_load(hooks.SECTION_SCHEMA)
        joined.setdefault("$defs", {}).update(section.pop("$defs", {}))
        joined["properties"][name] = section
    return joined


def own_kinds(config):
    """The files of the config's own knob kinds (`kinds:`), each checked to be one."""
    files = config.get("kinds") or []
    if not isinstance(files, list):
        return ()  # the schema says what it must be
    for path in files:
        if not os.path.isfile(path):
            raise ConfigError(f"config error: kinds: {path!r} is not a file (a path relative "
                              f"to {os.getcwd()})")
    try:
        kinds.load(tuple(files))
    except ImportError as error:
        raise ConfigError(f"config error: kinds: {error}") from None
    return tuple(files)


def check_schema(config):
    # here, not at the top: scripts/run_without_snakemake.py runs where it may be missing
    import jsonschema

    validator = jsonschema.Draft202012Validator(schema(own_kinds(config)))
    errors = sorted(validator.iter_errors(config), key=lambda e: list(e.absolute_path))
    if errors:
        lines = []
        for error in errors:
            allowed = ""
            if error.validator == "additionalProperties" and "properties" in error.schema:
                allowed = f"allowed keys: {', '.join(error.schema['properties'])}"
            elif "enum" in error.schema:
                allowed = f"allowed: {', '.join(map(str, error.schema['enum']))}"
            lines.append(f"  {_key(error.absolute_path)}: {error.message}"
                         + (f" ({allowed})" if allowed else ""))
        raise ConfigError("config error (see config/schema.yaml and each benchmark's "
                          "SECTION_SCHEMA):\n" + "\n".join(lines))


def environments_known(config):
    """The built-in environments with the config's own (which replace a built-in of the name)."""
    return {**yaml.safe_load(BUILT_IN_ENVIRONMENTS.read_text()),
            **(config.get("environments") or {})}


def fill_defaults(config):
    """The config with the schema's defaults filled in and the built-in environments it needs
    but does not define (a copy; the config itself is not changed)."""
    filled = copy.deepcopy(config)
    built_in = yaml.safe_load(BUILT_IN_ENVIRONMENTS.read_text())
    own = filled.get("environments") or {}
    filled["environments"] = {**own, **{k: v for k, v in built_in.items() if k not in own}}
    fill_schema_defaults(filled, schema(own_kinds(config)))
    try:
        used = {c.environment for x in _experiments(filled) for c in x.configurations}
    except (KeyError, ValueError):  # a name that refers to nothing: check_references says which
        return filled
    filled["environments"] = {k: v for k, v in filled["environments"].items()
                              if k in own or k in used}
    return filled


def fill_schema_defaults(config, joined):
    """Fill in the schema's defaults where they are missing, as Snakemake's `validate` does,
    without jsonschema (which a GPU node may lack: scripts/run_without_snakemake.py)."""
    definitions = joined.get("$defs", {})

    def resolve(node):
        while "$ref" in node and len(node) == 1:
            node = definitions[node["$ref"].rsplit("/", 1)[-1]]
        return node

    def fill(value, node):
        node = resolve(node)
        if isinstance(value, dict):
            for key, child in node.get("properties", {}).items():
                child = resolve(child) if "default" not in child else child
                if key not in value and "default" in child:
                    value[key] = copy.deepcopy(child["default"])
                if key in value:
                    fill(value[key], child)
            extra = node.get("additionalProperties")
            if isinstance(extra, dict):
                for key in set(value) - set(node.get("properties", {})):
                    fill(value[key], extra)
        return value

    return fill(config, joined)


def _experiments(config):
    from knobs import experiments

    return experiments.experiments({**config, "more_reps": {}, "not_measured": []}).values()


def validated(config, available_bytes=None):
    """The config checked (schema, then references), its defaults filled in."""
    check_schema(config)
    filled = fill_defaults(config)
    check_references(filled, available_bytes)
    return filled


def known(what, names, known_names, key):
    unknown = [name for name in names if name not in known_names]
    if unknown:
        raise ConfigError(f"config error: {key}: {', '.join(map(repr, unknown))} is not a "
                          f"known {what}; known: {', '.join(sorted(known_names))}")


def check_references(config, available_bytes=None):
    """Names must refer to something, and sizes must be possible."""
    owned = finder.sections()
    if not any(config.get(key) for key in (*owned, "benchmarks")):
        raise ConfigError("config error: the config runs no experiment: add a section under "
                          f"`benchmarks` (or one of {', '.join(owned)})")
    check_environments(config)
    for name, hooks in owned.items():
        if name in config and hasattr(hooks, "check"):
            hooks.check(config, available_bytes)
    for name in config.get("benchmarks", {}):
        check_benchmark(config, name)
    check_more_reps(config)
    if config.get("search_of") and config["search_of"] not in config.get("benchmarks", {}):
        raise ConfigError(f"config error: search_of: {config['search_of']!r} is not a benchmark "
                          "of this config's `benchmarks:` (scripts/search.py writes it)")


def check_more_reps(config):
    """Every configuration `more_reps` names is one the config measures."""
    if not config.get("more_reps"):
        return
    known_paths = {f"{x.name}/{c.path}" for x in _experiments(config) for c in x.configurations}
    unknown = sorted(set(config["more_reps"]) - known_paths)
    if unknown:
        raise ConfigError(f"config error: more_reps: {', '.join(map(repr, unknown))} is not a "
                          "configuration this config measures (`<experiment>/<its folder under "
                          "results/runs>`, e.g. my_model/glibc/cpu)")


def check_environments(config):
    """A knob that must be proven by its effect needs a way to observe it."""
    from knobs.effects import EFFECTS
    from knobs.environment import without_intel_openmp

    for name, spec in config["environments"].items():
        for variable in without_intel_openmp(spec):
            raise ConfigError(
                f"config error: environments.{name}.env.{variable}: Intel's OpenMP alone "
                "reads it (GNU OpenMP would ignore it without a word). Fix: add "
                "`preload: [libiomp5.so]` to the environment (the intel-openmp wheel)")
        required = spec.get("require_effect", False)
        knobs = list(spec.get("env", {})) + list(spec.get("preload", []))
        for knob in knobs if required is True else required or []:
            if knob not in knobs:
                raise ConfigError(f"config error: environments.{name}.require_effect: {knob!r} "
                                  f"is not one of its knobs ({', '.join(knobs) or 'none'})")
            if knob in spec.get("env", {}) and knob not in EFFECTS:
                raise ConfigError(
                    f"config error: environments.{name}.require_effect: {knob} has no effect "
                    f"check, so it can only be proven present; knobs with one: preloads, "
                    f"{', '.join(sorted(EFFECTS))}")


def check_benchmark(config, name):
    """A section under `benchmarks:`: its module exists, its names refer to something, and
    its name is its own."""
    section = config["benchmarks"][name]
    key = f"benchmarks.{name}"
    taken = {x.name: figure for x in _experiments({**config, "benchmarks": {}})
             for figure in [x.name, *x.figures]}
    if name in taken or name in WRITTEN or name.endswith("_ops"):
        raise ConfigError(f"config error: {key}: the name {name!r} is taken (by a table or a "
                          f"figure the workflow writes); name it otherwise")
    if finder.is_path(section["module"]) and not os.path.isfile(section["module"]):
        raise ConfigError(f"config error: {key}.module: {section['module']!r} is not a file "
                          f"(a path relative to {os.getcwd()})")
    try:
        finder.file_of(section["module"])
    except FileNotFoundError as error:
        raise ConfigError(f"config error: {key}.module: {error}")
    known("environment (define it under `environments`, or use one of config/environments.yaml)",
          section["environments"], config["environments"], f"{key}.environments")
    baseline = section["baseline"]
    baseline = baseline if isinstance(baseline, dict) else {"environment": baseline}
    allowed = {"environment": section["environments"], "device": section["devices"],
               **section.get("grid", {})}
    for column, value in baseline.items():
        if value not in allowed.get(column, []):
            raise ConfigError(f"config error: {key}.baseline: {column}={value!r} is not among "
                              f"the configurations it runs ({column}: {allowed.get(column)})")
