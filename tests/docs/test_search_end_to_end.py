"""`make search` end to end on a model no one here wrote (PyTorch's TransformerEncoder, at a
tiny size): every stage measured through the workflow, the ranked table, the recipe, the
figure; started again, it measures nothing twice."""

import re
import subprocess

import pandas as pd
import yaml

from conftest import PYTHON, REPO

from knobs.kinds.precision import bfloat16_arithmetic

KNOBS = ["tcmalloc", "bf16", "threads_2"]  # a preload, a precision, a thread count


def search(config):
    return subprocess.run([str(PYTHON), str(REPO / "scripts" / "search.py"), "transformer",
                           "--config", str(config), "--minutes", "20"],
                          capture_output=True, text=True, cwd=config.parent)


def test_a_search_ranks_each_knob_combines_the_helpful_ones_and_prints_the_recipe(tmp_path):
    config = tmp_path / "transformer.yaml"
    config.write_text(yaml.safe_dump({"results": str(tmp_path / "results"), "benchmarks": {
        "transformer": {"module": "transformer", "runtime": "torch", "reps": 2, "samples": 3,
                        "params": {"width": 32, "heads": 2, "layers": 1, "length": 16,
                                   "batch": 4},
                        "environments": ["glibc"],
                        "search": {"knobs": KNOBS, "most": 3}}}}))
    done = search(config)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    folder = tmp_path / "results" / "search" / "transformer"
    table = pd.read_csv(folder / "search.csv")
    alone = table[table["kind"] == "alone"]
    assert sorted(alone["environment"]) == sorted(KNOBS)
    # bfloat16 is measured where the CPU has its arithmetic, else not measured, with why
    bf16 = alone["environment"] == "bf16"
    measured = alone if bfloat16_arithmetic() else alone[~bf16]
    assert measured["verdict"].isin(["faster", "slower", "no effect", "inconclusive"]).all()
    if not bfloat16_arithmetic():
        assert list(alone.loc[bf16, "verdict"]) == ["not measured"]
        assert "this CPU has no bfloat16 arithmetic" in alone.loc[bf16, "reason"].iloc[0]
    assert list(table.loc[table["kind"] == "launcher", "environment"]) == ["run_cpu"]
    # an inconclusive verdict got more processes (`most`), with the baseline's, in rounds
    settled = table[table["stage"] == "transformer"]
    assert set(settled["processes"].dropna()) <= {2, 3}
    assert (settled.loc[settled["verdict"] == "inconclusive", "processes"] == 3).all()
    recipe = (folder / "recipe.txt").read_text()
    assert recipe.startswith("best: ") and recipe.splitlines()[0][6:] in done.stdout
    best = recipe.splitlines()[0][6:]
    helped = alone.loc[alone["verdict"] == "faster", "environment"].tolist()
    assert (best == "glibc") == (not helped)
    assert best == "glibc" or best.split("-")[0] == alone.loc[
        alone["verdict"] == "faster"].sort_values("ratio")["environment"].iloc[0]
    if best != "glibc":
        assert "the line:" in recipe and "python train.py" in recipe
    assert (folder / "search.png").stat().st_size > 10_000
    # the report's own section: the figure, with the recipe and the ranked table beside it
    report = (folder / "report.html").read_text()
    assert re.search(r"Which knobs make .{0,60}transformer", report)
    assert "The ranked table" in report and "The recipe" in report
    # every measured process proved its knobs: bf16's convolutions and products in bfloat16
    runs = pd.read_csv(folder / "tables" / "transformer.csv")
    if bfloat16_arithmetic():
        assert set(runs.loc[runs["environment"] == "bf16", "knob_proofs"]) == {"precision=effect"}
    made = {p: p.stat().st_mtime for p in (folder / "runs").rglob("*.json.gz")}
    again = search(config)
    assert again.returncode == 0, again.stderr[-3000:]
    assert {p: p.stat().st_mtime for p in (folder / "runs").rglob("*.json.gz")} == made
    assert (folder / "recipe.txt").read_text() == recipe
