"""The tracked tree stays small enough to travel (a GPU node takes a working tree of at most
64 MiB; every clone downloads it): what `make paper` rebuilds is not tracked, what cannot be
rebuilt is kept, compressed."""

import collections
import re
import subprocess

from conftest import REPO

LIMIT_MIB = 32


def tracked():
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True,
                            check=True).stdout.decode().split("\0")
    return [REPO / name for name in listed if name and (REPO / name).exists()]


def inline_figures():
    """{image a README shows inline: the README}, as paths from the repository."""
    found = {}
    for readme in [REPO / "README.md", *sorted(REPO.glob("studies/*/README.md"))]:
        for target in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", readme.read_text()):
            found[(readme.parent / target).resolve()] = readme.relative_to(REPO)
    return found


def test_the_tracked_tree_is_at_most_32_mib_and_a_breach_names_the_folders_that_hold_it():
    sizes = collections.Counter()
    for path in tracked():
        parts = path.relative_to(REPO).parts
        sizes["/".join(parts[:3] if parts[0] == "results" else parts[:1])] += path.stat().st_size
    total = sum(sizes.values())
    largest = ", ".join(f"{folder} {size / 2**20:.1f} MiB" for folder, size in sizes.most_common(5))
    assert total <= LIMIT_MIB * 2**20, (
        f"the tracked tree is {total / 2**20:.1f} MiB, over {LIMIT_MIB} MiB; largest: {largest}")


def test_every_run_file_is_compressed_and_no_rebuilt_figure_is_tracked():
    files = [p.relative_to(REPO) for p in tracked()]
    assert not [f for f in files if f.parts[0] == "results" and f.name.endswith(".json")]
    assert [f for f in files if f.name.endswith(".json.gz")]  # the shipped runs are there
    shown = set(inline_figures())
    rebuilt = [f for f in files if f.parts[0] == "results" and f.suffix in (".png", ".svg")
               and (REPO / f).resolve() not in shown]
    assert not rebuilt, f"figures that make paper draws again are tracked: {rebuilt[:5]}"


def test_every_figure_a_readme_shows_is_tracked_as_png():
    files = {p.resolve() for p in tracked()}
    missing = {str(path.relative_to(REPO)): str(readme)
               for path, readme in inline_figures().items() if path not in files}
    assert not missing, f"shown but not tracked (a fresh clone shows nothing): {missing}"
    assert all(path.suffix == ".png" for path in inline_figures())


def test_make_paper_draws_a_comparisons_figure_from_its_table_alone(tmp_path):
    """A comparison shipped without its figure (untracked) gets it from comparison.csv, also
    one made before copies were set against their size (no change_beyond_machine column)."""
    import shutil

    from paper import redraw_comparisons  # scripts/paper.py

    folder = tmp_path / "results" / "paper" / "memcpy_nt" / "aa"
    folder.mkdir(parents=True)
    shutil.copy(REPO / "results/paper/memcpy_nt/aa/comparison.csv", folder)
    assert redraw_comparisons(tmp_path) == ["results/paper/memcpy_nt/aa"]
    assert (folder / "comparison.png").stat().st_size > 10_000
    assert redraw_comparisons(tmp_path) == []  # drawn once: not again while it is newer
