"""The benchmark jobs a config asks for, where their results go and the arguments each is run
with: one source for the Snakemake rules (rules/common.smk) and for scripts/gpu_paper.py, which
runs the same commands on a GPU node that has no Snakemake.

Plain Python (no framework, no Snakemake): `config` is a validated config, defaults filled in.
"""

import shlex
from pathlib import Path

from knobs import frameworks
from knobs.hourglass import plan as hourglass_plan

SCRIPTS = Path(__file__).resolve().parent.parent

# Result paths; `{results}` is the config's `results`, the rest are the jobs' wildcards.
COPY_RUN = "{results}/runs/copy/{framework}/{environment}/{device}/b{batch}/{input}/rep{rep}.json"
COPY_EVIDENCE = "{results}/evidence/copy/{framework}.txt"
HOURGLASS_RUN = "{results}/runs/hourglass/{framework}/{variant}/{environment}/{device}/rep{rep}.json"
HOURGLASS_TRACE = "{results}/traces/hourglass/{framework}/{variant}/{environment}/{device}/rep{rep}.json"
HOURGLASS_PEAK = "{results}/runs/peak/{device}/rep{rep}.json"
HOURGLASS_SIZE = ("stacks", "resolution", "batch", "features", "joints")


def results_dir(config):
    return config.get("results", "results")


def launcher(config, name):
    """with_environment.py and its arguments, ending in `--`: the measured command follows."""
    spec = config["environments"][name]
    words = [str(SCRIPTS / "with_environment.py"), "--name", name]
    for key, value in spec.get("env", {}).items():
        words += ["--set", f"{key}={value}"]
    for library in spec.get("preload", []):
        words += ["--preload", library]
    return words + ["--"]


def quoted(words):
    """Shell words, each quoted: a value such as `; touch X` stays one argument, runs nothing."""
    return " ".join(shlex.quote(str(word)) for word in words)


# ---- The copy experiment -------------------------------------------------------------------
def copy_devices(config, framework):
    """The config's copy devices that `framework` runs on."""
    return [d for d in config["copy"]["devices"] if d in frameworks.devices(framework)]


def copy_configurations(config):
    """(framework, environment, device) triples: the grid asked for (an environment only with
    the frameworks it names, if it names any; a framework only on the devices it runs on),
    plus the copy-limit references."""
    copy = config["copy"]
    acts_on = lambda e: config["environments"][e].get("frameworks", copy["frameworks"])
    triples = {(f, e, d) for f in copy["frameworks"] for e in copy["environments"]
               if f in acts_on(e) for d in copy_devices(config, f)}
    triples |= {(f, e, d) for f in copy["limit"]["frameworks"]
                for e in copy["limit"]["environments"] for d in copy_devices(config, f)}
    return sorted(triples)


def copy_run_groups(config):
    """One process per (framework, environment, device, input, rep): its wildcards and the
    result file of each batch, in `batches` order."""
    copy, results = config["copy"], results_dir(config)
    for framework, environment, device in copy_configurations(config):
        for input_kind in copy["inputs"]:
            for rep in range(copy["reps"]):
                wildcards = dict(framework=framework, environment=environment, device=device,
                                 input=input_kind, rep=rep)
                yield wildcards, [COPY_RUN.format(results=results, batch=b, **wildcards)
                                  for b in copy["batches"]]


def copy_run_args(config, framework, environment, device, input, rep):
    copy = config["copy"]
    return ["--framework", framework, "--environment", environment, "--device", device,
            "--input", input, "--rep", rep, "--batches", *copy["batches"],
            "--image", *copy["image"], "--threads", copy["threads"], "--warmup", copy["warmup"],
            "--calls", copy["calls"], "--order", copy["order"]]


def copy_evidence_frameworks(config):
    copy = config.get("copy")
    if not copy:
        return []
    return [f for f in copy["frameworks"] if f in frameworks.WITH_GRAPH
            and copy_devices(config, f)]


def copy_evidence_args(config, framework):
    copy = config["copy"]
    return ["--framework", framework, "--devices", *copy_devices(config, framework),
            "--batch", max(copy["batches"]),
            "--image", *copy["image"]]


# ---- The hourglass experiment --------------------------------------------------------------
def hourglass_runs(config):
    """(wildcards, label) of every hourglass run, in figure order."""
    hourglass = config["hourglass"]
    for entry in hourglass_plan.full_plan(hourglass):
        for device in hourglass["devices"]:
            for rep in range(hourglass["reps"]):
                yield dict(framework=entry["framework"], variant=entry["variant"],
                           environment=entry["environment"], device=device, rep=rep)


def hourglass_run_args(config, framework, variant, environment, device, rep):
    hourglass = config["hourglass"]
    size = [word for key in HOURGLASS_SIZE for word in (f"--{key}", hourglass[key])]
    return ["--framework", framework, "--variant", variant, "--environment", environment,
            "--device", device, "--rep", rep, *size, "--warmup", hourglass["warmup"],
            "--steps", hourglass["steps"], "--threads", hourglass["threads"],
            "--inter-op-threads", hourglass["inter_op_threads"]]


def peak_args(config, device):
    return ["--environment", "glibc", "--device", device,
            "--threads", config["hourglass"]["threads"]]


# ---- What was measured ---------------------------------------------------------------------
def measured_config(config, exists):
    """The config cut down to the configurations whose results are all there (`exists(path)`),
    so that the workflow can aggregate a partial run, such as a GPU node's that could not run
    TensorFlow; and a line per thing left out."""
    import copy as copying

    config, dropped = copying.deepcopy(config), []
    if "copy" in config:
        _measured_copy(config, exists, dropped)
    if "hourglass" in config:
        _measured_hourglass(config, exists, dropped)
    return config, dropped


def _complete(paths, exists):
    paths = list(paths)
    return bool(paths) and all(exists(path) for path in paths)


def _measured_copy(config, exists, dropped):
    copy, limit = config["copy"], config["copy"]["limit"]

    def files(**match):  # of the config as cut down so far
        return [p for w, paths in copy_run_groups(config)
                if all(w[k] == v for k, v in match.items()) for p in paths]

    def drop(names, name, key, why):
        names.remove(name)
        dropped.append(f"copy.{key}: {name} ({why})")

    for device in list(copy["devices"]):
        if not any(exists(p) for p in files(device=device)):
            drop(copy["devices"], device, "devices", "no result")
    for name in list(copy["environments"]):
        if not any(exists(p) for p in files(environment=name)):
            drop(copy["environments"], name, "environments", "no result")
    # A limit environment where some limit copy is missing goes first, not the limit copy.
    for name in list(limit["environments"]):
        if len(limit["environments"]) > 1 and not all(
                _complete(files(framework=f, environment=name), exists)
                for f in limit["frameworks"] if files(framework=f)):
            drop(limit["environments"], name, "limit.environments", "results incomplete")
    evidence = set(copy_evidence_frameworks(config))
    for key, names in (("frameworks", copy["frameworks"]),
                       ("limit.frameworks", limit["frameworks"])):
        for name in list(names):
            if not set(frameworks.devices(name)) & set(copy["devices"]):
                drop(names, name, key, "runs on no measured device")
            elif not _complete(files(framework=name), exists) or (
                    key == "frameworks" and name in evidence and not exists(
                        COPY_EVIDENCE.format(results=results_dir(config), framework=name))):
                drop(names, name, key, "results incomplete")
    for device in list(copy["devices"]):
        if not any(device in frameworks.devices(n) for n in limit["frameworks"]):
            drop(copy["devices"], device, "devices", "no complete copy limit")
    for name in list(copy["frameworks"]):
        if not set(frameworks.devices(name)) & set(copy["devices"]):
            drop(copy["frameworks"], name, "frameworks", "runs on no measured device")
    if not (copy["frameworks"] and copy["environments"] and copy["devices"]
            and limit["environments"]):
        del config["copy"]
        dropped.append("copy: nothing complete")


def _measured_hourglass(config, exists, dropped):
    hourglass, results = config["hourglass"], results_dir(config)
    for device in list(hourglass["devices"]):
        peaks = [HOURGLASS_PEAK.format(results=results, device=device, rep=r)
                 for r in range(hourglass["reps"])]
        if not _complete(peaks, exists):
            hourglass["devices"].remove(device)
            dropped.append(f"hourglass.devices: {device} (matmul peak missing)")
    runs = list(hourglass_runs(config)) if hourglass["devices"] else []
    complete = lambda **match: _complete(
        (HOURGLASS_RUN.format(results=results, **w) for w in runs
         if all(w[k] == v for k, v in match.items())), exists)
    if "tensorflow" in hourglass:
        _measured_tensorflow(hourglass, lambda variant, environment: complete(
            framework="tensorflow", variant=variant, environment=environment), dropped)
    if "torch" in hourglass:
        torch = hourglass["torch"]
        for variant in list(torch["variants"]):
            if not complete(framework="torch", variant=variant):
                torch["variants"].remove(variant)
                dropped.append(f"hourglass.torch.variants: {variant} (results incomplete)")
        if not torch["variants"]:
            del hourglass["torch"]
    if not {"tensorflow", "torch"} & set(hourglass) or not hourglass["devices"]:
        del config["hourglass"]
        dropped.append("hourglass: nothing complete")
        return
    entries = hourglass_plan.full_plan(hourglass)
    baseline = hourglass["baseline"]
    if not any(all(e[k] == v for k, v in baseline.items()) for e in entries):
        first = entries[0]
        hourglass["baseline"] = {k: first[k] for k in ("framework", "variant", "environment")}
        dropped.append(f"hourglass.baseline: {baseline} -> {hourglass['baseline']}")


def _measured_tensorflow(hourglass, complete, dropped):
    """TensorFlow's ladder cut to what ran: the longest complete run of rungs, the ablations
    if all ran, each variation that ran; all or nothing for a grid."""
    tf = hourglass["tensorflow"]
    ran = lambda candidate: all(complete(variant, environment) for _, variant, environment
                                in hourglass_plan.tensorflow_plan(candidate))
    seed_only = {**tf, "ladder": [], "ablate": False, "variations": []}
    if not ran(seed_only if not tf.get("grid") else tf):
        del hourglass["tensorflow"]
        dropped.append("hourglass.tensorflow (results incomplete)")
        return
    if tf.get("grid"):
        return
    ladder = tf.get("ladder", [])
    rungs = max(k for k in range(len(ladder) + 1) if ran({**seed_only, "ladder": ladder[:k]}))
    if rungs < len(ladder):
        tf["ladder"] = ladder[:rungs]
        dropped.append(f"hourglass.tensorflow.ladder: rungs {rungs + 1}-{len(ladder)} "
                       "(results incomplete; the best is now the last complete rung)")
    if tf.get("ablate", True) and not ran({**tf, "variations": []}):
        tf["ablate"] = False
        dropped.append("hourglass.tensorflow.ablate (results incomplete)")
    for variation in list(tf.get("variations", [])):
        if not ran({**tf, "ablate": False, "variations": [variation]}):
            tf["variations"].remove(variation)
            dropped.append(f"hourglass.tensorflow.variations: {variation} (results incomplete)")
