"""The fault probe faults in what it says: every 4 KiB page of a small-page region, and only
whole huge pages where the kernel's THP mode allows them; its copy into fresh pages faults in
each, its copy into warm pages none; its chunked copy faults each page in before its chunk."""

import resource

import numpy as np
import pytest

from knobs.benchmarks import faults
from knobs.benchmarks.faults import (Benchmark, copy_in_chunks, fresh_region, offset_in,
                                     populate_write_error, thp_mode)

MIB = 1 << 20


def faults_of(step):
    step()  # the first call maps Python's and numpy's own pages too
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    step()
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before


def test_one_case_per_page_kind_and_size():
    probe = Benchmark({"sizes": [5 * MIB, 40 * MIB]}, "cpu", 0)
    kinds = (["4k", "2m", "copy4k", "copy2m", "warm4k", "warm2m"]
             if thp_mode() in ("madvise", "always") else ["4k", "copy4k", "warm4k"])
    assert probe.cases() == [f"{k}-{s}" for k in kinds for s in (5 * MIB, 40 * MIB)]
    assert probe.info("4k-41943040")["bytes"] == 40 * MIB


def test_a_copy_into_fresh_pages_faults_each_and_one_into_warm_pages_none():
    probe = Benchmark({"sizes": [8 * MIB]}, "cpu", 0)
    assert faults_of(probe.setup(f"copy4k-{8 * MIB}")) == pytest.approx(2048, abs=16)
    assert faults_of(probe.setup(f"warm4k-{8 * MIB}")) <= 16


@pytest.mark.skipif(thp_mode() not in ("madvise", "always"), reason="the kernel gives no THP")
def test_a_copy_into_fresh_huge_pages_faults_once_per_2mib_and_warm_huge_pages_not_at_all():
    probe = Benchmark({"sizes": [5 * MIB]}, "cpu", 0)
    assert 3 <= faults_of(probe.setup(f"copy2m-{5 * MIB}")) <= 3 + 16
    assert faults_of(probe.setup(f"warm2m-{5 * MIB}")) <= 16


def test_small_pages_fault_once_each():
    probe = Benchmark({"sizes": [8 * MIB]}, "cpu", 0)
    assert faults_of(probe.setup(f"4k-{8 * MIB}")) == pytest.approx(2048, abs=16)


@pytest.mark.skipif(thp_mode() not in ("madvise", "always"), reason="the kernel gives no THP")
def test_huge_pages_fault_once_per_2mib():
    probe = Benchmark({"sizes": [5 * MIB]}, "cpu", 0)  # rounded up to three 2 MiB pages
    assert 3 <= faults_of(probe.setup(f"2m-{5 * MIB}")) <= 3 + 16


POPULATE = pytest.mark.skipif(bool(populate_write_error()), reason="Linux before 5.14")
THP = pytest.mark.skipif(thp_mode() not in ("madvise", "always"), reason="the kernel gives no THP")


@pytest.mark.parametrize("fresh, warm", [("chunk4k", "chunkwarm4k"),
                                         pytest.param("before4k", "beforewarm4k",
                                                      marks=POPULATE),
                                         pytest.param("allbefore4k", "allbeforewarm4k",
                                                      marks=POPULATE)])
def test_a_chunked_copy_faults_each_page_once_and_its_warm_twin_none(fresh, warm):
    probe = Benchmark({"sizes": [8 * MIB], "kinds": [fresh, warm], "chunk": 64 << 10}, "cpu", 0)
    assert probe.cases() == [f"{fresh}-{8 * MIB}", f"{warm}-{8 * MIB}"]
    assert faults_of(probe.setup(f"{fresh}-{8 * MIB}")) == pytest.approx(2048, abs=16)
    assert faults_of(probe.setup(f"{warm}-{8 * MIB}")) <= 16


@THP
@pytest.mark.parametrize("fresh, warm", [("chunk2m", "chunkwarm2m"),
                                         pytest.param("before2m", "beforewarm2m",
                                                      marks=POPULATE),
                                         pytest.param("allbefore2m", "allbeforewarm2m",
                                                      marks=POPULATE)])
def test_a_chunked_copy_into_huge_pages_faults_once_per_2mib_and_its_warm_twin_not_at_all(
        fresh, warm):
    probe = Benchmark({"sizes": [5 * MIB], "kinds": [fresh, warm], "chunk": 2 * MIB}, "cpu", 0)
    assert 3 <= faults_of(probe.setup(f"{fresh}-{5 * MIB}")) <= 3 + 16
    assert faults_of(probe.setup(f"{warm}-{5 * MIB}")) <= 16


@pytest.mark.parametrize("populate", [False, pytest.param(True, marks=POPULATE)])
def test_a_chunked_copy_writes_the_source_whole(populate):
    """Every chunk is copied, the last one short where the size is not a multiple."""
    size = 5 * MIB + 12345
    source = np.random.default_rng(0).integers(0, 256, size, dtype=np.uint8)
    region, pages = fresh_region(size, False)
    copy_in_chunks(region, pages, source, 3 * 4096, populate)
    assert np.array_equal(pages[:size], source)


class CountingRegion:
    """A mapping whose madvise counts the faults the kernel takes inside it."""

    def __init__(self, region):
        self.region, self.faults = region, 0

    def madvise(self, *args):
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        self.region.madvise(*args)
        self.faults += resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before


@POPULATE
@pytest.mark.parametrize("huge, size, skip, faults", [
    (False, 2 * MIB, 0, 512), (False, 2 * MIB, MIB, 512),
    pytest.param(True, 8 * MIB, 0, 4, marks=THP)])
def test_before_its_copy_the_kernel_faults_each_chunk_in_and_the_copy_faults_none(
        huge, size, skip, faults):
    """The madvise offsets follow where the copy's view starts in its mapping (past its first
    byte over huge pages), or the copy faults where the kernel was asked for other pages."""
    source = np.ones(size, dtype=np.uint8)
    region, whole = fresh_region(size + skip, huge)
    pages = whole[skip:]
    offset = offset_in(region, pages)
    counting = CountingRegion(region)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    copy_in_chunks(counting, pages, source, 64 << 10, True, offset)
    every = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
    assert offset == skip or huge
    assert faults <= counting.faults <= faults + 4  # a few of Python's own, at most
    assert every - counting.faults < min(faults, 5)


@POPULATE
@pytest.mark.parametrize("kind, faulted_before_the_copies", [("allbefore4k", 2048),
                                                             ("before4k", 0)])
def test_all_before_the_kernel_faults_the_whole_region_in_before_the_first_copy(
        monkeypatch, kind, faulted_before_the_copies):
    """allbefore4k's 2,048 pages are all faulted in before its chunks' copies begin; before4k
    faults each chunk's pages in inside its loop of copies."""
    probe = Benchmark({"sizes": [8 * MIB], "kinds": [kind], "chunk": 64 << 10}, "cpu", 0)
    step = probe.setup(f"{kind}-{8 * MIB}")
    copy, entered = faults.copy_in_chunks, []

    def recording(*args):
        entered.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt)
        copy(*args)

    monkeypatch.setattr(faults, "copy_in_chunks", recording)
    step()  # the first call maps Python's and numpy's own pages too
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    step()
    every = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
    assert every == pytest.approx(2048, abs=16)
    assert entered[-1] - before == pytest.approx(faulted_before_the_copies, abs=16)


@pytest.mark.parametrize("params, named", [({"kinds": ["copy8k"]}, "not a list of"),
                                           ({"kinds": "copy4k"}, "not a list of"),
                                           ({"chunk": 1000}, "not a positive multiple"),
                                           ({"kinds": ["before2m"], "chunk": 64 << 10},
                                            "not a multiple of 2097152")])
def test_bad_params_name_the_fix(params, named):
    with pytest.raises(ValueError, match=named):
        Benchmark(params, "cpu", 0)


def test_repeated_kinds_run_once():
    assert Benchmark({"sizes": [4096], "kinds": ["4k", "4k"]}, "cpu", 0).cases() == ["4k-4096"]
