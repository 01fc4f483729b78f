"""The hourglass's config section (`hourglass:`): its schema, the configurations it asks for
(TensorFlow's seed, ladder, ablations and variations, or a grid; PyTorch's variants under each
environment; the baseline's A/A twin; the matmul peak in the same rounds), the pairs whose
ratio gets a verdict (each rung against the one before, ...), the checks a schema cannot
make, the table's own columns and the figures."""

from pathlib import Path

from knobs.benchmarks.hourglass import plan
from knobs.benchmarks.hourglass.network import (TF_KNOBS, TORCH_GPU_ONLY, check_size,
                                                parse_tf_variant, parse_torch_variant,
                                                peak_precision, precision_of)
from knobs.config_check import ConfigError, known
from knobs.experiments import TWIN, Configuration, Experiment, twins

HERE = Path(__file__).resolve().parent
SIZE = ("stacks", "resolution", "batch", "features", "joints")
# Each figure's caption in the report, and its table's (reStructuredText beside this file).
FIGURES = {name: (HERE / f"{name}.rst").read_text()
           for name in ("hourglass_ladder", "hourglass_ops", "hourglass_why", "hourglass_gap")}
TABLE = (HERE / "table.rst").read_text()

SECTION_SCHEMA = """
$defs:
  tf_knobs:
    type: object
    additionalProperties: false
    properties:
      execution: {enum: [session, function, xla]}
      input:
        description: >-
          feed_dict: float32 host arrays handed to every call; feed_float64: float64 host
          arrays (np.random.rand, as the seed fed), converted to float32 on every call;
          dataset / prefetch: tf.data; resident: the batch already on the device.
        enum: [feed_dict, feed_float64, dataset, prefetch, resident]
      batch_norm: {enum: [unfused, fused]}
      data_format: {enum: [NHWC, NCHW]}
      precision:
        description: float32, or mixed precision (float32 variables, narrow convolutions)
        enum: [float32, bfloat16, float16]
      environment: {$ref: "#/$defs/name"}
  tf_knobs_full:
    $ref: "#/$defs/tf_knobs"
    required: [execution, input, batch_norm, data_format, environment]
    unevaluatedProperties: false
description: >-
  The stacked hourglass, TensorFlow against PyTorch, knob by knob (a framework left out
  is not run).
type: object
additionalProperties: false
anyOf: [{required: [tensorflow]}, {required: [torch]}]
properties:
  stacks: {type: integer, minimum: 1, default: 2}
  resolution: {type: integer, minimum: 1, default: 128}
  batch: {type: integer, minimum: 1, default: 2}
  features: {type: integer, minimum: 2, default: 256}
  joints: {type: integer, minimum: 1, default: 16}
  reps: {type: integer, minimum: 1, default: 1}
  warmup: {type: integer, minimum: 1, default: 5}
  steps: {type: integer, minimum: 1, default: 20}
  threads: {type: integer, minimum: 1, default: 2}
  inter_op_threads: {type: integer, minimum: 1, default: 1}
  peak_size:
    description: >-
      The side of the matmul peak's square matrices (unset: 2048, on a GPU 8192); large
      enough that the peak is the machine's, not its call overhead.
    type: integer
    minimum: 64
  order:
    description: >-
      Order of the two phases inside a process (recorded as each phase's position):
      rotated alternates forward-first and train-first from one rep to the next; given
      runs forward first, reversed train first; shuffled draws a recorded order per rep.
    enum: [given, reversed, shuffled, rotated]
    default: rotated
  devices:
    type: array
    items: {enum: [cpu, gpu]}
    minItems: 1
    default: [cpu]
  tensorflow:
    type: object
    additionalProperties: false
    required: [seed]
    properties:
      seed: {$ref: "#/$defs/tf_knobs_full"}
      ladder: {type: array, items: {$ref: "#/$defs/tf_knobs"}, default: []}
      ablate: {type: boolean, default: true}
      variations: {type: array, items: {$ref: "#/$defs/tf_knobs"}, default: []}
      grid: {type: boolean, default: false}
      values:
        type: object
        additionalProperties: false
        properties:
          execution: {type: array, minItems: 1, items: {$ref: "#/$defs/tf_knobs/properties/execution"}}
          input: {type: array, minItems: 1, items: {$ref: "#/$defs/tf_knobs/properties/input"}}
          batch_norm: {type: array, minItems: 1, items: {$ref: "#/$defs/tf_knobs/properties/batch_norm"}}
          data_format: {type: array, minItems: 1, items: {$ref: "#/$defs/tf_knobs/properties/data_format"}}
          precision: {type: array, minItems: 1, items: {$ref: "#/$defs/tf_knobs/properties/precision"}}
          environment: {$ref: "#/$defs/names"}
  torch:
    type: object
    additionalProperties: false
    required: [variants]
    properties:
      variants:
        description: >-
          eager, or knobs joined by '-' in this order: channels_last, cudnn_benchmark
          (GPU), amp_bf16, amp_fp16 (GPU), compile; e.g. channels_last-amp_bf16.
        type: array
        minItems: 1
        uniqueItems: true
        items: {type: string, pattern: "^[a-z0-9_]+(-[a-z0-9_]+)*$"}
      environments: {$ref: "#/$defs/names", default: [glibc]}
  baseline:
    description: The configuration every other is compared with.
    type: object
    additionalProperties: false
    default: {framework: torch, variant: eager, environment: glibc}
    properties:
      framework: {enum: [tensorflow, torch]}
      variant: {type: string}
      environment: {$ref: "#/$defs/name"}

"""


def experiments(config):
    """The hourglass (`hourglass`) and the matmul peak it is compared with (`peak`)."""
    hourglass = config["hourglass"]
    size = {key: hourglass[key] for key in (*SIZE, "threads", "inter_op_threads")}
    measured = [
        Configuration(
            "hourglass", (("framework", entry["framework"]), ("variant", entry["variant"]),
                          ("environment", entry["environment"]), ("device", device)),
            "hourglass", {"framework": entry["framework"], "variant": entry["variant"], **size},
            entry["environment"], device, entry["framework"], hourglass["reps"],
            hourglass["warmup"], hourglass["steps"], hourglass["threads"], hourglass["order"],
            trace=True,
            needs=(entry["framework"],),
            gpu_library=entry["framework"] if device == "gpu" else None)
        for entry in plan.full_plan(hourglass) for device in hourglass["devices"]]
    measured += twins(config, measured, hourglass["baseline"])
    comparisons = [{**c, "configuration": dict(zip(plan.COMPARED, c["configuration"])),
                    "reference": dict(zip(plan.COMPARED, c["reference"]))}
                   for c in plan.comparisons(hourglass)]
    settings = {"plan": plan.full_plan(hourglass), "devices": hourglass["devices"],
                "baseline": hourglass["baseline"]}
    return [Experiment("hourglass", "phase", hourglass["baseline"], measured, needs=("peak",),
                       sizes=SIZE, plugin="hourglass", settings=settings, figures=FIGURES,
                       table_caption=TABLE, comparisons=comparisons),
            _peak(config)]


def _peak(config):
    """The matmul peak the hourglass is compared with, measured in the same run."""
    hourglass = config["hourglass"]
    # The side enters the command only where the config sets it, so that runs measured
    # before the key existed keep their command and are not measured again.
    params = {"threads": hourglass["threads"],
              **({"size": hourglass["peak_size"]} if "peak_size" in hourglass else {})}
    measured = [
        Configuration("peak", (("device", device),), "peak", params,
                      "glibc", device, "torch", hourglass["reps"], 3, 10, hourglass["threads"],
                      needs=("torch",), gpu_library="torch" if device == "gpu" else None)
        for device in hourglass["devices"]]
    return Experiment("peak", "case", {}, measured, sizes=("n",), reference=True, plugin="peak",
                      table_caption="The matrix-multiply peak measured in the same run: one row "
                      "per timed matmul, per library and precision; the peak of a precision is "
                      "its fastest sample.")


def check(config, available_bytes=None):
    hourglass = config["hourglass"]
    if "glibc" not in config["environments"]:
        raise ConfigError("config error: environments: the hourglass's matmul peak runs under "
                          "`glibc`; define it (glibc: {})")
    errors = check_size(**{k: hourglass[k] for k in SIZE})
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
        known("environment (define it under `environments`)", [entry["environment"]],
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


def _peaks(peak_table):
    """The best GFLOP/s per (host, device, precision) of the matmul peak's runs."""
    peak = peak_table[peak_table["seconds"].notna()]
    gflops = peak["flops"] / peak["seconds"] / 1e9
    return gflops.groupby([peak["host"], peak["device"], peak["precision"]]).max().to_dict()


def table_columns(table, settings, tables):
    """Each configuration's label and figure position (from the plan; one block per device
    where there are several), its knobs, and its FLOP/s against the peak of its precision."""
    plan = {(p["framework"], p["variant"], p["environment"]): p for p in settings["plan"]}
    devices = settings["devices"]
    peaks = _peaks(tables["peak"])

    def label(row):
        environment = row["environment"].removesuffix(TWIN)
        entry = plan[(row["framework"], row["variant"], environment)]
        text = entry["label"] + (" (A/A twin)" if row["environment"].endswith(TWIN) else "")
        rung = entry["rung"] + (len(plan) if row["environment"].endswith(TWIN) else 0)
        if len(devices) == 1:
            return text, rung
        return f"[{row['device']}] {text}", devices.index(row["device"]) * 2 * len(plan) + rung

    configs = table.drop_duplicates("configuration").set_index("configuration")
    placed = {c: label(row) for c, row in configs.iterrows()}
    table["label"] = table["configuration"].map(lambda c: placed[c][0])
    table["rung"] = table["configuration"].map(lambda c: placed[c][1])
    knobs = {c: (parse_tf_variant(row["variant"]) if row["framework"] == "tensorflow"
                 else dict.fromkeys(TF_KNOBS)) for c, row in configs.iterrows()}
    for key in TF_KNOBS:
        table[key] = table["configuration"].map(lambda c: knobs[c][key])
    table["precision"] = [precision_of(f, v) for f, v in zip(table["framework"], table["variant"])]
    measured = {}
    for (host, device, precision), gflops in peaks.items():
        measured.setdefault((host, device), {})[precision] = gflops
    table["peak_precision"] = [
        peak_precision(p, d, measured.get((h, d), {}))
        for p, d, h in zip(table["precision"], table["device"], table["host"])]
    table["peak_gflops"] = [measured.get((h, d), {}).get(p) for h, d, p in
                            zip(table["host"], table["device"], table["peak_precision"])]
    table = table.rename(columns={"value": "loss",
                                  "protobuf_implementation_version": "protobuf_implementation"})
    if "flops" in table:
        table["gflops"] = table["flops"] / table["seconds"] / 1e9
        table["fraction_of_peak"] = table["gflops"] / table["peak_gflops"]
    return table.sort_values(["rung", "phase", "rep", "sample"])




def draw(figure, inputs, settings, config, png, svg):
    from knobs.benchmarks.hourglass import figures

    figures.draw(figure, inputs, settings, config, png, svg)
