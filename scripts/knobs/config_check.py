"""Config validation with messages that name the key and what is allowed.

The JSON schema catches shapes and types; the checks here catch what a schema cannot: a name
that refers to nothing, and a size that cannot fit in this machine's memory.
"""

import jsonschema
import yaml

from knobs import frameworks, machine


class ConfigError(ValueError):
    pass


def _key(path):
    return ".".join(str(part) if not isinstance(part, int) else f"[{part}]"
                    for part in path).replace(".[", "[") or "(top level)"


def check_schema(config, schema_path):
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
    if not any(key in config for key in ("copy", "hourglass")):
        raise ConfigError("config error: the config runs no experiment: add `copy` or `hourglass`")
    if "copy" in config:
        check_copy(config, available_bytes)
    if "hourglass" in config:
        check_hourglass(config)


def check_copy(config, available_bytes=None):
    """Names must refer to something, and the largest batch must fit in memory."""
    environments = config["environments"]
    copy = config["copy"]
    _known("environment (define it under `environments`)", copy["environments"],
           environments, "copy.environments")
    _known("environment (define it under `environments`)", copy["limit"]["environments"],
           environments, "copy.limit.environments")
    _known("framework (add a module in scripts/knobs/frameworks/)", copy["frameworks"],
           frameworks.RUNTIMES, "copy.frameworks")
    _known("framework", copy["limit"]["frameworks"], frameworks.RUNTIMES,
           "copy.limit.frameworks")
    for name, spec in environments.items():
        _known("framework", spec.get("frameworks", []), frameworks.RUNTIMES,
               f"environments.{name}.frameworks")
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
    from knobs.hourglass import check_size, plan

    hourglass = config["hourglass"]
    size = {k: hourglass[k] for k in ("stacks", "resolution", "batch", "features", "joints")}
    errors = check_size(**size)
    if errors:
        raise ConfigError("config error: hourglass: " + "; ".join(errors))
    entries = plan.full_plan(hourglass)
    for entry in entries:
        _known("environment (define it under `environments`)", [entry["environment"]],
               config["environments"], f"hourglass.{entry['framework']} ({entry['label']})")
        if "NCHW" in entry["variant"] and "cpu" in hourglass["devices"]:
            raise ConfigError(
                f"config error: hourglass.tensorflow ({entry['label']}): data_format NCHW "
                "needs a GPU: TensorFlow's CPU convolutions and pooling take NHWC only. "
                "Use NHWC, or devices: [gpu].")
    baseline = hourglass["baseline"]
    if not any(all(entry[k] == baseline[k] for k in baseline) for entry in entries):
        raise ConfigError(f"config error: hourglass.baseline: {baseline} is not among the "
                          "configurations the config runs")
