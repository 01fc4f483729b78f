#!/usr/bin/env python3
"""Convert a result set's format-1 run files (written before the one runner) to format 2, and
compress its plain run files (rep<k>.json, written before runs were compressed).

    convert_results.py results/paper

Format 1 wrote one copy file per batch (runs/copy/<fw>/<env>/<device>/b<batch>/<input>/
rep<k>.json); format 2 writes one file per process (runs/copy/<fw>/<env>/<device>/<input>/
rep<k>.json) holding every batch as a case. What format 1 did not record (CPU time and
context switches per sample, what the machine did meanwhile) is left empty (null), never
invented; knobs that format 1 checked only by presence are marked `presence`. The old files
are removed once every new one is written. A plain run file is compressed with its bytes kept
(rep<k>.json.gz), and the set's config names the compressed files where it lists one.
"""

import argparse
import re
import sys
from collections import defaultdict
from pathlib import Path

from knobs import results

# Variables format 1 proved by their effect; the others only by their presence.
PROVEN_BY_EFFECT_IN_FORMAT_1 = ("NUMPY_MADVISE_HUGEPAGE", "MALLOC_MMAP_THRESHOLD_",
                                "PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION", "TF_ENABLE_ONEDNN_OPTS",
                                "TF_GPU_THREAD_MODE")
NOT_RECORDED = {"wall_seconds": None, "own_cpu_seconds": None, "other_cpu_seconds": None,
                "other_cpus": None, "steal_share": None, "load_before": None,
                "load_after": None, "disturbed": None}


def _argument(command, flag, default=None):
    return command[command.index(flag) + 1] if flag in command else default


def _knobs(old, threads):
    knobs = old["knobs"]
    proofs = {key: {"kind": "variable", "value": value, "seen": {},
                    "proof": "effect" if key in PROVEN_BY_EFFECT_IN_FORMAT_1 else "presence"}
              for key, value in knobs["set"].items()}
    proofs.update({p["requested"]: {"kind": "preload", "value": p["path"], "proof": "effect",
                                    "seen": {"mapped": p["path"]}} for p in knobs["preloads"]})
    return {"name": knobs["name"], "proofs": proofs, "effects": knobs["effects"],
            "preloads": knobs["preloads"], "set": knobs["set"], "threads": threads,
            "pass_env": []}


def _samples(seconds, **known):
    empty = [None] * len(seconds)
    return {"seconds": seconds, "cpu_seconds": empty, "minor_faults": empty,
            "major_faults": empty, "voluntary_switches": empty, "involuntary_switches": empty,
            "value": empty, **known}


def _common(old, labels, params, threads, samples):
    return {"format": results.FORMAT, "experiment": old["experiment"],
            "configuration": "/".join(v for _, v in labels), "labels": labels,
            "rep": old.get("rep", 0), "device": old["device"], "environment": old["environment"],
            "benchmark": {"module": old["experiment"], "params": params},
            "warmup": old.get("warmup", 0), "samples": samples,
            "knobs": _knobs(old, threads), "machine": old["machine"],
            "environ": old["knobs"].get("variables", {}), "command": old.get("command", []),
            "process": dict(NOT_RECORDED), "finished": old["finished"],
            "converted_from_format": 1}


def convert_copy(batches):
    """The format-1 files of one copy process (one per batch) -> one format-2 result."""
    old = batches[0]
    labels = [[k, old[k]] for k in ("framework", "environment", "device", "input")]
    params = {"framework": old["framework"], "batches": sorted(b["batch"] for b in batches),
              "image": old["image"], "input": old["input"]}
    new = _common(old, labels, params, old["threads"]["requested"], old["calls"])
    new.update(status="ok", order=[str(b) for b in old["order"]],
               timeline={"first_case_ready": old["setup_seconds"]},
               evidence={k: v for k, v in old["framework_info"].items() if k != "version"},
               versions=old["versions"], trace=None, op_seconds=None)
    new["cases"] = {str(b["batch"]): {
        "position": b["position"], "first_seconds": None,
        "info": {"batch": b["batch"], "bytes": b["bytes"], "check": b["check"]},
        "samples": _samples(b["samples"]["seconds"], minor_faults=b["samples"]["minor_faults"],
                            major_faults=b["samples"]["major_faults"])} for b in batches}
    return new


def convert_hourglass(old):
    labels = [[k, old[k]] for k in ("framework", "variant", "environment", "device")]
    command = old["command"]
    params = {"framework": old["framework"], "variant": old["variant"],
              **{k: old[k] for k in ("stacks", "resolution", "batch", "features", "joints")},
              "threads": int(_argument(command, "--threads", 1)),
              "inter_op_threads": int(_argument(command, "--inter-op-threads", 1))}
    new = _common(old, labels, params, params["threads"], old["steps"])
    if old["status"] != "ok":
        return {**new, "status": old["status"], "reason": old["reason"]}
    phases = old["phases"]
    new.update(status="ok", order=list(phases),
               timeline={"build_started": 0.0, "build_done": old["build_seconds"],
                         "first_case_ready": old["process_to_first_step_seconds"]
                         - phases["forward"]["first_seconds"]},
               evidence={**old["evidence"], "params": old["params"]},
               versions={k: str(v) for k, v in old["versions"].items()},
               trace=old.get("trace"), op_seconds=old.get("op_seconds"))
    new["cases"] = {phase: {
        "position": position, "first_seconds": measured["first_seconds"],
        "info": {"flops": old["flops"][phase]},
        "samples": _samples(measured["seconds"], value=measured["loss"])}
        for position, (phase, measured) in enumerate(phases.items())}
    return new


def convert_peak(old):
    labels = [["device", old["device"]]]
    new = _common(old, labels, {"threads": old["threads"]}, old["threads"],
                  len(next(iter(old["measured"].values()))["seconds"]))
    new.update(status="ok", order=list(old["measured"]), timeline={}, evidence={},
               versions=old["versions"], trace=None, op_seconds=None)
    new["cases"] = {}
    for position, (case, measured) in enumerate(old["measured"].items()):
        library, _, precision = case.partition("_")
        new["cases"][case] = {
            "position": position, "first_seconds": None,
            "info": {"library": library, "precision": precision or "float32", "n": measured["n"],
                     "flops": 2 * measured["n"] ** 3},
            "samples": _samples(measured["seconds"])}
    return new


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("result_set", help="a folder holding runs/")
    parser.add_argument("--check", action="store_true", help="convert nothing; fail, naming "
                        "the fix, if any file is format 1 or plain")
    args = parser.parse_args(argv)
    root = Path(args.result_set)
    try:  # not the temporary files of a result being written (.tmp-*)
        runs = sorted(p for pattern in ("[!.]*.json", "[!.]*.json.gz")
                      for p in (root / "runs").rglob(pattern))
        old_files = [p for p in runs if results.load(p).get("format", 1) == 1]
    except results.DamagedResult as error:
        sys.exit(str(error))
    plain = [p for p in runs if p.suffix == ".json" and p not in old_files]
    if args.check:
        if old_files or plain:
            example = (old_files or plain)[0]
            sys.exit(f"{root} holds {len(old_files)} format-1 and {len(plain)} plain result "
                     f"files (e.g. {example}); this workflow reads compressed format-"
                     f"{results.FORMAT} files. Convert them first: "
                     f"python scripts/convert_results.py {root}")
        return 0
    if old_files:
        convert_format_1(root, old_files)
    compressed = results.compress_plain(root)
    if compressed:
        print(f"{root}: {compressed} plain run files compressed")
        name_compressed_files(root)
    if not old_files and not compressed:
        print(f"{root}: no format-1 or plain results; nothing to convert")
    return 0


def name_compressed_files(root):
    """The set's configs, their `not_measured` entries naming the compressed run files."""
    for name in ("config.yaml", "config_used.yaml"):
        path = root / name
        if path.exists():
            text = path.read_text()
            path.write_text(re.sub(r"(runs/\S+/rep\d+\.json)(?!\.gz)", r"\1.gz", text))


def convert_format_1(root, old_files):
    copies, written = defaultdict(list), {}
    for path in old_files:
        old = results.load(path)
        parts = path.relative_to(root / "runs").with_suffix("").with_suffix(".json.gz").parts
        if old["experiment"] == "copy":  # copy/<fw>/<env>/<device>/b<batch>/<input>/rep<k>
            copies[parts[:4] + parts[5:]].append(old)
        elif old["experiment"] == "hourglass":
            written[root / "runs" / Path(*parts)] = convert_hourglass(old)
        elif old["experiment"] == "peak":
            written[root / "runs" / Path(*parts)] = convert_peak(old)
        else:
            sys.exit(f"convert_results: {path}: unknown experiment {old['experiment']!r}")
    for parts, batches in copies.items():
        written[root / "runs" / Path(*parts)] = convert_copy(batches)
    for path, result in written.items():
        results.write_json(path, result)
    for path in old_files:
        if path not in written:
            path.unlink()
    for directory in sorted((root / "runs").rglob("*"), reverse=True):
        if directory.is_dir() and not any(directory.iterdir()):
            directory.rmdir()
    print(f"{root}: {len(old_files)} format-1 files -> {len(written)} format-2 results")
    describe_what_was_measured(root)


def describe_what_was_measured(root):
    """The set's config.yaml, told what format 1 never measured: no A/A twins
    (statistics.aa: false), and every other result file this workflow would expect (the
    fault probe) listed under not_measured."""
    import yaml

    from knobs import config_check, experiments

    path = root / "config.yaml"
    if not path.exists():
        return
    config = yaml.safe_load(path.read_text())
    config.setdefault("statistics", {})["aa"] = False
    filled = config_check.fill_defaults(config)
    expected = [job.run(".")[2:] for job in experiments.jobs(filled)]
    missing = sorted(p for p in expected if not (root / p).exists())
    config["not_measured"] = sorted(set(config.get("not_measured", [])) | set(missing))
    lines = path.read_text().splitlines()
    header = "".join(line + "\n" for line in lines[:next(
        (i for i, line in enumerate(lines) if not line.startswith("#")), len(lines))])
    path.write_text(header + "# Converted from format 1 by scripts/convert_results.py: no A/A "
                    "twins, and not_measured lists what format 1 never measured.\n"
                    + yaml.safe_dump(config, sort_keys=False))
    print(f"{path}: statistics.aa: false; {len(missing)} result files listed as not measured")


if __name__ == "__main__":
    sys.exit(main())
