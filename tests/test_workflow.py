"""The tiny end-to-end run: two frameworks, environments, batches -> table, figure, report."""

import concurrent.futures
import re
import shutil

import pandas as pd
import pytest

from conftest import PAPER_RULES, REPO, SNAKEMAKE, TINY, dry_run, load_yaml, snakemake, write_config


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("tiny")
    done = snakemake(workdir, "--cores", "2", configfile=TINY)
    return workdir, done


def test_tiny_run_writes_the_tidy_table(tiny_run):
    workdir, _ = tiny_run
    config = load_yaml(TINY)["copy"]
    table = pd.read_csv(workdir / "results/tables/copy.csv")
    for column in ["experiment", "framework", "environment", "device", "batch", "input",
                   "rep", "sample", "seconds", "minor_faults", "bytes", "gbps",
                   "limit_gbps", "host", "cpu", "framework_version", "glibc", "thp_enabled",
                   "cpu_seconds", "major_faults", "voluntary_switches", "involuntary_switches",
                   "knob_proofs", "other_cpus", "steal_share", "disturbed", "machine_kind"]:
        assert column in table.columns, column
    runs = table.groupby(["framework", "environment", "batch", "rep"]).size()
    assert (runs == config["calls"]).all()
    # the grid asked for, each baseline's A/A twin, and the copy-limit references
    expected = {(f, e) for f in config["frameworks"] for e in config["environments"]}
    expected |= {(f, "glibc.twin") for f in config["frameworks"]}
    expected |= {(f, e) for f in ["copyto", "numpy"] for e in ["glibc", "tcmalloc"]}
    assert set(map(tuple, table[["framework", "environment"]].drop_duplicates().values)) == expected
    assert (table["cpu_seconds"] >= 0).all() and table["other_cpus"].notna().all()
    assert set(table["batch"]) == set(config["batches"])
    assert table["limit_gbps"].notna().all()
    # written to 6 significant digits
    assert (table["gbps"] * table["seconds"] * 1e9 / table["bytes"] - 1).abs().max() < 2e-5
    tcmalloc = table[table["environment"] == "tcmalloc"]
    assert tcmalloc["preloads"].str.contains("libtcmalloc").all()
    assert (tcmalloc["knob_proofs"] == "libtcmalloc.so.4=effect").all()
    quoting = table[table["environment"] == "quoting"]
    assert (quoting["knob_proofs"] == "KNOBS_PROBE=presence").all()


def test_quoted_environment_value_runs_nothing_and_arrives_whole(tiny_run):
    workdir, _ = tiny_run
    assert not list(workdir.rglob("PWNED*")) and not list(REPO.rglob("PWNED*"))
    import json

    run = json.loads(next((workdir / "results/runs/copy/numpy/quoting").rglob("*.json")).read_text())
    value = load_yaml(TINY)["environments"]["quoting"]["env"]["KNOBS_PROBE"]
    assert run["knobs"]["set"]["KNOBS_PROBE"] == value == run["environ"]["KNOBS_PROBE"]


def test_figure_and_report(tiny_run):
    workdir, _ = tiny_run
    png = workdir / "results/figures/copy_step.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 20_000
    assert (workdir / "results/figures/copy_step.svg").stat().st_size > 20_000
    snakemake(workdir, "--cores", "1", "--report", "results/report.html", configfile=TINY)
    html = (workdir / "results/report.html").read_text(errors="replace")
    assert "copy_step.png" in html and "The copy step" in html


def test_second_run_reruns_nothing(tiny_run):
    workdir, _ = tiny_run
    done = snakemake(workdir, "--cores", "1", "--dry-run", configfile=TINY)
    assert "Nothing to be done" in done.stdout + done.stderr


def test_lint_and_format_are_clean():
    lint = snakemake(REPO, "--lint", check=False)
    assert lint.returncode == 0 and "Lints for" not in lint.stdout, lint.stdout + lint.stderr
    import subprocess

    fmt = subprocess.run([str(SNAKEMAKE.parent / "snakefmt"), "--check", str(REPO)],
                         capture_output=True, text=True)
    assert fmt.returncode == 0, fmt.stderr


def test_tiny_hourglass_run_writes_tables_traces_and_figures(tiny_run):
    workdir, _ = tiny_run
    config = load_yaml(TINY)["hourglass"]
    steps = pd.read_csv(workdir / "results/tables/hourglass.csv")
    for column in ["framework", "variant", "environment", "device", "phase", "batch", "stacks",
                   "resolution", "params", "rep", "sample", "seconds", "flops", "gflops",
                   "peak_gflops", "fraction_of_peak", "label", "rung", "build_seconds",
                   "first_seconds", "process_to_first_step_seconds"]:
        assert column in steps.columns, column
    assert set(steps["phase"]) == {"forward", "train"}
    assert steps["params"].nunique() == 1  # the same network in both frameworks
    per_config = steps.groupby(["configuration", "phase"]).size()
    assert (per_config == config["steps"]).all() and len(per_config) == 2 * 5  # and the twin
    assert "torch eager (A/A twin)" in set(steps["label"])
    assert steps["peak_gflops"].gt(0).all() and steps["fraction_of_peak"].between(0, 1.5).all()
    ops = pd.read_csv(workdir / "results/tables/hourglass_ops.csv")
    convolution = ops[ops["category"] == "convolution"].groupby("framework")["seconds"].sum()
    assert set(convolution.index) == {"tensorflow", "torch"} and (convolution > 0).all()
    traces = list((workdir / "results/traces/hourglass").rglob("*.json"))
    assert len(traces) == 5 and all(t.stat().st_size > 1000 for t in traces)
    for figure in ["hourglass_ladder", "hourglass_ops"]:
        assert (workdir / f"results/figures/{figure}.png").stat().st_size > 20_000


def test_rerunning_one_configuration_touches_only_its_files_and_what_is_built_from_them(tiny_run):
    workdir, _ = tiny_run
    runs = sorted((workdir / "results/runs").rglob("*.json"))
    built = [workdir / f"results/{p}" for p in ("tables/copy.csv", "figures/copy_step.png",
                                                 "tables/hourglass.csv")]
    before = {path: path.stat().st_mtime_ns for path in runs + built}
    target = workdir / "results/runs/copy/torch/tcmalloc/cpu/random/rep0.json"
    snakemake(workdir, "--cores", "1", "--forcerun", str(target.relative_to(workdir)),
              configfile=TINY)
    changed = {path for path in runs if path.stat().st_mtime_ns != before[path]}
    assert changed == {target}  # one process measured both batches of that configuration
    copy_table, copy_figure, hourglass_table = built
    assert copy_table.stat().st_mtime_ns > before[copy_table]
    assert copy_figure.stat().st_mtime_ns > before[copy_figure]
    assert hourglass_table.stat().st_mtime_ns == before[hourglass_table]  # other runs only


FRAMEWORKS = ["tensorflow", "torch", "theano", "pytensor", "numba"]


def test_paper_figures_rebuild_from_shipped_results_without_any_benchmark(tmp_path):
    """`make paper`'s command on a copy of results/paper (and of the GPU runs in it): only
    table, summary and figure rules run, no framework can even be imported, and the README's result blocks (the GPU's too) are what they say."""
    shutil.copytree(REPO / "results/paper", tmp_path / "results/paper",
                    ignore=shutil.ignore_patterns("tables", "figures", "config_used.yaml",
                                                  "report.html", "traces"))
    poison = tmp_path / "poison"
    poison.mkdir()
    for name in FRAMEWORKS:
        (poison / f"{name}.py").write_text(f"raise ImportError('{name} imported')\n")
    runs = list((tmp_path / "results/paper/runs").rglob("*.json"))
    mtimes = {p: p.stat().st_mtime_ns for p in runs}
    rules = PAPER_RULES
    import os
    import subprocess

    env = {**os.environ, "PYTHONPATH": str(poison)}
    # the CPU reference, the GPU run and its second session, glibc's store path (and on the
    # node), the layout's kinds of process (three times), the reference's misses measured again,
    # PyTorch's copy kernel (twice, and twice on an Intel Xeon), numpy's copy into aligned
    # memory (four times)
    copies_alone = ("results/paper/memcpy_nt", "results/paper/memcpy_nt/node",
                    "results/paper/layout", "results/paper/layout/second",
                    "results/paper/layout/mapped",
                    "results/paper/fault_in_copy", "results/paper/torch_copy",
                    "results/paper/torch_copy/second", "results/paper/torch_copy/xeon",
                    "results/paper/torch_copy/xeon/second",
                    "results/paper/aligned", "results/paper/aligned/second",
                    "results/paper/aligned/chunked", "results/paper/aligned/chunked_second")
    # and a fault inside a copy on each store path, inside a `rep movsb` copy or just before
    # it, inside a non-temporal copy or just before it (each twice, and twice on an Intel
    # Xeon), just before each copy or all before them (twice, on the Xeon): the fault probe
    # alone; and copies into targets written in turn (twice, on the Xeon)
    benchmarks_alone = ("results/paper/store_path_faults", "results/paper/store_path_faults/second",
                        "results/paper/erms_split", "results/paper/erms_split/second",
                        "results/paper/erms_split/xeon", "results/paper/erms_split/xeon/second",
                        "results/paper/nt_split", "results/paper/nt_split/second",
                        "results/paper/nt_split/xeon", "results/paper/nt_split/xeon/second",
                        "results/paper/zeroed_lines", "results/paper/zeroed_lines/second",
                        "results/paper/rotating_copies", "results/paper/rotating_copies/second")
    # and glibc's memcpy as `rep movsb` (twice, and twice on an Intel Xeon) and each copy's
    # faults inside its own store path (twice, on the Xeon): the copy step beside the probe
    # as a benchmark
    copies_and_benchmarks = ("results/paper/memcpy_erms", "results/paper/memcpy_erms/second",
                             "results/paper/memcpy_erms/xeon",
                             "results/paper/memcpy_erms/xeon/second",
                             "results/paper/own_store_path", "results/paper/own_store_path/second")
    def rebuild(result_set):
        # --nolock: two sets at a time in one directory, their outputs disjoint
        return subprocess.run(
            [str(SNAKEMAKE), "-s", str(REPO / "Snakefile"), "--directory", str(tmp_path),
             "--configfile", str(tmp_path / result_set / "config.yaml"), "--cores", "1",
             "--nolock", "--allowed-rules", *rules],
            capture_output=True, text=True, env=env, cwd=tmp_path)

    result_sets = ("results/paper", "results/paper/gpu", "results/paper/gpu/second",
                   *copies_alone, *benchmarks_alone, *copies_and_benchmarks)
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        rebuilt = dict(zip(result_sets, pool.map(rebuild, result_sets)))
    for result_set, done in rebuilt.items():
        assert done.returncode == 0, result_set + done.stdout[-3000:] + done.stderr[-3000:]
        log = done.stdout + done.stderr
        ran = set(re.findall(r"rule (\w+):", log))
        assert ran and ran <= set(rules), ran
        cpu_copies = result_set not in ("results/paper/gpu", "results/paper/gpu/second",
                                        "results/paper/memcpy_nt/node")  # and a probe
        model = ["copy_model"] if cpu_copies else []
        own = list(load_yaml(tmp_path / result_set / "config.yaml").get("benchmarks", {}))
        copies = [] if result_set in benchmarks_alone else ["copy_step", *model]
        hourglass = ([] if own or result_set in copies_alone else
                     ["hourglass_ladder", "hourglass_ops", "hourglass_why", "hourglass_gap"])
        for figure in [*copies, *hourglass, *own]:
            assert (tmp_path / result_set / f"figures/{figure}.png").stat().st_size > 20_000
    assert all(p.stat().st_mtime_ns == t for p, t in mtimes.items())
    # the two GPU sessions' comparison is what their rebuilt tables give
    gpu = tmp_path / "results/paper/gpu"
    compared = subprocess.run([str(SNAKEMAKE.parent / "python"), str(REPO / "scripts/compare.py"),
                               str(gpu), str(gpu / "second"), "--out", str(tmp_path / "aa")],
                              capture_output=True, text=True)
    assert compared.returncode == 0, compared.stderr
    for name in ("comparison.csv", "verdicts.csv"):
        assert (tmp_path / "aa" / name).read_text() == (gpu / "aa" / name).read_text(), name
    # the README's result blocks are what these rebuilt tables say
    readme = subprocess.run([str(SNAKEMAKE.parent / "python"), str(REPO / "scripts/readme_results.py"),
                             "--check", "--set", str(tmp_path / "results/paper")],
                            capture_output=True, text=True)
    assert readme.returncode == 0, readme.stderr


@pytest.mark.skipif(bool(__import__("knobs.machine").machine.gpus()),
                    reason="checks the machine without a GPU")
def test_gpu_jobs_on_a_machine_without_a_gpu_fail_before_any_job(tmp_path):
    """The plan dry-runs anywhere; a real run stops before its first job, naming the fix."""
    config = load_yaml(TINY)
    del config["hourglass"]
    config["copy"].update(frameworks=["numpy", "torch"], devices=["cpu", "gpu"],
                          limit={"frameworks": ["copyto", "memcpy_pinned"],
                                 "environments": ["glibc"]})
    configfile = write_config(tmp_path, config)
    dry_run(configfile, tmp_path)
    done = snakemake(tmp_path, "--cores", "1", configfile=configfile, check=False)
    assert done.returncode != 0
    message = done.stdout + done.stderr
    assert "need a GPU" in message and "nvidia-smi found no GPU" in message
    assert "scripts/gpu_paper.sh" in message
    assert not (tmp_path / "results").exists()
