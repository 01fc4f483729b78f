"""The copy step's config section (`copy:`): its schema, the configurations it asks for (every
framework under every environment, on every device, for every input kind; each baseline's A/A
twin; the copy limit's references; the fault probe at every output size, in the same rounds)
and the checks a schema cannot make."""

import math
from pathlib import Path

from knobs.benchmarks.copy import frameworks
from knobs.config_check import ConfigError, known
from knobs.experiments import Configuration, Evidence, Experiment, twins

# The copy step's order names, as the runner's: ascending is the batches as given.
ORDER = {"shuffled": "shuffled", "ascending": "given", "descending": "reversed"}
HERE = Path(__file__).resolve().parent
# Each figure's caption in the report, and its table's (reStructuredText beside this file).
FIGURES = {name: (HERE / f"{name}.rst").read_text() for name in ("copy_step", "copy_model")}
TABLE = (HERE / "table.rst").read_text()

SECTION_SCHEMA = """
description: The Theano copy step - the identity function over image batches.
type: object
additionalProperties: false
required: [frameworks, environments, batches]
properties:
  frameworks:
    description: Frameworks whose identity function is timed (one module each in scripts/knobs/benchmarks/copy/frameworks/).
    $ref: "#/$defs/names"
  environments:
    description: Names from `environments` to run every framework under.
    $ref: "#/$defs/names"
  devices:
    description: >-
      cpu: host array in, host array out; gpu: host array in, through the GPU, host array
      out. Each framework runs on the devices scripts/knobs/benchmarks/copy/frameworks/__init__.py gives it.
    type: array
    items: {enum: [cpu, gpu]}
    minItems: 1
    uniqueItems: true
    default: [cpu]
  batches:
    type: array
    minItems: 1
    uniqueItems: true
    items: {type: integer, minimum: 1}
  image:
    description: Channels, height, width of one float32 image.
    type: array
    items: {type: integer, minimum: 1}
    minItems: 3
    maxItems: 3
    default: [3, 448, 448]
  inputs:
    type: array
    items: {enum: [random, zeros]}
    minItems: 1
    uniqueItems: true
    default: [random]
  reps:
    description: Repetitions, each in a separate process.
    type: integer
    minimum: 1
    default: 3
  warmup:
    type: integer
    minimum: 0
    default: 5
  calls:
    description: Timed calls per batch and rep.
    type: integer
    minimum: 1
    default: 30
  threads:
    description: Threads each measured process may use (OMP_NUM_THREADS and friends).
    type: integer
    minimum: 1
    default: 1
  order:
    description: Order of batches inside a process; shuffled uses a recorded permutation per rep.
    enum: [shuffled, ascending, descending]
    default: shuffled
  baseline:
    description: >-
      Knob values that name the baseline; every configuration is compared with the one
      equal to it but for these (default: the same framework under glibc).
    type: object
    additionalProperties: false
    default: {environment: glibc}
    properties:
      framework: {$ref: "#/$defs/name"}
      environment: {$ref: "#/$defs/name"}
  limit:
    description: >-
      The copy limit per batch is the fastest median of these frameworks, measured in the
      same run, in the row's own environment where it is listed here (an environment can
      change the copy itself, e.g. glibc's store path), else in the first listed.
    type: object
    additionalProperties: false
    default: {frameworks: [copyto, numpy], environments: [glibc, tcmalloc]}
    properties:
      frameworks: {$ref: "#/$defs/names"}
      environments: {$ref: "#/$defs/names"}

"""


def experiments(config):
    """The copy step (`copy`) and the fault probe it is explained with (`faults`)."""
    copy = config["copy"]
    acts_on = lambda e: config["environments"][e].get("frameworks", copy["frameworks"])
    devices = lambda f: [d for d in copy["devices"] if d in frameworks.devices(f)]
    grid = [(f, e, d, i) for f in copy["frameworks"] for e in copy["environments"]
            if f in acts_on(e) for d in devices(f) for i in copy["inputs"]]
    limits = [(f, e, d, i) for f in copy["limit"]["frameworks"]
              for e in copy["limit"]["environments"] for d in devices(f) for i in copy["inputs"]]

    def configuration(framework, environment, device, input_kind):
        spec = frameworks.FRAMEWORKS[framework]
        return Configuration(
            "copy", (("framework", framework), ("environment", environment), ("device", device),
                     ("input", input_kind)), "copy",
            {"framework": framework, "batches": copy["batches"], "image": copy["image"],
             "input": input_kind},
            environment, device, spec.runtime, copy["reps"], copy["warmup"], copy["calls"],
            copy["threads"], ORDER[copy["order"]], needs=spec.needs(),
            gpu_library=spec.gpu_library if device == "gpu" else None)

    measured = [configuration(*c) for c in sorted(set(grid))]
    measured += twins(config, measured, copy["baseline"])
    measured += [configuration(*c) for c in sorted(set(limits) - set(grid))]
    baseline_environment = copy["baseline"].get("environment", "glibc")
    # One evidence file per framework, a section per device (built on the GPU where it runs).
    evidence = [Evidence("copy", f, configuration(f, baseline_environment, devices(f)[-1], "random"),
                         tuple(devices(f)))
                for f in copy["frameworks"] if frameworks.FRAMEWORKS[f].graph and devices(f)]
    settings = {"limit": copy["limit"], "frameworks": copy["frameworks"],
                "image": copy["image"], "environments": config["environments"]}
    return [Experiment("copy", "batch", copy["baseline"], measured, evidence, needs=("faults",),
                       sizes=("bytes",), plugin="copy", settings=settings, figures=FIGURES, table_caption=TABLE),
            _faults(config)]


def _faults(config):
    """What a page fault costs here, measured in the same rounds as the copies it explains."""
    copy = config["copy"]
    image_bytes = 4 * math.prod(copy["image"])  # float32
    sizes = [batch * image_bytes for batch in sorted(set(copy["batches"]))]  # each output's
    measured = [Configuration("faults", (("device", "cpu"),), "faults", {"sizes": sizes},
                              copy["baseline"].get("environment", "glibc"), "cpu", "numpy",
                              copy["reps"], 2, 10, needs=("numpy",))]
    return Experiment("faults", "case", {}, measured, sizes=("bytes",), reference=True,
                      plugin="faults")


def check(config, available_bytes=None):
    """Names must refer to something, and the largest batch must fit in memory."""
    from knobs import machine

    environments = config["environments"]
    copy = config["copy"]
    where = "environment (define it under `environments`)"
    known(where, copy["environments"], environments, "copy.environments")
    known(where, copy["limit"]["environments"], environments, "copy.limit.environments")
    known("framework (add a module in scripts/knobs/benchmarks/copy/frameworks/ or "
          "studies/<study>/frameworks/)", copy["frameworks"], frameworks.FRAMEWORKS,
          "copy.frameworks")
    known("framework", copy["limit"]["frameworks"], frameworks.FRAMEWORKS,
          "copy.limit.frameworks")
    for name, spec in environments.items():
        known("framework", spec.get("frameworks", []), frameworks.FRAMEWORKS,
              f"environments.{name}.frameworks")
    if "environment" in copy["baseline"]:
        known(where, [copy["baseline"]["environment"]], environments, "copy.baseline.environment")
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


def table_columns(table, settings, tables):
    from knobs.benchmarks.copy import model

    return model.copy_columns(table, settings, tables)


def same_work(comparison, configs):
    """For `make compare`: the work each compared copy did, where it did the same in both sets
    (knobs/benchmarks/copy/model.py)."""
    from knobs.benchmarks.copy import model

    return model.same_work(comparison, configs)


def draw(figure, inputs, settings, config, png, svg):
    from knobs.benchmarks.copy import figures

    figures.draw(figure, inputs, settings, config, png, svg)
