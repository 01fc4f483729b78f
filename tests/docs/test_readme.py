"""The README is short, and its examples run exactly as written: each example block copied
verbatim into a file of a copy of the repository, then the command the README shows."""

import os
import re
import shutil
import subprocess

import pandas as pd
import pytest

from conftest import REPO

README = (REPO / "README.md").read_text()


def example(marker):
    """The code block that follows `<!-- marker -->` in the README."""
    after = README[README.index(f"<!-- {marker} -->"):]
    return re.search(r"```\w*\n(.*?)```", after, re.S).group(1)


def test_the_readme_is_at_most_400_lines():
    assert len(README.splitlines()) <= 400


@pytest.fixture(scope="module")
def checkout(tmp_path_factory):
    """The repository's tracked files (the shipped results aside), its set-up environments
    linked in, as a user's clone after `make setup`."""
    root = tmp_path_factory.mktemp("checkout")
    files = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"],
                           cwd=REPO, capture_output=True, text=True, check=True).stdout.split()
    for name in files:
        if name.startswith("results/paper/") or not (REPO / name).exists():
            continue
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, root / name)  # its time kept: make sees the setup done
    for made in (".venv", ".venv-theano"):
        (root / made).symlink_to(REPO / made)
    shutil.copy2(REPO / ".system-ready", root / ".system-ready")
    return root


def run_as_written(checkout, name, module_marker, config_marker, command):
    (checkout / "benchmarks").mkdir(exist_ok=True)
    (checkout / "benchmarks" / f"{name}.py").write_text(example(module_marker))
    (checkout / f"{name}.yaml").write_text(example(config_marker))
    environment = {k: v for k, v in os.environ.items() if not k.startswith("MAKE")}
    done = subprocess.run(command, shell=True, cwd=checkout, capture_output=True, text=True,
                          env=environment)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return checkout / "results" / name


@pytest.mark.parametrize("name, module, config, command", [
    ("my_model", "example torch module", "example torch config", example("example torch command")),
    ("my_keras", "example tensorflow module", "example tensorflow config",
     "make run CONFIG=my_keras.yaml"),
])
def test_the_readme_examples_run_as_written(checkout, name, module, config, command):
    assert f"CONFIG={name}.yaml" in command and f"`benchmarks/{name}.py`" in README
    results = run_as_written(checkout, name, module, config, command)
    table = pd.read_csv(results / "tables" / f"{name}.csv")
    assert set(table["environment"]) == {"glibc", "tcmalloc", "glibc.twin"}
    assert table["value"].notna().all()  # the loss each step returned
    assert (table.loc[table["environment"] == "tcmalloc", "knob_proofs"]
            == "libtcmalloc.so.4=effect").all()
    verdicts = pd.read_csv(results / "tables" / "verdicts.csv")
    assert {"A/A", "vs baseline", "fastest"} <= set(verdicts["kind"])
    assert (results / "figures" / f"{name}.png").stat().st_size > 10_000
    assert "my_" in (results / "report.html").read_text(errors="replace")
