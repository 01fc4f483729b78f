"""Generated blocks: the numbers in the README and in each study's findings (studies/<study>/
README.md) are written from a shipped result set's tables, never typed, and checked.

A block is the text between `<!-- BEGIN generated: NAME -->` and `<!-- END generated: NAME -->`.
Each study's `blocks.py` defines `BLOCKS = {name: (result set, function)}`: the set a folder
under results/paper ("" for the reference run itself), the function one that takes that set's
Tables and returns the block's text. A block's name is unique over every study, and a
document may show any study's block (the README shows the answers of several).

Also here: what several studies' blocks use (a result set's tables, how a number is written,
what `make compare` found between two runs). pandas only: no framework is imported.
"""

import functools
import importlib
import re
import sys
from pathlib import Path

import pandas as pd

from knobs import figures, stats

REPO = Path(__file__).resolve().parents[2]
PAPER = REPO / "results" / "paper"
BLOCK = re.compile(r"<!-- BEGIN generated: ([\w-]+) -->.*?<!-- END generated: \1 -->", re.S)


class StaleError(RuntimeError):
    """A document's blocks are not what the tables say."""


# ---- Documents and their blocks ---------------------------------------------------------------
def studies():
    """The studies, by name (each a folder under studies/ with a blocks.py)."""
    return sorted(path.parent.name for path in (REPO / "studies").glob("*/blocks.py"))


def documents(study=None):
    """The documents with generated blocks: the README and each study's findings."""
    if study not in (None, "all"):
        return [REPO / "studies" / study / "README.md"]
    return [REPO / "README.md", *(REPO / "studies" / name / "README.md" for name in studies())]


def studies_table(t):
    """The studies, one row each, from their study.yaml (the README's list)."""
    import yaml

    lines = ["| study | question | config | result sets | size |", "|---|---|---|---|---|"]
    for name in studies():
        study = yaml.safe_load((REPO / "studies" / name / "study.yaml").read_text())
        configs = ", ".join(f"`{c}`" for c in study["configs"][:2])
        more = len(study["configs"]) - 2
        lines.append(f"| [{name}](studies/{name}/README.md) | {study['question']} | {configs}"
                     + (f" and {more} more" if more > 0 else "")
                     + f" | {len(study['sets'])} (`{study['sets'][0]}`"
                     + (", ..." if len(study["sets"]) > 1 else "") + f") | {study['size']} |")
    return "\n".join(lines)


@functools.lru_cache(maxsize=None)
def every_block():
    """{block name: (result set, function)} over every study, and the list of studies."""
    if str(REPO) not in sys.path:
        sys.path.append(str(REPO))
    found = {"studies": ("", studies_table)}
    for name in studies():
        for block, entry in importlib.import_module(f"studies.{name}.blocks").BLOCKS.items():
            if block in found:
                raise ValueError(f"block {block} is defined by two studies")
            found[block] = entry
    return found


def render(text, root=PAPER):
    """`text` with every block written anew from the tables under `root`."""
    blocks = every_block()

    def replace(match):
        name = match.group(1)
        if name not in blocks:
            raise KeyError(f"no study defines block {name} (studies/<study>/blocks.py)")
        folder, write = blocks[name]
        return (f"<!-- BEGIN generated: {name} -->\n{write(tables_at(root / folder)).strip()}\n"
                f"<!-- END generated: {name} -->")

    return BLOCK.sub(replace, text)


def stale(text, root=PAPER):
    """The names of the blocks of `text` that the tables would write otherwise."""
    fresh = dict((m.group(1), m.group(0)) for m in BLOCK.finditer(render(text, root)))
    return [m.group(1) for m in BLOCK.finditer(text) if fresh[m.group(1)] != m.group(0)]


# ---- A result set's tables ----------------------------------------------------------------------
class Tables:
    """A result set as `make paper` rebuilds it: its config, summary and verdicts, and each
    experiment's tidy table by name (`t.copy`, `t.hourglass_ops`; None where it has none)."""

    def __init__(self, root):
        import yaml

        self.root = Path(root)
        if not (self.root / "tables" / "summary.csv").exists():
            raise FileNotFoundError(f"{self.root}/tables: no summary: run make paper")
        self.config = yaml.safe_load((self.root / "config_used.yaml").read_text())
        self.summary, self.verdicts = self.table("summary"), self.table("verdicts")
        # the machine: the first row of the first experiment's table, in the config's order
        names = [*self.config, *self.config.get("benchmarks", {})]
        measured = [table for name in names if (table := self.table(name)) is not None]
        if not measured:
            raise FileNotFoundError(f"{self.root}: no experiment's table: run make paper")
        self.machine = measured[0].iloc[0]

    @functools.lru_cache(maxsize=None)
    def table(self, name):
        path = self.root / "tables" / f"{name}.csv"
        return pd.read_csv(path, low_memory=False) if path.exists() else None

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return self.table(name)

    @property
    def benchmarks(self):
        """The config's sections under `benchmarks:` that have a table."""
        return {name: table for name in self.config.get("benchmarks", {})
                if (table := self.table(name)) is not None}


@functools.lru_cache(maxsize=None)
def tables_at(root):
    """One result set's Tables, read once however many blocks ask for it."""
    return Tables(root)


# ---- How numbers are written ----------------------------------------------------------------
def ms(seconds):
    value = 1e3 * seconds
    return f"{value:.3g}" if value < 100 else f"{value:.0f}"


def interval(row, prefix="ratio"):
    return f"{row[prefix]:.2f}x [{row[prefix + '_low']:.2f}, {row[prefix + '_high']:.2f}]"


def counts(verdicts):
    """'30 no effect, 6 inconclusive': how many of each verdict, most first."""
    return ", ".join(f"{n} {v}" for v, n in verdicts.value_counts().items())


def against(mine, theirs):
    """'0.97x [0.93, 1.02]': processes against processes, paired by round."""
    ratio, low, high = stats.ratio_interval(mine, theirs)
    return interval({"ratio": ratio, "ratio_low": low, "ratio_high": high})


def machine_line(t):
    m = t.machine
    processes = figures.span(t.summary["processes"])
    return (f"{m['cpu']} ({m['machine_kind'].split(', ', 1)[1] if 'machine_kind' in m else ''}), "
            f"glibc {m['glibc'].split()[-1]}, kernel {m['kernel']}, THP `{m['thp_enabled']}`; "
            f"{processes} processes per configuration, run in rounds")


def machine_kind_short(machine):
    """'family 6 model 207 stepping 2' out of the machine kind (CPU, its model, flags, GPU)."""
    return machine["machine_kind"].split(", ")[1]


def first_of(table, column):
    values = table[column].dropna() if column in table else []
    return values.iloc[0] if len(values) else None


# ---- Two runs compared ----------------------------------------------------------------------
def listed(rows, column):
    """ (a: 1.2x, slower; ...) of up to ten changed configurations."""
    found = [f"{r['label']}: {r['ratio']:.2f}x, {r[column]}" for _, r in rows.iterrows()]
    return (" (" + "; ".join(found[:10])
            + (f"; and {len(found) - 10} more" if len(found) > 10 else "") + ")")


def comparison_text(folder, what):
    """What `make compare` found between two runs of the same code (in `folder`)."""
    from compare import faults_moved  # scripts/compare.py, which wrote the comparison

    if not (folder / "comparison.csv").exists():
        return "Not measured in this result set."
    comparison = pd.read_csv(folder / "comparison.csv")
    changed = comparison[comparison["change"].isin(["faster", "slower"])]
    moved = (comparison["ratio"] - 1).abs()
    unsettled = (comparison["change"] == "inconclusive").sum()
    text = (f"{what}, compared with `make compare`: {len(changed)} of {len(comparison)} "
            f"configurations called changed ({len(changed) / len(comparison):.1%})"
            + (f", {unsettled} inconclusive" if unsettled else "")
            + f"; the median configuration moved by {moved.median():.1%}, the most by "
            f"{moved.max():.1%}")
    if len(changed):
        text += listed(changed, "change")
    if "change_beyond_machine" in comparison:  # compared since work is set against its own
        beyond = comparison[comparison["change_beyond_machine"].isin(["faster", "slower"])]
        text += (f"; changed beyond the machine (each of {comparison['machine_ratio'].notna().sum()} "
                 "configurations set against the median move of the others doing the same work), "
                 f"{len(beyond)} of {len(comparison)} ({len(beyond) / len(comparison):.1%})"
                 + (": the same ones" if len(beyond) and list(beyond["label"]) == list(
                     changed["label"]) else listed(beyond, "change_beyond_machine")
                    if len(beyond) else ""))
    if (folder / "verdicts.csv").exists():
        verdicts = pd.read_csv(folder / "verdicts.csv")
        if "contradicts" not in verdicts:  # compared before `inconclusive` was a verdict
            return text + (f"; {verdicts['same_verdict'].sum()} of {len(verdicts)} knob verdicts "
                           "the same in both under the earlier two-way rule (`no effect "
                           "measured` for every interval not wholly outside the band; the "
                           "earlier run's intervals were not kept, so its verdicts cannot be "
                           "called again under the current rule).")
        differ = verdicts[~verdicts["same_verdict"]]
        contradicting = verdicts["contradicts"].sum()
        text += (f"; of {len(verdicts)} knob verdicts, {contradicting} "
                 + ("contradicts its counterpart" if contradicting == 1 else "contradict each other")
                 + f", {verdicts['same_verdict'].sum()} are the same in both"
                 + (" and " + counts(differ["verdict_before"] + " -> "
                                      + differ["verdict_after"]) if len(differ) else ""))
        if verdicts["contradicts"].any():
            text += " (contradicting: " + "; ".join(
                f"{r['label']}, {r['case']}: {r['verdict_before']} -> {r['verdict_after']}"
                + (faults_moved(r) if "faults_before" in r else "")
                for _, r in verdicts[verdicts["contradicts"]].iterrows()) + ")"
    return text + "."
