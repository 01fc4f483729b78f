"""Config validation: every shipped config dry-runs; every bad one fails naming its key."""

import copy

import pytest
import yaml

from conftest import REPO, TINY, dry_run, load_yaml, write_config
from knobs.benchmarks.copy.section import check as check_copy
from knobs.config_check import ConfigError

SHIPPED = sorted((REPO / "config").glob("*.yaml"))
SHIPPED = [path for path in SHIPPED
           if not path.name.endswith("schema.yaml") and path.name != "environments.yaml"]
SHIPPED += [TINY, REPO / "tests" / "slurm" / "tiny_slurm.yaml", REPO / "results" / "paper" / "config.yaml",
            REPO / "results" / "paper" / "gpu" / "config.yaml"]


@pytest.mark.parametrize("configfile", SHIPPED, ids=lambda p: p.name)
def test_shipped_config_dry_runs(configfile, tmp_path):
    dry_run(configfile, tmp_path)


def _set(config, dotted, value):
    *parents, last = dotted.split(".")
    node = config
    for key in parents:
        node = node.setdefault(key, {})
    node[last] = value


BAD = [
    # (change, the key the message must name, a word of what is allowed)
    ({"copyy": {}}, "copyy", "Additional properties"),
    ({"copy.batchs": [1, 2]}, "batchs", "Additional properties"),
    ({"copy.reps": "three"}, "copy.reps", "integer"),
    ({"copy.batches": [8, 0]}, "copy.batches[1]", "minimum"),
    ({"copy.batches": [-4]}, "copy.batches[0]", "minimum"),
    ({"copy.inputs": ["ones"]}, "copy.inputs[0]", "random, zeros"),
    ({"copy.environments": ["glibc", "tcmaloc"]}, "copy.environments", "tcmaloc"),
    ({"copy.frameworks": ["numpy", "caffe"]}, "copy.frameworks", "scripts/knobs/benchmarks/copy/frameworks"),
    ({"copy.limit": {"frameworks": ["copyto"], "environments": ["nope"]}},
     "copy.limit.environments", "nope"),
    ({"environments.glibc": {"env": {"MALLOC_ARENA_MAX": 2}}},
     "environments.glibc.env.MALLOC_ARENA_MAX", "string"),
    ({"environments.glibc": {"preloads": ["x.so"]}}, "environments.glibc", "preloads"),
    ({"copy.batches": [10**6]}, "copy.batches", "memory"),
    ({"hourglass.resolution": 64, "hourglass.batch": 1}, "hourglass", "innermost"),
    ({"hourglass.resolution": 100}, "hourglass", "multiple of 64"),
    ({"hourglass.tensorflow.seed.data_format": "NCHW"}, "hourglass.tensorflow", "needs a GPU"),
    ({"hourglass.tensorflow.ladder": [{"batch_norm": "fusd"}]},
     "hourglass.tensorflow.ladder[0].batch_norm", "unfused, fused"),
    ({"hourglass.tensorflow.variations": [{"environment": "tcmaloc"}]},
     "hourglass.tensorflow", "tcmaloc"),
    ({"hourglass.torch.variants": ["eager", "jit"]}, "hourglass.torch.variants", "compile"),
    ({"hourglass.torch.variants": ["amp_bf16-channels_last"]}, "hourglass.torch.variants",
     "channels_last-amp_bf16"),
    ({"hourglass.torch.variants": ["amp_bf16-amp_fp16"]}, "hourglass.torch.variants",
     "choose one"),
    ({"hourglass.torch.variants": ["cudnn_benchmark"]}, "hourglass.torch.variants",
     "devices: [gpu]"),
    ({"hourglass.tensorflow.variations": [{"precision": "fp8"}]},
     "hourglass.tensorflow.variations[0].precision", "bfloat16"),
    ({"copy.devices": ["gpu"], "copy.frameworks": ["numpy"]}, "copy.frameworks",
     "add that to copy.devices"),
    ({"copy.frameworks": ["torch_pinned"]}, "copy.frameworks", "gpu only"),
    ({"copy.devices": ["cpu", "gpu"]}, "copy.limit.frameworks", "memcpy_pinned"),
    ({"copy.devices": ["tpu"]}, "copy.devices[0]", "cpu, gpu"),
    ({"environments.private": {"env": {"TF_GPU_THREAD_MODE": "gpu_private"}},
      "hourglass.tensorflow.variations": [{"environment": "private"}]},
     "hourglass.tensorflow", "acts on a GPU only"),
    ({"hourglass.baseline": {"framework": "torch", "variant": "channels_last",
                             "environment": "glibc"}}, "hourglass.baseline", "not among"),
    ({"statistics.alpha": 0.05}, "statistics", "alpha"),
    ({"environments.tcmalloc.require_effect": ["libjemalloc.so.2"]},
     "environments.tcmalloc.require_effect", "not one of its knobs"),
    ({"environments.quoting.require_effect": True}, "environments.quoting.require_effect",
     "no effect check"),
    ({"pass_env": ["LD LIBRARY PATH"]}, "pass_env[0]", "does not match"),
    ({"benchmarks.toy": {"module": "nowhere/toy.py", "environments": ["glibc"]}},
     "benchmarks.toy.module", "is not a file"),
    ({"benchmarks.copy": {"module": "copy", "environments": ["glibc"]}}, "benchmarks.copy",
     "is taken"),
    ({"benchmarks.summary": {"module": "peak", "environments": ["glibc"]}}, "benchmarks.summary",
     "is taken"),
    ({"benchmarks.toy": {"module": "peak", "environments": ["glibc", "tcmaloc"]}},
     "benchmarks.toy.environments", "tcmaloc"),
    ({"benchmarks.toy": {"module": "peak", "environments": ["glibc"], "baseline": "tcmalloc"}},
     "benchmarks.toy.baseline", "not among"),
    ({"benchmarks.toy": {"module": "peak", "environments": ["glibc"], "runtime": "caffe"}},
     "benchmarks.toy.runtime", "numpy, torch"),
    ({"benchmarks.toy": {"module": "peak", "environments": ["glibc"],
                         "grid": {"n": [64, "a/b"]}}},
     "benchmarks.toy.grid.n[1]", "not valid under any"),
    ({"more_reps": {"copy/numpy/glibcc/cpu/random": 5}}, "more_reps", "glibcc"),
    ({"more_reps": {"copy/numpy/glibc/cpu/random": 0}}, "more_reps", "minimum"),
]


@pytest.mark.parametrize("change,key,allowed", BAD, ids=[b[1] for b in BAD])
def test_bad_config_fails_naming_its_key(change, key, allowed, tmp_path):
    config = copy.deepcopy(load_yaml(TINY))
    for dotted, value in change.items():
        _set(config, dotted, value)
    with pytest.raises(Exception) as failure:
        dry_run(write_config(tmp_path, config), tmp_path)
    message = str(failure.value)
    assert key in message, message
    assert allowed in message, message
    assert not (tmp_path / "results").exists()


def test_memory_check_uses_the_machine_size():
    from knobs.config_check import fill_defaults

    config = fill_defaults(load_yaml(REPO / "config" / "config.yaml"))
    largest = max(config["copy"]["batches"]) * 3 * 448 * 448 * 4
    check_copy(config, available_bytes=3 * largest + 1)
    with pytest.raises(ConfigError, match="copy.batches"):
        check_copy(config, available_bytes=3 * largest - 1)


@pytest.mark.parametrize("configfile", SHIPPED, ids=lambda p: p.name)
def test_defaults_filled_without_snakemake_match_snakemakes(configfile, tmp_path):
    """The workflow fills the schema's defaults itself (Snakemake's `validate` reads a schema
    file, and a GPU node runs without Snakemake): it must come to what `validate` makes of the
    same schema (the core one joined with each section's)."""
    from snakemake.utils import validate

    from knobs import config_check

    joined = config_check.schema()
    (tmp_path / "schema.yaml").write_text(yaml.safe_dump(joined))
    config = load_yaml(configfile)
    theirs = copy.deepcopy(config)
    validate(theirs, str(tmp_path / "schema.yaml"))
    assert config_check.fill_schema_defaults(copy.deepcopy(config), joined) == theirs
