"""What an interrupted run leaves in a result set, put right before Snakemake runs on it
again (scripts/run.py, scripts/search.py), so that the same command recovers:

- a Snakemake process, or a measured process of an interrupted run, still running on the
  set: named, and nothing starts (two timing processes at once disturb each other's numbers);
- a stale lock (Snakemake was killed before it could remove it): removed;
- a result that a measured process finished after its Snakemake was killed (whole, yet
  marked incomplete): kept, not measured again;
- a result file that cannot be read (not JSON, cut short, not the result schema): moved
  aside to `<name>.damaged`, never deleted, so that Snakemake measures that process again;
- plain run files of a set made before results were compressed: compressed in place.

And after a run, why each process it lacks was not measured (`missing`); while a run works,
no other may start on the same set (`alone_on`).
"""

import base64
import contextlib
import fcntl
import os
from pathlib import Path

import yaml

from knobs import experiments, results

SNAKEMAKE_STATE = Path(".snakemake")  # Snakemake's own records, in the directory it runs in


class StillRunning(RuntimeError):
    """A process of another run is at work on this result set."""


def say(text):
    print(f"knobs: {text}", flush=True)


def prepare(config, results_dir):
    """Everything above, for the result set `results_dir` of `config` (validated; None where
    the set has no config yet, so no result to check)."""
    running = running_on(results_dir)
    if running:
        pid, what, command = running[0]
        raise StillRunning(
            f"{results_dir}: {what} (pid {pid}: {command[:150]}) is still running on it: wait "
            f"for it to end, or stop it (kill {pid}), then run the same command again")
    compressed = results.compress_plain(results_dir)
    if compressed:
        say(f"compressed {compressed} run file(s) of {results_dir} written before this workflow "
            "compressed them (rep<k>.json -> rep<k>.json.gz; nothing measured again)")
    removed = remove_stale_locks(results_dir)
    if removed:
        say(f"removed the lock an interrupted run left on {results_dir} ({removed} lock "
            "file(s); no Snakemake process runs on it)")
    kept = keep_finished(results_dir)
    if kept:
        say(f"kept {len(kept)} result(s) that finished after their run was interrupted: "
            + ", ".join(kept))
    for path, what in damaged(config, results_dir) if config else []:
        say(f"{path}: damaged result file ({what}): moved aside to {move_aside(path)}, "
            "to be measured again")
        # Snakemake makes a missing input again only for an output it must make: the table
        # read from it (derived, made again from the result files) goes too
        experiment = Path(path).relative_to(results_dir).parts[1]  # runs/<experiment>/...
        Path(results_dir, "tables", f"{experiment}.csv").unlink(missing_ok=True)


def inside(path, results_dir, cwd="."):
    """Whether `path` (relative to `cwd`) lies in the folder `results_dir`."""
    return os.path.realpath(os.path.join(cwd, path)).startswith(
        os.path.realpath(results_dir) + os.sep)


# ---- Processes still running ------------------------------------------------------------------
def running_on(results_dir, workdir=".", proc=Path("/proc")):
    """[(pid, 'Snakemake' or 'a measured process', command line)] of the Snakemake processes
    whose config writes to `results_dir` and of the measured processes writing into it, run
    from `workdir`."""
    here, target = os.path.realpath(workdir), os.path.realpath(results_dir)
    found = []
    for entry in proc.iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            words = (entry / "cmdline").read_bytes().decode(errors="replace").split("\0")[:-1]
            cwd = os.readlink(entry / "cwd")
        except OSError:  # ended meanwhile, or not ours to read
            continue
        if cwd != here or not words:
            continue
        pid, command = int(entry.name), " ".join(words)
        if "snakemake" in [os.path.basename(w) for w in words[:3]]:  # also python -m snakemake
            if os.path.realpath(results_of(words, cwd)) == target:
                found.append((pid, "Snakemake", command))
        elif any(w.endswith("run_benchmark.py") for w in words) and "--out" in words[:-1]:
            if inside(words[words.index("--out") + 1], results_dir, cwd):
                found.append((pid, "a measured process", command))
    return sorted(found)


def results_of(words, cwd):
    """The results directory of a Snakemake command line run in `cwd`: its last config
    file's `results` (the default profile's config/config.yaml where it names none)."""
    found, files = "results", ["config/config.yaml"]
    for position, word in enumerate(words):
        if word == "--configfile":
            following = words[position + 1:]
            ends = next((i for i, w in enumerate(following) if w.startswith("-")), None)
            files = following[:ends] or files
    for name in files:
        try:
            text = Path(cwd, name).read_text()
            found = (yaml.safe_load(text) or {}).get("results", found)
        except (OSError, yaml.YAMLError, AttributeError):
            continue
    return os.path.join(cwd, found)


# ---- Snakemake's records of an interrupted run ------------------------------------------------
def lock_files(results_dir):
    """Snakemake's lock files (`<n>.input.lock`, `<n>.output.lock`) of the runs that write
    into `results_dir`."""
    locks = SNAKEMAKE_STATE / "locks"
    runs = set()
    for lock in locks.glob("*.output.lock"):
        if any(inside(line.strip(), results_dir) for line in lock.read_text().splitlines()):
            runs.add(lock.name.split(".")[0])
    return [locks / f"{n}.{kind}.lock" for n in sorted(runs) for kind in ("input", "output")
            if (locks / f"{n}.{kind}.lock").exists()]


def remove_stale_locks(results_dir):
    """Remove the locks of `results_dir` (no process runs on it: `running_on` said so)."""
    found = lock_files(results_dir)
    for lock in found:
        lock.unlink()
    return len(found)


def incomplete_markers():
    """{file Snakemake marked incomplete (a job started, never finished): its marker}."""
    root = SNAKEMAKE_STATE / "incomplete"
    found = {}
    for marker in root.rglob("*") if root.exists() else []:
        if marker.is_dir() or marker.name == "migration_underway":
            continue
        # a long key is split into folders whose names start with '@' (persistence/file.py)
        encoded = "".join(part.lstrip("@") for part in marker.relative_to(root).parts)
        try:
            found[base64.urlsafe_b64decode(encoded).decode()] = marker
        except ValueError:
            continue
    return found


def keep_finished(results_dir):
    """Unmark the results under `results_dir` that are whole although Snakemake marked them
    incomplete: the measured process wrote its file (atomically) after Snakemake was killed.
    Returns their paths."""
    kept = []
    for path, marker in sorted(incomplete_markers().items()):
        if not inside(path, results_dir) or not path.endswith(results.RUN_SUFFIX):
            continue
        if os.path.exists(path) and damage_of(path) is None:
            marker.unlink()
            kept.append(path)
    return kept


# ---- Damaged result files ---------------------------------------------------------------------
def damage_of(path):
    """None where `path` reads as a whole result, else what is wrong with it (a result of
    another format is whole: it has a fix of its own, which the tables name)."""
    try:
        results.read(path)
    except results.DamagedResult as error:
        return error.what
    except results.ResultError:
        pass
    return None


@contextlib.contextmanager
def alone_on(results_dir):
    """Held while a run works on `results_dir`: a second run started at the same moment
    stops, naming it, rather than both passing `prepare` and timing at once."""
    os.makedirs(results_dir, exist_ok=True)
    with open(os.path.join(results_dir, ".run.lock"), "w") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise StillRunning(f"{results_dir}: another run of this workflow works on it: wait "
                               "for it to end, then run the same command again") from None
        yield


def damaged(config, results_dir):
    """[(result file, what is wrong)] of each result the config expects that is there but is
    not a whole result."""
    found = []
    for job in experiments.jobs(config):
        path = job.run(results_dir)
        if os.path.exists(path) and (what := damage_of(path)) is not None:
            found.append((path, what))
    return found


def move_aside(path):
    """`path` renamed to `<path>.damaged` (`.damaged.2` ... where one is there already)."""
    aside, n = f"{path}.damaged", 1
    while os.path.exists(aside):
        n += 1
        aside = f"{path}.damaged.{n}"
    os.replace(path, aside)
    return aside


# ---- After a run ------------------------------------------------------------------------------
def missing(config, results_dir, since=0.0):
    """{result file under `results_dir` (relative, as `not_measured` names it): why it is
    not there} of each process the config expects whose job ran (its log written) after
    `since` and left no result; the reason is the last line of its log: what its runner said
    last (a knob that did not apply, the signal that killed it) or its traceback's last."""
    found = {}
    for job in experiments.jobs(config):
        path = job.run(results_dir)
        log = Path(experiments.run_log(config, path))
        if os.path.exists(path) or not log.exists() or log.stat().st_mtime < since:
            continue
        lines = [line for line in log.read_text(errors="replace").splitlines() if line.strip()]
        found[os.path.relpath(path, results_dir)] = (
            lines[-1].removeprefix("run_benchmark: ") if lines else f"nothing said ({log})")
    return found
