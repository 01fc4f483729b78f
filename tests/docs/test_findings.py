"""The studies' checks: every shipped result set rebuilds from its runs, byte for byte, with no
framework importable; every generated block of the README and of each study's findings is
what those rebuilt tables say; and every block is written by one study and shown somewhere."""

import os
import re
import shutil
import subprocess

import pytest

from conftest import PYTHON, REPO, SCRIPTS
from knobs import blocks

FRAMEWORKS = ["tensorflow", "torch", "theano", "pytensor", "numba", "jax"]


@pytest.fixture(scope="module")
def rebuilt(tmp_path_factory):
    """A copy of results/paper with every set's tables made again from its runs (`make paper
    STUDY=all`, tables alone), each framework's import poisoned."""
    root = tmp_path_factory.mktemp("paper")
    shutil.copytree(REPO / "results/paper", root / "results/paper",
                    ignore=shutil.ignore_patterns("tables", "figures", "report.html", "traces"))
    poison = root / "poison"
    poison.mkdir()
    for name in FRAMEWORKS:
        (poison / f"{name}.py").write_text(f"raise ImportError('{name} imported')\n")
    runs = list((root / "results/paper").rglob("runs/**/*.json.gz"))
    mtimes = {p: p.stat().st_mtime_ns for p in runs}
    done = subprocess.run([str(PYTHON), str(SCRIPTS / "paper.py"), "--study", "all",
                           "--tables-only", "--root", str(root)],
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(poison)})
    assert done.returncode == 0, done.stdout[-5000:] + done.stderr[-3000:]
    assert all(p.stat().st_mtime_ns == t for p, t in mtimes.items())  # nothing measured again
    return root / "results/paper"


def test_every_set_rebuilds_its_shipped_tables_byte_for_byte(rebuilt):
    shipped = [p for p in (REPO / "results/paper").rglob("tables/*.csv")]
    assert len(shipped) >= 3 * 37
    differ = [str(p.relative_to(REPO)) for p in shipped
              if (rebuilt / p.relative_to(REPO / "results/paper")).read_bytes() != p.read_bytes()]
    assert not differ, f"make paper STUDY=all changes these shipped tables: {differ}"


def test_every_block_is_what_the_rebuilt_tables_say(rebuilt):
    done = subprocess.run([str(PYTHON), str(SCRIPTS / "findings.py"), "--check", "--set",
                           str(rebuilt)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_the_gpu_sessions_comparison_is_what_their_rebuilt_tables_give(rebuilt, tmp_path):
    gpu = rebuilt / "gpu"
    done = subprocess.run([str(PYTHON), str(SCRIPTS / "compare.py"), str(gpu), str(gpu / "second"),
                           "--out", str(tmp_path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    for name in ("comparison.csv", "verdicts.csv"):
        assert (tmp_path / name).read_text() == (gpu / "aa" / name).read_text(), name


def test_every_block_has_one_writer_and_every_writer_a_place():
    written = blocks.every_block()
    shown = {}
    for document in blocks.documents():
        text = document.read_text()
        names = re.findall(r"<!-- BEGIN generated: ([\w-]+) -->", text)
        assert len(set(names)) == len(names), document
        for name in names:
            block = re.search(rf"<!-- BEGIN generated: {name} -->\n(.*?)<!-- END generated: "
                              rf"{name} -->", text, re.S)
            assert block and block.group(1).strip(), (document, name)
            shown.setdefault(name, []).append(document)
    assert set(shown) <= set(written), set(shown) - set(written)
    assert set(written) <= set(shown), f"blocks no document shows: {set(written) - set(shown)}"
