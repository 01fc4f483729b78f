"""A recipe works where it is pasted: its line names each preload the way another machine finds
it and sets every knob in a shell whose environment holds nothing else, as the runner proves
in the very process the line starts; and no shipped text names a path of the machine that
made it."""

import json
import re
import shlex
import shutil
import subprocess

import pytest
import yaml
from conftest import PYTHON, REPO, SCRIPTS

from knobs import environment, results, search
from knobs.kinds import preload

PARAMS = {"framework": "torch", "batches": [1], "image": [3, 16, 16], "input": "random"}


def run_line(tmp_path, line, spec, framework="torch"):
    """`line` (a recipe's, ending in `python train.py`) with the runner's measured process in
    place of train.py, in `sh` with a clean environment: PATH to the Python environment's
    `python`, and the spec the runner proves (what the workflow's launcher would pass).
    (the shell's outcome, the result file)"""
    out = tmp_path / "recipe.json"
    measured = shlex.join([
        "python", str(SCRIPTS / "run_benchmark.py"), "--measure", "--experiment", "copy",
        "--label", "environment=recipe", "--benchmark", "copy", "--params",
        json.dumps({**PARAMS, "framework": framework}), "--environment", "recipe",
        "--warmup", "1", "--samples", "2", "--out", str(out)])
    assert line.endswith(" python train.py") or line == "python train.py"
    clean = {"PATH": f"{PYTHON.parent}:/usr/bin:/bin", "HOME": str(tmp_path),
             environment.SPEC_VARIABLE: environment.launch_env("recipe", spec, base={})[
                 environment.SPEC_VARIABLE]}
    done = subprocess.run(["sh", "-c", line.removesuffix("python train.py") + measured],
                          env=clean, cwd=tmp_path, capture_output=True, text=True)
    return done, out


def proven(tmp_path, line, spec, framework="torch"):
    """{knob: how the runner proved it} in the process `line` started."""
    done, out = run_line(tmp_path, line, spec, framework)
    assert done.returncode == 0, done.stderr[-3000:]
    result = results.read(out, validate=False)
    assert result["status"] == "ok", result.get("reason")
    return {name: proof["proof"] for name, proof in result["knobs"]["proofs"].items()}


def test_a_preload_is_named_by_the_loader_by_the_python_environment_or_by_its_path(tmp_path):
    on_path = preload.portable("libtcmalloc.so.4")
    assert (on_path.config, on_path.shell) == ("libtcmalloc.so.4", "libtcmalloc.so.4")
    # resolved to its file (libtcmalloc.so.4.5.10 on Debian 12), still named by its soname
    found = preload.portable(preload.resolve_library("t", "libtcmalloc.so.4"))
    assert found.config == "libtcmalloc.so.4"
    # the intel-openmp wheel's, off the loader's path: in the user's own Python environment
    wheel = preload.portable(str(REPO / ".venv" / "lib" / "libiomp5.so"))
    assert wheel.config == "libiomp5.so"
    assert wheel.shell == f"{preload.PYTHON_LIB}/libiomp5.so"
    assert "off the loader's path" in wheel.note
    elsewhere = tmp_path / "libmine.so"
    shutil.copy(preload.resolve_library("t", "libjemalloc.so.2"), elsewhere)
    mine = preload.portable(str(elsewhere))
    assert mine.config == mine.shell == str(elsewhere)
    assert "outside the Python environment" in mine.note
    missing = preload.portable("libnothere.so.1")  # a search replayed on another machine
    assert missing.config == missing.shell == "libnothere.so.1" and "not found" in missing.note


def test_the_recipe_line_applies_each_knob_in_a_clean_shell(tmp_path):
    spec = {"preload": ["libtcmalloc.so.4", str(REPO / ".venv" / "lib" / "libiomp5.so")],
            "threads": 2, "env": {"KMP_BLOCKTIME": "1"}}
    line, _, needs = search.recipe(spec, "torch")
    assert str(REPO) not in line and len(needs) == 2
    assert proven(tmp_path, line, spec) == {
        "libtcmalloc.so.4": "effect", str(REPO / ".venv" / "lib" / "libiomp5.so"): "effect",
        "KMP_BLOCKTIME": "effect", "threads": "effect"}


def test_a_line_naming_a_file_this_machine_lacks_fails_in_the_measured_process(tmp_path):
    """The old recipes' fault: the loader warns, runs without the preload, and nothing else
    would notice."""
    line = "LD_PRELOAD=/usr/lib/libtcmalloc.so.4.0.99 OMP_NUM_THREADS=2 python train.py"
    done, out = run_line(tmp_path, line, {"preload": ["libtcmalloc.so.4"], "threads": 2})
    assert done.returncode != 0 and not out.exists()
    assert "cannot be preloaded" in done.stderr and "is not mapped" in done.stderr


def shipped_recipes():
    return sorted((REPO / "results" / "paper").rglob("recipe.txt"))


def parts(recipe):
    """A recipe.txt's line and its config entry (the spec it sets), None where it has none."""
    text = recipe.read_text()
    if "the line:" not in text:
        return None, None
    line = text.split("the line:\n", 1)[1].splitlines()[0].strip()
    entry = yaml.safe_load("\n".join(x[2:] for x in text.split("the config entry:\n", 1)[1]
                                     .splitlines() if x.startswith("  ")))
    return line, next(iter(entry["environments"].values()))


@pytest.mark.parametrize("recipe", shipped_recipes(),
                         ids=lambda path: str(path.parent.relative_to(REPO / "results")))
def test_a_shipped_recipe_line_applies_its_knobs_in_a_clean_shell(tmp_path, recipe):
    line, entry = parts(recipe)
    if line is None:
        assert "no knob made it faster" in recipe.read_text()
        return
    runtime = next(iter(yaml.safe_load((recipe.parent / "config.yaml").read_text())
                        ["benchmarks"].values()))["runtime"]
    # precision goes in the code, not the line (and this CPU may have no bfloat16)
    spec = {key: value for key, value in entry.items() if key != "precision"}
    proofs = proven(tmp_path, line, spec, framework=runtime)
    assert set(proofs) == {*spec.get("preload", []), *spec.get("env", {}),
                           *(["threads"] if spec.get("threads") else [])}
    assert all(proofs[library] == "effect" for library in spec.get("preload", []))  # mapped
    assert "pending" not in proofs.values(), proofs  # each proven once the steps ran


# What a user reads or pastes: the READMEs, the studies, the configs and profiles, and each
# shipped set's recipe and configs; not its run files, logs or evidence, which record the
# command they ran where they ran.
SHIPPED = re.compile(r"(^|/)README\.md$|^(studies|config|profiles|envs|report)/"
                     r"|^results/paper/.*(/recipe\.txt|\.yaml)$")
# The checkout's own path, and an absolute path into any virtual environment (a checkout
# elsewhere made it).
MACHINE_PATH = re.compile(rf"{re.escape(str(REPO))}(?![\w.-])|(?<![\w.)}}])/(?:[\w.-]+/)+\.venv\b")


def test_no_shipped_text_holds_a_path_of_the_machine_that_made_it():
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True,
                             text=True, check=True).stdout.split("\0")
    found = []
    for name in filter(SHIPPED.search, tracked):
        try:
            text = (REPO / name).read_text()
        except (UnicodeDecodeError, FileNotFoundError):  # a figure; a file deleted, not staged
            continue
        found += [f"{name}:{text.count(chr(10), 0, m.start()) + 1}: {m.group(0)}"
                  for m in MACHINE_PATH.finditer(text)]
    assert not found, "paths of the machine that made them:\n" + "\n".join(found)
