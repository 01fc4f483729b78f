"""The fault probe faults in what it says: every 4 KiB page of a small-page region, and only
whole huge pages where the kernel's THP mode allows them; its copy into fresh pages faults in
each, its copy into warm pages none."""

import resource

import pytest

from knobs.benchmarks.faults import Benchmark, thp_mode

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
