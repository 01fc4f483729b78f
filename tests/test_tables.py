"""Tidy-table columns computed from the runs: the copy step's fault model."""

import pandas as pd
import pytest

from conftest import REPO
from knobs import results
from knobs.benchmarks.copy.model import copy_columns, fault_model
from knobs.tables import rows

MIB = 1 << 20


def test_the_fault_model_charges_each_fault_at_its_page_size():
    faults = pd.DataFrame({"host": "h", "case": ["4k", "4k", "2m"], "seconds": [2e-3, 2e-3, 4e-3],
                           "minor_faults": [1000, 1000, 20], "bytes": 64 * MIB})  # 2 and 200 us
    copy = pd.DataFrame({
        "host": "h", "device": "cpu", "limit_gbps": 10.0,
        "bytes": [40 * MIB, 40 * MIB, 40 * MIB],
        # no fault; one per 4 KiB page; 20 huge pages (the rest of the 40 MiB, 0 bytes, small)
        "minor_faults": [0, 10240, 20],
    })
    model = fault_model(copy, faults)
    limit = 40 * MIB / 10e9
    assert model["limit_seconds"].tolist() == pytest.approx([limit] * 3)
    assert model["fault_seconds"].tolist() == pytest.approx([0, 10240 * 2e-6, 20 * 200e-6])
    assert model["predicted_seconds"].tolist() == pytest.approx(
        [limit, limit + 10240 * 2e-6, limit + 20 * 200e-6])


def test_a_fault_costs_what_the_probe_measured_at_that_size():
    # probed at 16 and 64 MiB: 1 us and 2 us per 4 KiB fault; 80 us per 2 MiB fault at 16 MiB
    faults = pd.DataFrame({"host": "h", "case": ["4k-16", "4k-64", "2m-16"],
                           "bytes": [16 * MIB, 64 * MIB, 16 * MIB],
                           "seconds": [1e-3, 2e-3, 0.8e-3], "minor_faults": [1000, 1000, 10]})
    copy = pd.DataFrame({"host": "h", "device": "cpu", "limit_gbps": 10.0,
                         "bytes": [16 * MIB, 32 * MIB, 64 * MIB, 128 * MIB],
                         "minor_faults": [4096, 8192, 16384, 32768]})
    model = fault_model(copy, faults)
    # exact where probed, halfway in log size between (32 MiB), the nearest size beyond
    assert model["fault_cost_4k"].tolist() == pytest.approx([1e-6, 1.5e-6, 2e-6, 2e-6])
    assert model["fault_cost_2m"].tolist() == pytest.approx([80e-6] * 4)
    assert model["fault_seconds"].tolist() == pytest.approx([4096e-6, 8192 * 1.5e-6,
                                                             16384 * 2e-6, 32768 * 2e-6])


def test_a_fault_inside_a_copy_costs_the_fresh_copy_less_the_warm_one_per_fault():
    # 64 MiB: touch 1 ms / 1000 faults (1 us); copy into fresh pages 9 ms, into warm 5 ms,
    # 1000 faults: 4 us per fault inside a copy
    faults = pd.DataFrame({"host": "h", "case": ["4k-64", "copy4k-64", "warm4k-64"],
                           "bytes": 64 * MIB, "seconds": [1e-3, 9e-3, 5e-3],
                           "minor_faults": [1000, 1000, 0]})
    copy = pd.DataFrame({"host": "h", "device": "cpu", "limit_gbps": 10.0,
                         "bytes": [64 * MIB], "minor_faults": [16384]})
    model = fault_model(copy, faults)
    assert model["fault_cost_4k"].tolist() == pytest.approx([1e-6])
    assert model["fault_cost_4k_in_copy"].tolist() == pytest.approx([4e-6])
    limit = 64 * MIB / 10e9
    assert model["predicted_in_copy_seconds"].tolist() == pytest.approx([limit + 16384 * 4e-6])
    assert model["predicted_seconds"].tolist() == pytest.approx([limit + 16384 * 1e-6])


def test_a_huge_page_fault_inside_a_copy_is_taken_against_a_warm_copy_on_huge_pages():
    # 64 MiB: copy into fresh huge pages 8 ms, into warm huge pages 4 ms, 32 faults:
    # 125 us each; the warm copy on 4 KiB pages (6 ms) is not the one subtracted
    faults = pd.DataFrame({"host": "h", "bytes": 64 * MIB,
                           "case": ["4k-64", "2m-64", "copy2m-64", "warm2m-64", "warm4k-64"],
                           "seconds": [1e-3, 3.2e-3, 8e-3, 4e-3, 6e-3],
                           "minor_faults": [1000, 32, 32, 0, 0]})
    copy = pd.DataFrame({"host": "h", "device": "cpu", "limit_gbps": 10.0,
                         "bytes": [64 * MIB, 64 * MIB], "minor_faults": [32, 16384]})
    model = fault_model(copy, faults)
    assert model["fault_cost_2m_in_copy"].tolist() == pytest.approx([125e-6] * 2)
    limit = 64 * MIB / 10e9
    # the huge-page call is predicted with the cost inside a copy; the 4 KiB one has no
    # copy4k probe, so no prediction
    assert model["predicted_in_copy_seconds"].iloc[0] == pytest.approx(limit + 32 * 125e-6)
    assert pd.isna(model["predicted_in_copy_seconds"].iloc[1])


def test_without_a_fault_probe_there_is_no_model():
    copy = pd.DataFrame({"host": ["h"], "bytes": [1], "minor_faults": [0]})
    assert "predicted_seconds" not in fault_model(copy, None)


def test_the_copy_limit_is_the_rows_own_environments_where_it_ran_there():
    """An environment can change the copy itself (glibc's store path): a row gets the limit
    measured in its own environment where there is one, else the first listed's (the
    baseline's store path), not the fastest."""
    seconds = {("copyto", "glibc"): 4e-3, ("copyto", "memcpy_nt"): 2e-3,
               ("copyto", "tcmalloc"): 3e-3, ("numpy", "glibc"): 5e-3,
               ("numpy", "memcpy_nt"): 2.5e-3, ("numpy", "hugepages_off"): 6e-3}
    rows = pd.DataFrame([{"experiment": "copy", "framework": f, "environment": e,
                          "host": "h", "device": "cpu", "input": "random", "batch": 1, "rep": 0,
                          "sample": 0, "seconds": t, "minor_faults": 0, "bytes": 10 * MIB}
                         for (f, e), t in seconds.items()])
    settings = {"limit": {"frameworks": ["copyto"],
                          "environments": ["glibc", "memcpy_nt", "tcmalloc"]}}
    table = copy_columns(rows, settings, {}).set_index(["framework", "environment"])
    source = table["limit_source"]
    assert source[("numpy", "glibc")] == "copyto/glibc"
    assert source[("numpy", "memcpy_nt")] == "copyto/memcpy_nt"
    assert source[("numpy", "hugepages_off")] == "copyto/glibc"  # the first, not the fastest
    assert table.loc[("numpy", "glibc"), "limit_gbps"] == pytest.approx(10 * MIB / 4e-3 / 1e9)


def test_a_case_fact_named_like_a_record_column_keeps_both():
    runs = REPO / "results" / "paper" / "torch_copy" / "runs" / "copy_kernels"
    run = results.load(next(runs.rglob("*.json.gz")))
    case = run["order"][0]
    run["cases"][case]["info"]["kernel"] = "memcpy"  # also the machine's Linux kernel
    row = next(r for r in rows(run, "case") if r["case"] == case)
    assert row["case_kernel"] == "memcpy" and row["kernel"] == run["machine"]["kernel"]
