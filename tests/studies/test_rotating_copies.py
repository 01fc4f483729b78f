"""rotating_copies copies into k targets in turn: each call the next target, every target
holding the source; the two kernels of a (k, size) one after the other, the first alternating;
the clone case counts its outputs' addresses from the timed calls on; bad params fail early."""

import numpy as np
import pytest

from knobs import runner
from studies.store_path.benchmarks import rotating_copies
from knobs.environment import KnobNotApplied

MIB = 1 << 20


def test_the_two_kernels_of_each_k_and_size_run_one_after_the_other_the_first_alternating():
    params = {"sizes": [MIB, 2 * MIB], "targets": [1, 3], "clone_sizes": [MIB]}
    for seed in (0, 1):
        cases = rotating_copies.Benchmark(params, "cpu", seed).cases()
        assert cases[-1] == f"clone-0-{MIB}"
        pairs = [cases[i:i + 2] for i in range(0, len(cases) - 1, 2)]
        assert len(pairs) == 4
        assert all(a.split("-", 1)[1] == b.split("-", 1)[1] and a != b for a, b in pairs)
        firsts = [a.split("-")[0] for a, _ in pairs]
        assert firsts == [("memcpy", "torch")[(i + seed) % 2] for i in range(len(pairs))]


@pytest.mark.parametrize("kernel", ["memcpy", "torch"])
def test_each_call_writes_the_next_target_in_turn(kernel):
    bench = rotating_copies.Benchmark({"sizes": [MIB], "targets": [3]}, "cpu", 0)
    step = bench.setup(f"{kernel}-3-{MIB}")  # checked there: the source in every target
    source, targets = bench._buffers(MIB)
    assert len(targets) == 3
    for target in targets:
        target[:] = 0
    for written in range(1, 4):
        step()
        assert [np.array_equal(source, t) for t in targets] == [i < written for i in range(3)]
    assert bench.info(f"{kernel}-3-{MIB}") == {"bytes": MIB, "copy_kernel": kernel,
                                               "targets": 3}


def test_targets_are_faulted_in_on_4k_pages_before_the_clock():
    bench = rotating_copies.Benchmark({"sizes": [MIB], "targets": [2]}, "cpu", 0)
    step = bench.setup(f"memcpy-2-{MIB}")
    faults = runner.measure(step, 2, 4)["samples"]["minor_faults"]
    assert max(faults) <= 2, faults  # every page there before the first timed call


def test_a_kernel_that_does_not_copy_fails_its_case(monkeypatch):
    bench = rotating_copies.Benchmark({"sizes": [MIB], "targets": [2]}, "cpu", 0)
    monkeypatch.setattr(rotating_copies.np, "copyto", lambda target, source: None)
    with pytest.raises(RuntimeError, match="does not hold the source"):
        bench.setup(f"memcpy-2-{MIB}")


def test_pages_that_did_not_fault_in_fail_the_run(monkeypatch):
    monkeypatch.setattr(rotating_copies, "faults_to_fill", lambda view: 0)
    bench = rotating_copies.Benchmark({"sizes": [MIB]}, "cpu", 0)
    with pytest.raises(KnobNotApplied, match="4 KiB pages take 256"):
        bench.setup(f"torch-1-{MIB}")


def test_the_clone_counts_its_outputs_addresses_in_the_timed_calls_only():
    bench = rotating_copies.Benchmark({"sizes": [MIB], "clone_sizes": [MIB]}, "cpu", 0)
    case = f"clone-0-{MIB}"
    step = bench.setup(case)
    kept = []  # every output kept alive: each call's at an address of its own

    def kept_alive():
        kept.append(step())
        assert np.array_equal(kept[-1].numpy(), bench._buffers(MIB)[0])

    runner.measure(kept_alive, 4, 5, bench.warm)
    assert len({output.data_ptr() for output in kept}) == 1 + 3 + 5
    assert bench.info(case) == {"bytes": MIB, "copy_kernel": "clone", "targets": 5}


@pytest.mark.parametrize("targets", [[0], [1, -2]])
def test_targets_below_one_fail_at_once(targets):
    with pytest.raises(ValueError, match="each at least 1"):
        rotating_copies.Benchmark({"sizes": [MIB], "targets": targets}, "cpu", 0)
