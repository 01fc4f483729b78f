"""`make search` on the hourglass, one search per framework (each from that framework's fastest
setup of the reference run): what each knob did alone, the combination built from them, the
recipe, and the gap left between the frameworks' best.

Each block's function takes its result set's Tables (knobs/blocks.py) and returns its text;
BLOCKS names the set each block is written from."""

import pandas as pd

from knobs import stats
from knobs.blocks import interval, machine_line, ms, tables_at

SETS = {"tensorflow": "knob_search/tensorflow/search/hourglass_tensorflow",
        "torch": "knob_search/torch/search/hourglass_torch",
        "torch_second": "knob_search/torch_second/search/hourglass_torch"}
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
    for framework, folder in ((f, SETS[f]) for f in ("tensorflow", "torch")):
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
            "(two searches, so unpaired: a wider interval; their times are well above the "
            "reference run's, an open question of the study: compare ratios, not times, with "
            "the lines above).")


def second_run(t):
    """The PyTorch search run again, the same code into its own folder: each knob's verdict
    alone in both runs, and the best each found. Two sure verdicts (faster, slower, no
    effect) that differ contradict; an inconclusive one contradicts nothing."""
    paper = t.root.parents[len(SETS["torch_second"].split("/")) - 1]
    first, second = ranked(tables_at(paper / SETS["torch"])), ranked(t)
    lines = ["| knob alone | first run | second run | the two |", "|---|---|---|---|"]
    found = {"same": 0, "one inconclusive": 0, "contradict": 0}
    mine = second.set_index(["kind", "environment"])
    for _, row in first[first["kind"].isin(["alone", "launcher"])].iterrows():
        other = mine.loc[(row["kind"], row["environment"])]
        verdicts = {row["verdict"], other["verdict"]}
        kind = ("same" if len(verdicts) == 1 else "one inconclusive"
                if "inconclusive" in verdicts else "contradict")
        found[kind] += 1
        lines.append(f"| `{row['environment']}` | {interval(row)} {row['verdict']} | "
                     f"{interval(other)} {other['verdict']} | {kind} |")
    best = [table[table["kind"] == "best"] for table in (first, second)]
    named = [f"`{b.iloc[0]['environment']}` {interval(b.iloc[0])}" if len(b) else
             "nothing (no knob faster for sure)" for b in best]
    return ("\n".join(lines) + f"\n\nOf {len(lines) - 2} verdicts: "
            + ", ".join(f"{n} {kind}" for kind, n in found.items())
            + f". Best found: {named[0]} in the first run, {named[1]} in the second (against "
            f"glibc). Second run measured on {machine_line(t)}.")


BLOCKS = {
    "search-tensorflow": (SETS["tensorflow"], search_table),
    "search-torch": (SETS["torch"], search_table),
    "recipe-tensorflow": (SETS["tensorflow"], recipe),
    "recipe-torch": (SETS["torch"], recipe),
    "answer-search": (SETS["torch"], answer),
    "second-run-torch": (SETS["torch_second"], second_run),
}
