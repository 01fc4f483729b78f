"""The pieces of `make search` (knobs/search.py); the whole search runs in
tests/docs/test_search.py."""

import os

from conftest import PYTHON, REPO

from knobs import search

CATALOG = {"glibc": {}, "tcmalloc": {"preload": ["libtcmalloc.so.4"], "group": "allocator"},
           "jemalloc": {"preload": ["libjemalloc.so.2"], "group": "allocator"},
           "bf16": {"precision": "bfloat16", "group": "precision"},
           "mine": {"env": {"MALLOC_ARENA_MAX": "2"}}}


def test_candidates_are_the_grouped_knobs_and_the_thread_counts_not_run_yet():
    found = search.candidates(CATALOG, {"threads": 1}, cores=4)
    assert list(found) == ["tcmalloc", "jemalloc", "bf16", "threads_2", "threads_4", "interop_1"]
    assert found["threads_4"] == {"threads": 4, "group": "threads"}
    named = search.candidates(CATALOG, {"threads": 2, "search": {"knobs": ["mine", "threads_1"]}},
                              cores=2)
    assert list(named) == ["mine", "threads_1"]


def test_a_combination_holds_both_and_one_knob_per_group():
    both = search.combined(CATALOG["tcmalloc"], CATALOG["bf16"])
    assert both == {"preload": ["libtcmalloc.so.4"], "precision": "bfloat16",
                    "groups": ["allocator", "precision"]}
    assert search.clash(both, CATALOG["jemalloc"]) == ["allocator"]
    assert search.clash(both, {"threads": 2, "group": "threads"}) == []


def test_the_recipe_is_a_line_to_paste_and_what_the_code_needs():
    spec = {"preload": ["libtcmalloc.so.4"], "threads": 2,
            "env": {"KMP_AFFINITY": "granularity=fine,compact,1,0"}, "precision": "bfloat16"}
    line, code, needs = search.recipe(spec, "torch")
    assert line == ("LD_PRELOAD=libtcmalloc.so.4 OMP_NUM_THREADS=2 "
                    "KMP_AFFINITY=granularity=fine,compact,1,0 python train.py")
    assert code == ["each step inside `with torch.autocast('cpu', dtype=torch.bfloat16):`"]
    assert needs[0].startswith("libtcmalloc.so.4, which the loader finds by that name")
    line, code, _ = search.recipe(spec, "tensorflow")
    assert "TF_NUM_INTRAOP_THREADS=2" in line and "mixed_bfloat16" in code[0]
    line, code, needs = search.recipe({"interop_threads": 1}, "torch")
    assert line == "python train.py" and needs == [] and code == [
        "torch.set_num_interop_threads(1) before any PyTorch work"]
    line, code, _ = search.recipe({"interop_threads": 1}, "tensorflow")
    assert line == "TF_NUM_INTEROP_THREADS=1 python train.py" and code == []


def test_run_cpu_environment_is_what_the_launcher_sets_here():
    found, notes = search.run_cpu_environment(str(PYTHON), str(REPO / ".venv"))
    spec = found["run_cpu"]
    assert spec["threads"] == len(os.sched_getaffinity(0))  # its default: every core
    assert spec["preload"] == [str(REPO / ".venv" / "lib" / "libiomp5.so")]  # as it sets it
    assert search.configured(spec, "run_cpu")["preload"] == ["libiomp5.so"]  # as configs say
    assert spec["env"] == {"KMP_AFFINITY": "granularity=fine,compact,1,0", "KMP_BLOCKTIME": "1"}
    assert any("taskset" in note or "numactl" in note for note in notes)


def test_the_ladder_keeps_a_step_only_where_it_is_faster_again():
    specs = {name: dict(spec) for name, spec in CATALOG.items()}
    specs["threads_2"] = {"threads": 2, "group": "threads"}
    tried = []

    def try_step(best, combination):
        tried.append((best, combination))
        return {"verdict": "faster" if combination.endswith("bf16") else "no effect"}

    best, path, finished = search.ladder(["tcmalloc", "jemalloc", "bf16", "threads_2"], specs,
                                         try_step, affordable=lambda: True)
    assert tried == [("tcmalloc", "tcmalloc-bf16"), ("tcmalloc-bf16", "tcmalloc-bf16-threads_2")]
    assert best == "tcmalloc-bf16" and finished
    assert [row["verdict"] for row in path] == ["not tried", "faster", "no effect"]
    assert "allocator" in path[0]["reason"]  # jemalloc: an allocator is in it already
    assert specs["tcmalloc-bf16"]["precision"] == "bfloat16"


def test_the_ladder_stops_where_the_budget_would_be_passed():
    best, path, finished = search.ladder(["tcmalloc", "bf16"], dict(CATALOG),
                                         lambda *_: {"verdict": "faster"}, lambda: False)
    assert (best, path, finished) == ("tcmalloc", [], False)


def test_the_report_shows_the_recipe_as_written_and_every_ranked_row(tmp_path):
    """The caption as docutils renders it (Snakemake's report renders it so; the report
    itself is checked in tests/docs/test_search_end_to_end.py)."""
    import docutils.core

    ranked, recipe = tmp_path / "search.csv", tmp_path / "recipe.txt"
    ranked.write_text("kind,stage,environment,compared_with,ratio,ratio_low,ratio_high,verdict,"
                      "reason\nalone,s,tcmalloc,glibc,0.9,0.85,0.95,faster,\n"
                      "alone,s,omp_pinned,glibc,,,,not measured,*one* OpenMP thread: `none`\n"
                      "best,s_final,tcmalloc,glibc,0.91,0.86,0.96,faster,\n")
    recipe.write_text("best: tcmalloc\n\nthe line:\n  LD_PRELOAD=/x/libtcmalloc.so.4 python "
                      "train.py\n")
    html = docutils.core.publish_parts(search.caption(ranked, recipe), writer="html",
                                       settings_overrides={"halt_level": 2})["html_body"]
    assert "LD_PRELOAD=/x/libtcmalloc.so.4 python train.py" in html  # as written, not reflowed
    assert html.count("<tr>") == 4  # the header and every row, the unmeasured one included
    assert "*one* OpenMP thread: `none`" in html  # its reason as written, not as markup
    assert "[0.85, 0.95]" in html
