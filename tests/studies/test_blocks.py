"""The studies' block functions (studies/<study>/blocks.py): the rules their sentences rest on."""

import numpy as np
import pandas as pd

from studies.noise import blocks as noise
from studies.noise.blocks import counts_of
from studies.output_memory.blocks import alike_text, maps_afresh, process_course
from studies.store_path import blocks as store_path


def test_the_mmap_threshold_rule_follows_what_the_cases_before_freed():
    mb = 1 << 20
    assert maps_afresh(5 * mb, [])  # nothing freed yet: 5 MiB + 2 MiB maps
    assert maps_afresh(5 * mb, [2 * mb])  # a smaller case's input raised it short of 7 MiB
    assert not maps_afresh(5 * mb, [10 * mb])  # a larger case's input raised it past
    # above the 32 MiB ceiling a block never raises it, a smaller one freed beside it may
    assert maps_afresh(5 * mb, [40 * mb])
    assert not maps_afresh(5 * mb, [40 * mb, 10 * mb])
    assert maps_afresh(5 * mb, [10 * mb], alignment=8 * mb)  # more alignment asks for more


def test_withheld_counts_name_each_runs_total_where_they_differ():
    assert counts_of([4, 0], [162, 162]) == "4 and 0 of 162"
    assert counts_of([4, 0], [162, 160]) == "4 of 162 and 0 of 160"


def test_a_process_course_says_where_its_faulting_calls_lie():
    fresh = 4 << 20  # 4 MiB: a call faults from 2 faults (at least one per 4 MiB, and two)
    assert process_course([2, 2, 2], fresh, "") == ("every", 3, "")
    assert process_course([0, 1, 0], fresh, "heap:0")[:2] == ("none", 0)  # a stray fault
    assert process_course([5, 5, 0, 0], fresh, "")[:2] == ("switched", 2)
    assert process_course([5, 0, 5, 0], fresh, "")[:2] == ("mixed", 2)  # came back
    assert process_course([0, 5, 5, 0], fresh, "")[:2] == ("late", 2)  # the first did not
    assert process_course([0, 1000], 1 << 30, "")[:2] == ("late", 1)  # 256 per GiB at least
    assert process_course([5], fresh, "mapped:9 grown:5")[2] == ("glibc's heap grown and "
                                                                 "a fresh mapping")


def test_configurations_alike_are_named_by_the_course_they_took():
    alike = [("every", "mapped"), ("switched", "glibc's heap"), ("every", "mapped"),
             ("late", "glibc's heap"), ("none", "glibc's heap")]
    assert alike_text(alike) == (
        "2 every call faulted, mapped after; 1 the first calls faulted, then not, glibc's heap "
        "after; 1 some calls faulted, not the first, glibc's heap after; 1 no call faulted, "
        "glibc's heap after")


def test_the_non_temporal_threshold_is_read_from_the_environments_tunables():
    nt = {"env": {"GLIBC_TUNABLES": "glibc.cpu.x86_non_temporal_threshold=0x2000000"}}
    assert store_path.non_temporal_threshold(nt) == 32 << 20
    assert store_path.non_temporal_threshold({"env": {"MALLOC_ARENA_MAX": "2"}}) is None


def test_a_copy_is_priced_at_its_own_limit_and_the_probe_of_one_environment():
    nbytes, faults = 4096 * 1000, 1000

    def rows(framework, environment, seconds, minor_faults):
        return [{"framework": framework, "environment": environment, "batch": 16,
                 "bytes": nbytes, "seconds": seconds, "minor_faults": minor_faults,
                 "device": "cpu", "host": "h"}] * 3

    copy = pd.DataFrame(rows("torch", "glibc", 0.010, faults) + rows("torch", "thp", 0.009, faults)
                        + rows("numpy", "glibc", 0.003, 0) + rows("torch_copyto", "glibc", 0.004, 0)
                        + rows("copyto", "glibc", 0.003, 0))

    def probe(environment, inside):  # a touch: 2 us; inside a copy: `inside` us per fault
        return [{"environment": environment, "host": "h", "bytes": nbytes, "case": case,
                 "seconds": seconds, "minor_faults": n} for case, seconds, n in (
                     (f"4k-{nbytes}", faults * 2e-6, faults),
                     (f"copy4k-{nbytes}", 0.003 + faults * inside * 1e-6, faults),
                     (f"warm4k-{nbytes}", 0.003, 0))]

    table = pd.DataFrame(probe("glibc", 1.5) + probe("vector", 1.0))
    t = type("Tables", (), {"copy": copy})()
    priced = store_path.priced(t, table, "vector")
    # only the copies that fault; each at torch_copyto's limit (thp: glibc's, none of its own)
    assert list(priced.index) == [("torch", "glibc", 16), ("torch", "thp", 16)]
    assert np.allclose(priced["limit"], 0.004)
    assert np.allclose(priced["touch"], 0.004 + faults * 2e-6)
    assert np.allclose(priced["inside"], 0.004 + faults * 1.0e-6)  # the vector probe's
    assert np.allclose(store_path.priced(t, table, "glibc")["inside"], 0.004 + faults * 1.5e-6)


def test_the_clones_share_is_the_second_targets_part_of_its_excess_where_it_is_clear():
    def medians(clone_ms):
        rows = [("memcpy_erms", kernel, 8, k, rep, ms / 1e3)
                for rep in range(3) for kernel, k, ms in (
                    ("torch", 1, 2.0), ("torch", 2, 3.0), ("clone", 0, clone_ms[rep]))]
        table = pd.DataFrame(rows, columns=["environment", "copy_kernel", "bytes", "targets",
                                            "rep", "seconds"])
        return table.set_index(["environment", "copy_kernel", "bytes", "rep"]).sort_index()

    raw = pd.DataFrame({"environment": "memcpy_erms", "copy_kernel": "clone", "bytes": 8,
                        "rep": [0, 1, 2], "targets": [2, 2, 3], "minor_faults": [0, 0, 9]})
    cells = store_path.clone_cells(medians([4.0, 4.0, 3.0]), raw, "memcpy_erms", 8)
    # (3 - 2) / (clone - 2): 0.5, 0.5 and 1.0; addresses 2 to 3; a third of calls faulted
    assert cells[1:3] == ["2 to 3", "33%"] and cells[5] == "0.50 (0.50 to 1.00)"
    assert cells[3] == "2.00x (1.50 to 2.00)"  # the clone against the kernel into 1
    # a process whose clone is within 10% of the kernel into 1: no share (it divides by noise)
    assert store_path.clone_cells(medians([4.0, 4.0, 2.1]), raw, "memcpy_erms", 8)[5] == "-"


def test_twin_calls_count_each_runs_own_twins_and_no_comparison(tmp_path):
    """A/A twins called an effect, by processes, over every run's own verdict table under the
    root; a comparison's verdicts (no `kind` of row, no `processes`) are not a run's."""
    def run(folder, rows):
        (tmp_path / folder).mkdir(parents=True)
        pd.DataFrame(rows, columns=["kind", "processes", "verdict"]).to_csv(
            tmp_path / folder / "verdicts.csv", index=False)

    run("tables", [("A/A", 3, "faster"), ("A/A", 3, "no effect"), ("vs baseline", 3, "slower")])
    run("second/tables", [("A/A", 8, "inconclusive"), ("A/A", 3, "no effect")])
    pd.DataFrame({"verdict_before": ["faster"], "verdict_after": ["slower"]}).to_csv(
        tmp_path / "verdicts.csv", index=False)
    text = noise.twin_calls(type("T", (), {"root": tmp_path}))
    assert text.startswith("Over the 2 runs' own verdict tables")
    assert "in 1 of 4 verdicts (1 of 3 at 3 processes; 0 of 1 at 8 processes)" in text
