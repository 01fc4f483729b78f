"""Which hourglass configurations a config asks for, in the order the figures show them.

TensorFlow: the seed's setup, then a ladder (each rung adds one knob to the rung before), then
one rung per knob of the best taken back to the seed's value, then variations of the best;
or, with `grid: true`, every combination of `values`. PyTorch: each variant in each
environment. Plain Python: Snakemake, the table script and the tests read it.
"""

import itertools

from knobs.hourglass import TF_DEFAULTS, TF_KNOBS, tf_variant

KNOBS = (*TF_KNOBS, "environment")


def _describe(change):
    return ", ".join(f"{k}={v}" for k, v in change.items())


def tensorflow_plan(tf):
    """[(label, variant, environment)] in figure order, without repeats."""
    seed = {**TF_DEFAULTS, **tf["seed"]}
    named = [k for k in KNOBS if k not in TF_DEFAULTS or seed[k] != TF_DEFAULTS[k]]
    entries = [("seed: " + ", ".join(seed[k] for k in named), seed)]
    if tf.get("grid"):
        values = {**{k: [v] for k, v in TF_DEFAULTS.items()}, **tf["values"]}
        for combo in itertools.product(*(values[k] for k in KNOBS)):
            knobs = dict(zip(KNOBS, combo))
            entries.append((_describe(knobs), knobs))
    else:
        current = dict(seed)
        for change in tf.get("ladder", []):
            current = {**current, **change}
            entries.append(("+ " + _describe(change), dict(current)))
        best = current
        if tf.get("ablate", True):
            for key in KNOBS:
                if best[key] != seed[key]:
                    entries.append((f"best without {key}={best[key]}", {**best, key: seed[key]}))
        for change in tf.get("variations", []):
            entries.append(("best + " + _describe(change), {**best, **change}))
    plan, seen = [], set()
    for label, knobs in entries:
        key = (tf_variant(knobs), knobs["environment"])
        if key not in seen:
            seen.add(key)
            plan.append((label, *key))
    return plan


def torch_plan(torch):
    return [(f"torch {v}" + (f" ({e})" if e != "glibc" else ""), v, e)
            for e in torch["environments"] for v in torch["variants"]]


def full_plan(hourglass):
    """[{framework, label, variant, environment, rung}] in figure order."""
    rows = []
    if "tensorflow" in hourglass:
        rows += [("tensorflow", *entry) for entry in tensorflow_plan(hourglass["tensorflow"])]
    if "torch" in hourglass:
        rows += [("torch", *entry) for entry in torch_plan(hourglass["torch"])]
    return [dict(framework=f, label=label, variant=v, environment=e, rung=i)
            for i, (f, label, v, e) in enumerate(rows)]
