"""`make search` on the hourglass, one search per framework (each from that framework's fastest
setup of the reference run): what each knob did alone, the combination built from them, the
recipe, and the gap left between the frameworks' best.

Each block's function takes its result set's Tables (knobs/blocks.py) and returns its text;
BLOCKS names the set each block is written from."""

import pandas as pd

from knobs import stats
from knobs.blocks import interval, machine_line, ms, tables_at

SETS = {"tensorflow": "knob_search/tensorflow/search/hourglass_tensorflow",
        "torch": "knob_search/torch/search/hourglass_torch"}
NAMES = {"tensorflow": "TensorFlow", "torch": "PyTorch"}


def ranked(t):
    return pd.read_csv(t.root / "search.csv")


def best_of(t):
    """(the best environment, its row against the baseline; None where nothing helped)."""
    table = ranked(t)
    best = table[table["kind"] == "best"]
    return (best.iloc[0]["environment"], best.iloc[0]) if len(best) else (None, None)


def search_table(t):
    """The ranked table: each knob alone, the launcher, each step, the best."""
    lines = ["| what | environment | against | ratio [95% interval] | verdict |",
             "|---|---|---|---|---|"]
    for _, row in ranked(t).iterrows():
        ratio = interval(row) if pd.notna(row.get("ratio")) else "-"
        verdict = row["verdict"] + (f": {row['reason']}" if isinstance(row.get("reason"), str)
                                    else "")
        lines.append(f"| {row['kind']} | `{row['environment']}` | `{row['compared_with']}` "
                     f"| {ratio} | {verdict} |")
    return "\n".join(lines) + f"\n\nMeasured on {machine_line(t)}."


def recipe(t):
    text = (t.root / "recipe.txt").read_text().rstrip()
    return f"```\n{text}\n```"


def processes(t, environment):
    """{rep: train-step samples} of one environment in the search's final stage."""
    final = t.table(f"{next(iter(t.config['benchmarks']))}_final")  # the first: alone
    rows = final[(final["environment"] == environment) & (final["case"] == "train")
                 & final["seconds"].notna()]
    return {rep: group["seconds"].to_numpy() for rep, group in rows.groupby("rep")}


def answer(t):
    """The README's: each framework's best after the search, and the gap left."""
    paper = t.root.parents[len(SETS["torch"].split("/")) - 1]  # this set's results/paper
    found = {}
    for framework, folder in SETS.items():
        tables = tables_at(paper / folder)
        name, row = best_of(tables)
        baseline = ranked(tables)
        base = baseline[baseline["kind"] == "alone"]["compared_with"].iloc[0]
        found[framework] = (tables, name or base, row)
    lines = []
    for framework, (tables, name, row) in found.items():
        samples = processes(tables, name)
        median = pd.Series([s for p in samples.values() for s in p]).median()
        lines.append(f"{NAMES[framework]} {ms(median)} ms with `{name}`"
                     + (f" ({interval(row)} of its own setup under glibc)" if row is not None
                        else " (no knob made it faster for sure)"))
    tf, torch = (processes(found[f][0], found[f][1]) for f in ("tensorflow", "torch"))
    ratio, low, high = stats.ratio_interval(tf, torch, paired=False)
    return ("- **With the knobs searched** (`make search`, each knob alone, then the helpful "
            "ones combined; [the study](studies/knob_search/README.md)): " + "; ".join(lines)
            + f". TensorFlow's best is **{ratio:.2f}x [{low:.2f}, {high:.2f}]** PyTorch's best "
            "(two searches, so unpaired: a wider interval; measured on a slower day than the "
            "reference run, so compare ratios, not times, with the lines above).")


BLOCKS = {
    "search-tensorflow": (SETS["tensorflow"], search_table),
    "search-torch": (SETS["torch"], search_table),
    "recipe-tensorflow": (SETS["tensorflow"], recipe),
    "recipe-torch": (SETS["torch"], recipe),
    "answer-search": (SETS["torch"], answer),
}
