"""copy_kernels compares the two kernels on the same buffers: each pair's cases run one after
the other, the first alternating; both copy the source into the target; a page kind that did
not apply fails the run."""

import numpy as np
import pytest

from studies.store_path.benchmarks import copy_kernels
from knobs.benchmarks.faults import thp_mode
from knobs.environment import KnobNotApplied

MIB = 1 << 20
HUGE = thp_mode() in ("madvise", "always")


def test_the_two_kernels_of_a_pair_run_one_after_the_other_the_first_alternating():
    sizes = [MIB, 3 * MIB]
    for seed in (0, 1):
        cases = copy_kernels.Benchmark({"sizes": sizes}, "cpu", seed).cases()
        pairs = [cases[i:i + 2] for i in range(0, len(cases), 2)]
        assert all({a.split("-", 1)[1]} == {b.split("-", 1)[1]} and a != b for a, b in pairs)
        firsts = [a.split("-")[0] for a, _ in pairs]
        assert firsts == [("memcpy", "torch")[(i + seed) % 2] for i in range(len(pairs))]
        assert len(pairs) == len(sizes) * (2 if HUGE else 1)


@pytest.mark.parametrize("page", ["4k", "2m"] if HUGE else ["4k"])
def test_each_kernel_copies_the_source_into_the_shared_target(page):
    bench = copy_kernels.Benchmark({"sizes": [3 * MIB]}, "cpu", 0)
    first, second = (f"{kernel}-{page}-{3 * MIB}" for kernel in ("torch", "memcpy"))
    for case in (first, second):
        step = bench.setup(case)  # checked there: its own kernel copied into a cleared target
        source, target, faults = bench._buffers(page, 3 * MIB)
        target[:] = 0
        step()
        assert np.array_equal(source, target)
    assert bench.info(first)["new_buffers"] and not bench.info(second)["new_buffers"]
    assert bench.info(second)["copy_kernel"] == "memcpy"
    pages = 2 if page == "2m" else 3 * MIB // 4096  # one fault per page of its kind
    assert all(pages <= n <= pages + 16 for n in faults), faults  # + a stray fault or two


def test_a_kernel_that_does_not_copy_fails_its_case(monkeypatch):
    bench = copy_kernels.Benchmark({"sizes": [MIB]}, "cpu", 0)
    monkeypatch.setattr(copy_kernels.np, "copyto", lambda target, source: None)
    with pytest.raises(RuntimeError, match="does not hold the source"):
        bench.setup(f"memcpy-4k-{MIB}")


def test_huge_pages_that_did_not_come_fail_the_case(monkeypatch):
    real = copy_kernels.fresh_region
    monkeypatch.setattr(copy_kernels, "fresh_region", lambda size, huge: real(size, False))
    bench = copy_kernels.Benchmark({"sizes": [4 * MIB]}, "cpu", 0)
    with pytest.raises(KnobNotApplied, match="huge"):
        bench.setup(f"memcpy-2m-{4 * MIB}")
