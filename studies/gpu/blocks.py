"""The GPU run: the copy step through the GPU and PyTorch's hourglass at the seed's size, on an
NVIDIA H200 (results/paper/gpu, its second session in gpu/second, the two compared in gpu/aa).

Each block's function takes its result set's Tables (knobs/blocks.py) and returns its text;
BLOCKS names the set each block is written from."""


import pandas as pd

from knobs import figures
from knobs.benchmarks.hourglass.network import SEED_SECONDS
from knobs.blocks import comparison_text, first_of, interval, machine_kind_short, ms
from studies.shared import copy_faults, copy_point, hourglass_sentences, hourglass_table


def gpu_machine(t):
    m, torch_steps = t.machine, t.hourglass[t.hourglass["framework"] == "torch"]
    versions = []
    if first_of(torch_steps, "torch_version"):
        versions.append(f"PyTorch {first_of(torch_steps, 'torch_version')} (CUDA "
                        f"{first_of(torch_steps, 'cuda')}, cuDNN "
                        f"{int(first_of(torch_steps, 'cudnn'))})")
    if first_of(t.copy, "pytensor_jax_version"):
        versions.append(f"PyTensor {first_of(t.copy, 'pytensor_jax_version')} through JAX "
                        f"{first_of(t.copy, 'jax')}")
    if first_of(t.hourglass, "tensorflow_version"):
        versions.append(f"TensorFlow {first_of(t.hourglass, 'tensorflow_version')}")
    return (f"{m['gpu']}, on a {m['cores']}-core {m['cpu']} VM ({machine_kind_short(m)}), "
            f"{m['os']}, kernel {m['kernel']}, {m['glibc']}, THP `{m['thp_enabled']}`; "
            + "; ".join(versions) + f"; config \"{t.config['label']}\": "
            f"{figures.span(t.summary['processes'])} processes per configuration, run in rounds")


def gpu_copy(t):
    """Each round trip through the GPU at batch 8 and 16: its step, its faults, each
    environment against glibc, and its rate against the pinned-memcpy limit."""
    limit = t.copy[t.copy["device"] == "gpu"].groupby("batch")["limit_gbps"].median()
    if not {8, 16} <= set(limit.index):
        return "The GPU's copy step needs batches 8 and 16 in this table."
    lines = ["| round trip | environment | b8 -> b16 (ms, step) | faults/call b16 | b16 against "
             "glibc | GB/s of output at b16 (limit) |", "|---|---|---|---|---|---|"]
    for framework in t.config["copy"]["frameworks"] + t.config["copy"]["limit"]["frameworks"]:
        for environment in t.config["copy"]["environments"]:
            b8, b16 = (copy_point(t, framework, environment, b, "gpu") for b in (8, 16))
            if b8 is None or b16 is None:
                continue
            against = "-" if environment == "glibc" else f"{interval(b16)} {b16['verdict']}"
            lines.append(
                f"| {framework} | {environment} | {ms(b8['median'])} -> {ms(b16['median'])} "
                f"(**{b16['median'] / b8['median']:.1f}x**) "
                f"| {copy_faults(t, framework, environment, 16, 'gpu'):,.0f} | {against} "
                f"| {b16['bytes'] / b16['median'] / 1e9:.1f} ({limit[16]:.1f}) |")
    return "\n".join(lines)


def gpu_hourglass(t):
    """The GPU's train steps against the seed's, and how much of each step the GPU worked."""
    steps = t.hourglass[(t.hourglass["status"] == "ok") & (t.hourglass["phase"] == "train")
                        & (t.hourglass["device"] == "gpu")]
    lines = []
    for (rung, label, configuration), rows in steps.groupby(["rung", "label", "configuration"]):
        wall, kernels = rows["seconds"].median(), kernel_ms(t, configuration)
        by_process = rows.groupby("rep")["seconds"].median()
        lines.append(
            f"- **{label}**: {ms(wall)} ms per train step by the wall clock ({ms(by_process.min())} "
            f"to {ms(by_process.max())} ms over {len(by_process)} processes), "
            f"{ms(rows['cpu_seconds'].median())} ms of process CPU time; "
            f"{SEED_SECONDS[rows.iloc[0]['framework']] / wall:.1f}x faster than the seed's "
            f"{rows.iloc[0]['framework']} ({ms(SEED_SECONDS[rows.iloc[0]['framework']])} ms on a Titan X "
            f"Pascal); its kernels ran {kernels:.0f} ms in the traced train step "
            f"(summed over the device's streams), {kernels / 1e3 / wall:.0%} of the median step.")
    return "\n".join(lines)


def gpu_comparison(t):
    """The two GPU sessions compared, then the verdicts the prose rests on (each environment
    at the seed's batch 16, each PyTorch knob's train step) side by side."""
    text = comparison_text(t.root / "aa", "Two GPU sessions of the same config (two leases)")
    if not (t.root / "aa" / "verdicts.csv").exists():
        return text
    verdicts = pd.read_csv(t.root / "aa" / "verdicts.csv").astype({"case": str})
    quoted = verdicts[(verdicts["kind"] != "A/A") & (
        ((verdicts["experiment"] == "copy") & (verdicts["case"] == "16"))
        | ((verdicts["kind"] == "torch variant") & (verdicts["case"] == "train")))]
    pairs = [f"{r.label} ({'batch ' if r.experiment == 'copy' else ''}{r.case}): "
             f"{r.ratio_before:.2f}x {r.verdict_before} / {r.ratio_after:.2f}x {r.verdict_after}"
             for r in quoted.itertuples()]
    return text + "\n\nFirst session / second session: " + "; ".join(pairs) + "."


def kernel_ms(t, configuration):
    """A GPU configuration's kernel time per traced train step (ms, mean over processes)."""
    rows = t.hourglass_ops[t.hourglass_ops["configuration"] == configuration]
    return 1e3 * rows.groupby("rep")["seconds"].sum().mean() if len(rows) else float("nan")


BLOCKS = {
    "gpu-machine": ("gpu", gpu_machine),
    "gpu-copy": ("gpu", gpu_copy),
    "gpu-hourglass-table": ("gpu", hourglass_table),
    "gpu-hourglass-verdicts": ("gpu", hourglass_sentences),
    "gpu-hourglass": ("gpu", gpu_hourglass),
    "gpu-aa": ("gpu", gpu_comparison),
}
