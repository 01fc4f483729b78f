"""The hourglass (the second seed question): where TensorFlow's 2x against Torch on a
stacked-hourglass training step comes from on a CPU, knob by knob (results/paper).

Each block's function takes its result set's Tables (knobs/blocks.py) and returns its text;
BLOCKS names the set each block is written from."""

import re


from knobs import tables
from knobs.experiments import TWIN
from knobs.blocks import counts, first_of, interval, ms
from studies.shared import hourglass_sentences, hourglass_table, probe_costs


def ruler(t):
    steps = t.hourglass[(t.hourglass["status"] == "ok") & (t.hourglass["phase"] == "train")]
    base = steps[steps["configuration"].str.startswith(baseline_prefix(t))]
    seed = steps[steps["label"].str.startswith("seed")]
    if base.empty or seed.empty:
        return "The ruler needs the TensorFlow seed and PyTorch eager under glibc."
    wall, cpu = seed["seconds"].median(), seed["cpu_seconds"].median()
    torch_wall = base["seconds"].median()
    return (f"TensorFlow's seed setup (`{seed.iloc[0]['variant']}`) takes {ms(wall)} ms per "
            f"train step by the wall clock and {ms(cpu)} ms of process CPU time; PyTorch eager "
            f"takes {ms(torch_wall)} ms by the wall clock. By the wall clock TensorFlow is "
            f"**{wall / torch_wall:.2f}x** PyTorch; measured the seed's way (TensorFlow's CPU "
            f"time against PyTorch's wall time) it is **{cpu / torch_wall:.2f}x**: the ruler "
            f"alone moves the answer by {cpu / wall:.2f}x, against the seed's 2.09x.")


HOURGLASS_MECHANISMS = {
    "input=feed_dict": "float32 arrays: nothing is converted from float64 on each call",
    "batch_norm=fused": "one FusedBatchNorm op per layer instead of moments and elementwise ops",
    "input=dataset": "the batch comes from an iterator inside the graph instead of a feed",
    "execution=function": "tf.function's executor instead of a Session",
    "input=resident": "the batch is already a tensor: no feed or iterator per call",
    "environment=tcmalloc": "tcmalloc instead of glibc's malloc",
    "environment=jemalloc": "jemalloc instead of glibc's malloc",
    "environment=protobuf_python": "pure-Python protobuf",
    "environment=onednn_off": "TensorFlow without its oneDNN kernels",
    "channels_last": "input and weights in channels-last layout",
    "tcmalloc": "tcmalloc instead of glibc's malloc",
    "jemalloc": "jemalloc instead of glibc's malloc",
}


def _knob(label, kind):
    """The knob a comparison changes: `batch_norm=fused`, `channels_last`, `tcmalloc`."""
    if kind == "torch environment":
        return re.search(r"\((\w+)\)", label).group(1)
    if kind == "torch variant":
        return label.removeprefix("torch ").split()[0]
    return label.removeprefix("+ ").removeprefix("last rung without ").removeprefix("last rung + ")


def why_hourglass(t):
    """Every comparison of the train step with what changed inside it: CPU time, faults and
    the op categories that moved (from the traces)."""
    verdicts = t.verdicts[(t.verdicts["experiment"] == "hourglass")
                          & t.verdicts["kind"].isin(["rung", "ablation", "variation",
                                                     "torch variant", "torch environment"])]
    steps = t.hourglass[(t.hourglass["status"] == "ok") & (t.hourglass["phase"] == "train")]
    per_step = steps.groupby("configuration").agg(cpu=("cpu_seconds", "median"),
                                                  faults=("minor_faults", "median"))
    ops = tables.ops_by_category(t.hourglass_ops)
    ops["framework overhead"] = per_step["cpu"].reindex(ops.index) - ops.sum(axis=1)
    lines = []
    for _, row in verdicts[verdicts["case"] == "train"].iterrows():
        mine, theirs = row["configuration"], row["reference"]
        if mine not in per_step.index or theirs not in per_step.index:
            continue
        forward = verdicts[(verdicts["case"] == "forward") & (verdicts["label"] == row["label"])
                           & (verdicts["kind"] == row["kind"])]
        before, after = per_step.loc[theirs], per_step.loc[mine]
        moved = ""
        if mine in ops.index and theirs in ops.index:
            delta = (ops.loc[mine] - ops.loc[theirs]).sort_values(key=abs, ascending=False)
            moved = "; most of it " + ", ".join(f"{name} {1e3 * value:+.0f} ms"
                                                for name, value in delta.head(2).items())
        mechanism = HOURGLASS_MECHANISMS.get(_knob(row["label"], row["kind"]), "")
        lines.append(
            f"- **{row['label']}** ({row['kind']}{': ' + mechanism if mechanism else ''}): "
            f"train {interval(row)}, {row['verdict']}"
            + (f"; forward {interval(forward.iloc[0])}, {forward.iloc[0]['verdict']}"
               if len(forward) else "")
            + f". CPU per train step {ms(before['cpu'])} -> {ms(after['cpu'])} ms{moved}; "
            f"faults per step {before['faults']:,.0f} -> {after['faults']:,.0f}.")
    order = phase_order(t)
    if order:
        lines.append(order)
    return "\n".join(lines)


def baseline_prefix(t):
    """The hourglass baseline's configuration path, less its device: `torch/eager/glibc/`."""
    base = t.config["hourglass"]["baseline"]
    return f"{base['framework']}/{base['variant']}/{base['environment']}/"


def phase_order(t):
    """The forward phase of the baseline when it ran first against when it ran after train."""
    steps = t.hourglass[(t.hourglass["status"] == "ok") & (t.hourglass["phase"] == "forward")
                        & t.hourglass["configuration"].str.startswith(baseline_prefix(t))]
    if steps["position"].nunique() < 2:
        return None
    by = steps.groupby("position").agg(seconds=("seconds", "median"),
                                       faults=("minor_faults", "median"))
    first, after = by.loc[0], by.loc[1]
    text = (f"- **Phase order** ({baseline_prefix(t).strip('/')}): the forward step takes "
            f"{ms(first['seconds'])} ms with {first['faults']:,.0f} faults per step when it runs "
            f"first in its process, {ms(after['seconds'])} ms with {after['faults']:,.0f} faults "
            "after the train steps")
    if first["faults"] > 10 * max(after["faults"], 1):  # the mechanism the faults show
        text += (": freeing the train step's large blocks has raised glibc's mmap threshold "
                 "(it follows the largest block freed, up to 32 MiB), so the forward step's "
                 "buffers come from the heap instead of fresh mappings")
    return text + ". Every ratio above pairs processes of the same round, hence the same order."


def share(row, low, high):
    """A step's faults in ms and as its share, at one cost per fault or a range of them."""
    cost = [low] if low == high else [low, high]
    return (" to ".join(f"{1e3 * row['faults'] * c:.1f}" for c in cost) + " ms = "
            + " to ".join(f"{row['faults'] * c / row['seconds']:.1%}" for c in cost))


def fault_share(t):
    """How much of each hourglass configuration's train step its page faults cost, at the
    fault probe's cost of a 4 KiB fault."""
    if t.faults is None:
        return "No fault probe in this result set."
    cost = probe_costs(t, "4k")
    low, high = cost.min(), cost.max()
    steps = t.hourglass[(t.hourglass["status"] == "ok") & (t.hourglass["phase"] == "train")]
    per = steps.groupby(["framework", "variant", "environment"]).agg(
        faults=("minor_faults", "median"), seconds=("seconds", "median"))
    per = per[~per.index.get_level_values("environment").str.endswith(TWIN)]
    name = [f"{framework} {variant} ({environment})" for framework, variant, environment in per.index]
    few = per["faults"] < 10  # under 0.1 ms: listed together
    parts = [f"{n}: {row['faults']:,.0f} faults, {share(row, low, high)}"
             for n, (_, row), small in zip(name, per.iterrows(), few) if not small]
    if few.any():
        parts.append("fewer than 10 faults per step, so 0.0%: "
                     + ", ".join(n for n, small in zip(name, few) if small))
    at = (f"{1e6 * low:.2f} us" if low == high else
          f"{1e6 * low:.2f} to {1e6 * high:.2f} us (the probe's smallest and largest region)")
    return (f"At {at} per 4 KiB fault, page faults are this much of each median train step: "
            + "; ".join(parts) + ".")


def answer(t):
    """The second seed question in a few lines (the README's answer)."""
    summary = t.summary[(t.summary["experiment"] == "hourglass") & (t.summary["phase"] == "train")
                        & (t.summary["device"] == "cpu")
                        & ~t.summary["environment"].str.endswith(TWIN)]
    labels = t.hourglass.drop_duplicates("configuration").set_index(
        ["framework", "variant", "environment"])["label"]
    summary = summary.assign(label=[labels.get(k) for k in zip(
        summary["framework"], summary["variant"], summary["environment"])])
    seed = summary[summary["label"].str.startswith("seed")].iloc[0]
    tf, torch = (summary[summary["framework"] == f] for f in ("tensorflow", "torch"))
    best_tf, best_torch = tf.loc[tf["median"].idxmin()], torch.loc[torch["median"].idxmin()]
    base = t.config["hourglass"]["baseline"]
    rungs = t.verdicts[(t.verdicts["experiment"] == "hourglass") & (t.verdicts["case"] == "train")
                       & (t.verdicts["kind"] == "rung")]
    gains = rungs[rungs["verdict"] == "faster"]
    steps = t.hourglass[(t.hourglass["status"] == "ok") & (t.hourglass["phase"] == "train")]
    seed_steps = steps[steps["label"].str.startswith("seed")]
    seed_way = seed_steps["cpu_seconds"].median() / seed["median"] * seed["ratio"]
    size = t.config["hourglass"]
    return (f"- **The gap.** The seed's TensorFlow setup ({seed['label'].removeprefix('seed: ')})"
            f" takes {ms(seed['median'])} ms per train step against {ms(seed['median'] / seed['ratio'])}"
            f" ms for PyTorch {base['variant']}: **{interval(seed)}** by the wall clock, "
            f"{seed_way:.2f}x measured the seed's way (TensorFlow's CPU time against Torch's "
            "wall clock), against the seed's 2.09x (717 against 343 ms on a Titan X Pascal).\n"
            "- **What closes part of it.** Of the ladder's rungs, each against the one before: "
            + ("; ".join(f"{r['label']} {interval(r)}, {r['verdict']}" for _, r in gains.iterrows())
               or "none resolved faster")
            + f"; the other {len(rungs) - len(gains)} ({counts(rungs.loc[rungs['verdict'] != 'faster', 'verdict'])}).\n"
            f"- **What is left.** TensorFlow's fastest configuration ({best_tf['label']}, "
            f"{ms(best_tf['median'])} ms) is **{interval(best_tf)}** PyTorch {base['variant']} "
            f"and {best_tf['median'] / best_torch['median']:.2f}x PyTorch's fastest "
            f"({best_torch['label']}, {ms(best_torch['median'])} ms: {interval(best_torch)} of "
            f"{base['variant']}).\n"
            f"- **Limits.** A CPU ({size['stacks']} stacks, {size['resolution']}x{size['resolution']}, "
            f"batch {size['batch']}, {size['threads']} threads, not the seed's 8 stacks at 256x256), "
            f"TensorFlow {first_of(steps[steps['framework'] == 'tensorflow'], 'tensorflow_version')}"
            f" and PyTorch {first_of(steps[steps['framework'] == 'torch'], 'torch_version')}; "
            "on the GPU only PyTorch was measured (the GPU node had no TensorFlow GPU build).")


BLOCKS = {
    "answer-hourglass": ("", answer),
    "hourglass-table": ("", hourglass_table),
    "hourglass-verdicts": ("", hourglass_sentences),
    "ruler": ("", ruler),
    "why-hourglass": ("", why_hourglass),
    "fault-share": ("", fault_share),
}
