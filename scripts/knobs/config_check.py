"""Config validation with messages that name the key and what is allowed.

The JSON schema catches shapes and types; the checks here catch what a schema cannot: a name
that refers to nothing, and a size that cannot fit in this machine's memory.
"""

import yaml

from knobs import frameworks, machine


class ConfigError(ValueError):
    pass


def _key(path):
    return ".".join(str(part) if not isinstance(part, int) else f"[{part}]"
                    for part in path).replace(".[", "[") or "(top level)"


def check_schema(config, schema_path):
    import jsonschema  # here, not at the top: scripts/gpu_paper.py runs where it may be missing

    with open(schema_path) as handle:
        schema = yaml.safe_load(handle)
    validator = jsonschema.Draft202012Validator(schema)
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
        raise ConfigError("config error (see config/schema.yaml):\n" + "\n".join(lines))


def _known(what, names, known, key):
    unknown = [name for name in names if name not in known]
    if unknown:
        raise ConfigError(f"config error: {key}: {', '.join(map(repr, unknown))} is not a "
                          f"known {what}; known: {', '.join(sorted(known))}")


def check_references(config, available_bytes=None):
    """Names must refer to something, and sizes must be possible."""
    if not any(config.get(key) for key in ("copy", "hourglass", "benchmarks")):
        raise ConfigError("config error: the config runs no experiment: add `copy`, "
                          "`hourglass` or a section under `benchmarks`")
    check_environments(config)
    if "copy" in config:
        check_copy(config, available_bytes)
    if "hourglass" in config:
        check_hourglass(config)
    for name in config.get("benchmarks", {}):
        check_benchmark(config, name)
    check_more_reps(config)


def check_more_reps(config):
    """Every configuration `more_reps` names is one the config measures."""
    from knobs import experiments

    if not config.get("more_reps"):
        return
    known = {f"{name}/{c.path}" for name, x in experiments.experiments(
        {**config, "more_reps": {}}).items() for c in x.configurations}
    unknown = sorted(set(config["more_reps"]) - known)
    if unknown:
        raise ConfigError(f"config error: more_reps: {', '.join(map(repr, unknown))} is not a "
                          "configuration this config measures (`<experiment>/<its folder under "
                          "results/runs>`, e.g. copy/torch/glibc/cpu/random)")


def check_environments(config):
    """A knob that must be proven by its effect needs a way to observe it."""
    from knobs.environment import EFFECTS

    for name, spec in config["environments"].items():
        _known("framework", spec.get("frameworks", []), frameworks.FRAMEWORKS,
               f"environments.{name}.frameworks")
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
    """A user's benchmark: its module exists, its names refer to something."""
    import os

    from knobs.benchmarks import BUILT_IN

    section = config["benchmarks"][name]
    key = f"benchmarks.{name}"
    if section["module"] not in BUILT_IN and not os.path.isfile(section["module"]):
        raise ConfigError(f"config error: {key}.module: {section['module']!r} is not a file "
                          f"(a path relative to {os.getcwd()}, or one of {', '.join(BUILT_IN)})")
    _known("environment (define it under `environments`)", section["environments"],
           config["environments"], f"{key}.environments")
    baseline = section["baseline"]
    baseline = baseline if isinstance(baseline, dict) else {"environment": baseline}
    allowed = {"environment": section["environments"], "device": section["devices"],
               **section.get("grid", {})}
    for column, value in baseline.items():
        if value not in allowed.get(column, []):
            raise ConfigError(f"config error: {key}.baseline: {column}={value!r} is not among "
                              f"the configurations it runs ({column}: {allowed.get(column)})")


def check_copy(config, available_bytes=None):
    """Names must refer to something, and the largest batch must fit in memory."""
    environments = config["environments"]
    copy = config["copy"]
    _known("environment (define it under `environments`)", copy["environments"],
           environments, "copy.environments")
    _known("environment (define it under `environments`)", copy["limit"]["environments"],
           environments, "copy.limit.environments")
    _known("framework (add a module in scripts/knobs/frameworks/)", copy["frameworks"],
           frameworks.FRAMEWORKS, "copy.frameworks")
    _known("framework", copy["limit"]["frameworks"], frameworks.FRAMEWORKS,
           "copy.limit.frameworks")
    if "environment" in copy["baseline"]:
        _known("environment (define it under `environments`)",
               [copy["baseline"]["environment"]], environments, "copy.baseline.environment")
    for name in copy["frameworks"]:
        if not set(frameworks.devices(name)) & set(copy["devices"]):
            raise ConfigError(f"config error: copy.frameworks: {name} runs on "
                              f"{', '.join(frameworks.devices(name))} only; add that to "
                              f"copy.devices (now {copy['devices']}) or remove {name}")
    for device in copy["devices"]:
        for key in ("frameworks", "limit.frameworks"):
            names = copy[key] if key == "frameworks" else copy["limit"]["frameworks"]
            if not any(device in frameworks.devices(name) for name in names):
                able = sorted(n for n in frameworks.FRAMEWORKS if device in frameworks.devices(n))
                raise ConfigError(f"config error: copy.{key}: none of {names} runs on device "
                                  f"{device}; add one that does: {', '.join(able)}")
    channels, height, width = copy["image"]
    largest = max(copy["batches"]) * channels * height * width * 4
    available = machine.available_memory_bytes() if available_bytes is None else available_bytes
    # The input, the output and the framework's own copy of the input may all be alive.
    if 3 * largest > available:
        raise ConfigError(
            f"config error: copy.batches: batch {max(copy['batches'])} of {copy['image']} "
            f"float32 images is {largest / 1e9:.1f} GB; three such buffers must fit in the "
            f"{available / 1e9:.1f} GB of memory available here. Use smaller batches.")


def check_hourglass(config):
    from knobs.hourglass import TORCH_GPU_ONLY, check_size, parse_torch_variant, plan

    hourglass = config["hourglass"]
    if "glibc" not in config["environments"]:
        raise ConfigError("config error: environments: the hourglass's matmul peak runs under "
                          "`glibc`; define it (glibc: {})")
    size = {k: hourglass[k] for k in ("stacks", "resolution", "batch", "features", "joints")}
    errors = check_size(**size)
    if errors:
        raise ConfigError("config error: hourglass: " + "; ".join(errors))
    for variant in hourglass.get("torch", {}).get("variants", []):
        try:
            knobs = parse_torch_variant(variant)
        except ValueError as error:
            raise ConfigError(f"config error: hourglass.torch.variants: {error}")
        gpu_only = [k for k in knobs if k in TORCH_GPU_ONLY]
        if gpu_only and "cpu" in hourglass["devices"]:
            raise ConfigError(
                f"config error: hourglass.torch.variants: {variant!r} turns on "
                f"{', '.join(gpu_only)}, which acts on a GPU only, but hourglass.devices "
                f"includes cpu. Use devices: [gpu], or drop it.")
    entries = plan.full_plan(hourglass)
    for entry in entries:
        _known("environment (define it under `environments`)", [entry["environment"]],
               config["environments"], f"hourglass.{entry['framework']} ({entry['label']})")
        gpu_only = [k for k, v in config["environments"][entry["environment"]].get("env", {})
                    .items() if k == "TF_GPU_THREAD_MODE" and v != "global"]
        if gpu_only and "cpu" in hourglass["devices"]:
            raise ConfigError(
                f"config error: hourglass.{entry['framework']} ({entry['label']}): environment "
                f"{entry['environment']} sets TF_GPU_THREAD_MODE, which acts on a GPU only, but "
                "hourglass.devices includes cpu. Use devices: [gpu], or drop it.")
        if "NCHW" in entry["variant"] and "cpu" in hourglass["devices"]:
            raise ConfigError(
                f"config error: hourglass.tensorflow ({entry['label']}): data_format NCHW "
                "needs a GPU: TensorFlow's CPU convolutions and pooling take NHWC only. "
                "Use NHWC, or devices: [gpu].")
    baseline = hourglass["baseline"]
    if not any(all(entry[k] == baseline[k] for k in baseline) for entry in entries):
        raise ConfigError(f"config error: hourglass.baseline: {baseline} is not among the "
                          "configurations the config runs")


def fill_defaults(config, schema_path):
    """The config with the schema's defaults filled in, as Snakemake's `validate` does, for
    scripts that run without Snakemake (scripts/gpu_paper.py)."""
    import copy

    with open(schema_path) as handle:
        schema = yaml.safe_load(handle)
    definitions = schema.get("$defs", {})

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

    return fill(copy.deepcopy(config), schema)
