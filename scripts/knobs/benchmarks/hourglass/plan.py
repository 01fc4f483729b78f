"""Which hourglass configurations a config asks for, in the order the figures show them.

TensorFlow: the seed's setup, then a ladder (each rung adds one knob to the rung before), then
one rung per knob of the last rung taken back to the seed's value, then variations of the last
rung; or, with `grid: true`, every combination of `values`. Which configuration is the best is
not decided here: that is the fastest one measured. PyTorch: each variant in each
environment. Plain Python: Snakemake, the table script and the tests read it.
"""

import itertools

from knobs.benchmarks.hourglass.network import TF_DEFAULTS, TF_KNOBS, tf_variant

KNOBS = (*TF_KNOBS, "environment")
COMPARED = ("framework", "variant", "environment")  # what names a configuration in `comparisons`


def _describe(change):
    return ", ".join(f"{k}={v}" for k, v in change.items())


def tensorflow_entries(tf):
    """Every entry the config names, in figure order, repeats included: (kind, label, knobs,
    the knobs it is compared with or None)."""
    seed = {**TF_DEFAULTS, **tf["seed"]}
    named = [k for k in KNOBS if k not in TF_DEFAULTS or seed[k] != TF_DEFAULTS[k]]
    entries = [("seed", "seed: " + ", ".join(seed[k] for k in named), seed, None)]
    if tf.get("grid"):
        values = {**{k: [v] for k, v in TF_DEFAULTS.items()}, **tf["values"]}
        for combo in itertools.product(*(values[k] for k in KNOBS)):
            knobs = dict(zip(KNOBS, combo))
            entries.append(("grid", _describe(knobs), knobs, seed))
        return entries
    current = dict(seed)
    for change in tf.get("ladder", []):
        before, current = current, {**current, **change}
        entries.append(("rung", "+ " + _describe(change), dict(current), before))
    last = current  # the ladder's last rung: what the ablations and variations start from
    if tf.get("ablate", True):
        for key in KNOBS:
            if last[key] != seed[key]:
                entries.append(("ablation", f"last rung without {key}={last[key]}",
                                {**last, key: seed[key]}, last))
    for change in tf.get("variations", []):
        entries.append(("variation", "last rung + " + _describe(change), {**last, **change},
                        last))
    return entries


def tensorflow_plan(tf):
    """[(label, variant, environment)] in figure order, without repeats."""
    plan, seen = [], set()
    for _, label, knobs, _ in tensorflow_entries(tf):
        key = (tf_variant(knobs), knobs["environment"])
        if key not in seen:
            seen.add(key)
            plan.append((label, *key))
    return plan


def torch_plan(torch):
    return [(f"torch {v}" + (f" ({e})" if e != "glibc" else ""), v, e)
            for e in torch["environments"] for v in torch["variants"]]


def comparisons(hourglass):
    """What each knob's verdict compares: [{kind, label, configuration, reference}] where a
    configuration is (framework, variant, environment). TensorFlow: each rung against the rung
    before, each ablation and variation against the ladder's last rung; PyTorch: each variant
    against eager, each environment against glibc."""
    found = []
    if "tensorflow" in hourglass:
        for kind, label, knobs, before in tensorflow_entries(hourglass["tensorflow"]):
            if before is not None:
                found.append({"kind": kind, "label": label,
                              "configuration": ("tensorflow", tf_variant(knobs), knobs["environment"]),
                              "reference": ("tensorflow", tf_variant(before), before["environment"])})
    if "torch" in hourglass:
        torch = hourglass["torch"]
        for label, variant, environment in torch_plan(torch):
            if variant != "eager" and "eager" in torch["variants"]:
                found.append({"kind": "torch variant", "label": label,
                              "configuration": ("torch", variant, environment),
                              "reference": ("torch", "eager", environment)})
            if environment != "glibc" and "glibc" in torch["environments"]:
                found.append({"kind": "torch environment", "label": label,
                              "configuration": ("torch", variant, environment),
                              "reference": ("torch", variant, "glibc")})
    return found


def full_plan(hourglass):
    """[{framework, label, variant, environment, rung}] in figure order."""
    rows = []
    if "tensorflow" in hourglass:
        rows += [("tensorflow", *entry) for entry in tensorflow_plan(hourglass["tensorflow"])]
    if "torch" in hourglass:
        rows += [("torch", *entry) for entry in torch_plan(hourglass["torch"])]
    return [dict(framework=f, label=label, variant=v, environment=e, rung=i)
            for i, (f, label, v, e) in enumerate(rows)]
