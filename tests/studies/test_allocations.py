"""studies/output_memory/allocations.py: its recorder sees every output the copy step asks glibc for, and its
summary counts where each output went and what came between two outputs, as the calls say."""

import gzip
import io
import shutil

import pandas as pd
import pytest
import yaml

from studies.output_memory import allocations  # (conftest puts the repository on the path)
from knobs.benchmarks.copy import SERVED_CALLS
from conftest import REPO

NBYTES = 2 * 3 * 448 * 448 * 4  # batch 2
A, B, SMALL = 0x10000, 0x900000, 0x20
IMAGE = [3, 448, 448]


def output(address):
    return ("a", address, NBYTES, 64)


def test_a_request_right_after_a_freed_output_sends_the_next_output_elsewhere():
    calls = [("m", 0x5000000, NBYTES, 0),  # the input
             output(A), ("f", A, 0, 0),  # the check: a new block
             ("m", SMALL, 96, 0), output(A), ("f", A, 0, 0), ("f", SMALL, 0, 0),  # reused
             ("m", A + NBYTES + 16, 96, 0), output(B), ("f", B, 0, 0),  # hemmed in: elsewhere
             ("m", B - 112, 96, 0), output(A)]  # not right after B: A again, no new block
    row = allocations.summarize(2, calls, IMAGE, warmup=1)
    assert row["calls"] == 4 and row["calls_at_new_blocks"] == "1 3" and row["blocks"] == 2
    assert row["timed_calls_at_new_blocks"] == 1  # call 3: after the check and one warm-up
    assert row["gaps"] == 3 and row["asked_in_every_gap"] == "96"
    assert row["landed_right_after_freed_output"] == 1
    assert row["next_output_elsewhere"] == 2 and row["landed_after_and_next_elsewhere"] == 1


def test_a_size_asked_in_some_gaps_only_is_not_in_every_gap():
    calls = [("m", 0x5000000, NBYTES, 0), output(A), ("f", A, 0, 0), ("m", SMALL, 96, 0),
             output(A), ("f", A, 0, 0), output(A)]
    row = allocations.summarize(2, calls, IMAGE, warmup=1)
    assert row["gaps"] == 2 and row["asked_in_every_gap"] == "" and row["blocks"] == 1


@pytest.mark.skipif(not (shutil.which("cc") or shutil.which("gcc")), reason="no C compiler")
def test_the_recorder_sees_every_output_and_the_request_between_them(tmp_path):
    """One process each of the aligned copy and of aligned_storage at batch 1: the check, the
    warm-up, the timed calls and the calls after them each ask glibc for one output of the
    batch's size; aligned_storage's 96 bytes come between every two of them, the aligned
    copy's gaps have no size in common; the record marks the batch."""
    assert allocations.main(["--out", str(tmp_path), "--frameworks", "aligned",
                             "aligned_storage", "--batches", "1", "--processes", "1"]) == 0
    copy = yaml.safe_load((REPO / "config" / "config.yaml").read_text())["copy"]
    rows = pd.read_csv(tmp_path / "allocations.csv", dtype={"asked_in_every_gap": str})
    rows = rows.fillna("").set_index("framework")
    assert set(rows["calls"]) == {1 + copy["warmup"] + copy["calls"] + SERVED_CALLS}
    assert set(rows["bytes"]) == {3 * 448 * 448 * 4}
    assert rows.loc["aligned_storage", "asked_in_every_gap"].split() == ["96"]
    assert rows.loc["aligned", "asked_in_every_gap"] == ""
    with gzip.open(tmp_path / "aligned.0.calls.gz", "rt") as record:
        assert next(line for line in record if line.startswith("#")).split()[2] == "1"


@pytest.mark.parametrize("run", ["", "second"])
def test_the_shipped_table_is_what_its_records_say(run):
    """results/paper/allocations (the README's block): each row summarizes its process's raw
    record, with the config the runs used."""
    folder = REPO / "results/paper/allocations" / run
    copy = yaml.safe_load((REPO / "config" / "config.yaml").read_text())["copy"]
    shipped = pd.read_csv(folder / "allocations.csv", dtype={"asked_in_every_gap": str})
    again = pd.DataFrame([
        {"framework": framework, "process": process,
         **allocations.summarize(batch, calls, copy["image"], copy["warmup"])}
        for framework, process in shipped[["framework", "process"]].drop_duplicates().itertuples(
            index=False)
        for batch, calls in allocations.read_calls(
            folder / f"{framework}.{process}.calls.gz").items()])
    again = pd.read_csv(io.StringIO(again.to_csv(index=False)),
                        dtype={"asked_in_every_gap": str})  # as written and read back
    pd.testing.assert_frame_equal(again, shipped)
