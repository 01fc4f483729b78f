"""Where each output's memory comes from: glibc's mmap threshold moved by the cases before,
PyTorch's aligned requests, and what it asks glibc for between its outputs.

Each block's function takes its result set's Tables (knobs/blocks.py) and returns its text;
BLOCKS names the set each block is written from."""

import functools

import numpy as np
import pandas as pd

from knobs import figures
from knobs.blocks import against, tables_at
from studies.shared import copy_bytes, copy_processes, kinds_text


SOURCES = {"mapped": "a fresh mapping", "grown": "glibc's heap grown", "heap": "glibc's heap"}


def served_sources(served):
    """'glibc's heap grown and glibc's heap': the sources in `served` texts
    (`served_from`, `served_in_warmup`: 'grown:1176 heap:0 ...'), each once."""
    sources = sorted({call.split(":")[0] for text in served for call in text.split()})
    return " and ".join(SOURCES[k] for k in sources)


def process_course(faults, bytes_, served):
    """How one process's calls at one batch went: 'every' (every timed call faulted),
    'none', 'switched' (its first calls faulted, the rest did not), 'late' (its first call did
    not fault, some later ones did) or 'mixed' (the first did, and some after a call that did
    not); the number of faulting calls; and where glibc found the untimed calls' outputs after
    them (`served`: `served_from`). A call faults where it pays at least one fault per 4 MiB
    of its output, and at least two (a stray fault is not a fresh output)."""
    faulted = [f >= max(2, bytes_ / (4 << 20)) for f in faults]
    count = sum(faulted)
    course = ("every" if all(faulted) else "none" if not count
              else "switched" if all(faulted[:count]) else "mixed" if faulted[0] else "late")
    return course, count, served_sources([served])


@functools.lru_cache(maxsize=None)  # several blocks read each set's courses
def process_courses(t):
    """One row per process and case of the copy step on the CPU (framework, environment,
    batch, rep): its median faults and time, where its outputs came from (`warmed`, `served`),
    its `position` among the cases, and how its timed calls went (process_course: `course`,
    `faulting`, `source`); with the number of timed calls per case."""
    cpu = t.copy[t.copy["device"] == "cpu"].sort_values("sample")
    cpu = cpu.assign(**{column: "" for column in ("served_from", "served_in_warmup")
                        if column not in cpu})  # sets measured before they were recorded
    # runs measured before it was recorded: one bool per float32, the whole batch
    check = cpu["check_temporary_bytes"] if "check_temporary_bytes" in cpu else np.nan
    cpu = cpu.assign(check_temporary_bytes=check).fillna({"check_temporary_bytes":
                                                          cpu["bytes"] // 4})
    rows = cpu.groupby(["framework", "environment", "batch", "rep"])
    per_process = rows.agg(served=("served_from", "first"), warmed=("served_in_warmup", "first"),
                           bytes=("bytes", "first"), check=("check_temporary_bytes", "first"),
                           faults=("minor_faults", "median"),
                           seconds=("seconds", "median"), position=("position", "first"))
    per_process[["course", "faulting", "source"]] = [
        process_course(list(group["minor_faults"]), *per_process.loc[key, ["bytes", "served"]])
        for key, group in rows]
    return per_process, rows.size().max()


# the courses whose faulting calls are not all at the start, as the tables name them
UNEVEN = {"mixed": "from the first, not in a row", "late": "not the first"}


# how the configurations whose processes all took one course are summed up
ALIKE = {"every": "every call faulted", "none": "no call faulted",
         "switched": "the first calls faulted, then not",
         **{course: f"some calls faulted, {how}" for course, how in UNEVEN.items()}}


def alike_text(alike):
    """'12 every call faulted, mapped after; 3 no call faulted, heap after': how many
    configurations and batches took each (course, source) in all their processes."""
    counts = pd.Series(alike, dtype=object).value_counts()
    return "; ".join(f"{n} {ALIKE[course]}, {source} after"
                     for (course, source), n in counts.items())


def calls_of(span):
    """'1 call', '2 to 4 calls' (span: figures.span)."""
    return f"{span} call{'s' * (span != '1')}"


def layout_mapped(t):
    """How the calls of each process went where its processes differ (process_course): those
    whose every call faulted, those that faulted in their first calls and then stopped, those
    that never faulted; for the first two, the batches each ran before."""
    if "served_in_warmup" not in t.copy:
        return "Not measured in this result set."
    per_process, calls = process_courses(t)
    positions = per_process["position"]

    def before(key):  # the batches this process ran before this one
        earlier = positions.xs(key[:2] + (key[3],), level=[0, 1, 3])
        return ", ".join(str(b) for b, at in earlier.sort_index().items()
                         if at < positions[key]) or "first"

    def cell(group, course):
        chosen = group[group["course"] == course]
        if chosen.empty:
            return "-"
        text = f"{len(chosen)}: "
        if course == "none":
            return text + kinds_text(chosen)
        if course == "every":
            text += kinds_text(chosen)
        else:
            span = figures.span(chosen["faulting"].astype(int))
            text += (f"the first {span} of {calls} calls" if course == "switched"
                     else f"{calls_of(span)}, {UNEVEN[course]}")
        return (text + f"; {served_sources(chosen['warmed'])} in the warm-up, "
                f"{' / '.join(chosen['source'].unique())} after; ran before it: "
                + "; ".join(map(before, chosen.index)))

    lines = ["| copy | batch (MB) | every timed call faulted | some faulted: the first calls, "
             "then not (else as named) | no call faulted |", "|---|---|---|---|---|"]
    sizes, alike = copy_bytes(t), []
    for (framework, environment, batch), group in per_process.groupby(level=[0, 1, 2]):
        if group["course"].nunique() == 1 and group["source"].nunique() == 1:
            alike.append((group["course"].iloc[0], group["source"].iloc[0]))
            continue
        cells = [cell(group, "every"), cell(group, "switched") + "".join(
            f"<br>{course} " + cell(group, course) for course in UNEVEN
            if (group["course"] == course).any()), cell(group, "none")]
        lines.append(f"| {framework} {environment} | {batch} ({sizes[batch] / 1e6:.3g}) | "
                     + " | ".join(cells) + " |")
    return ("\n".join(lines) + f"\n\n{figures.span(per_process.groupby(level=[0, 1, 2]).size())}"
            " processes per configuration. In each cell: how many processes; their faults per "
            "call x processes (median ms per call), or how many of their timed calls faulted; "
            "where glibc found the outputs of the warm-up calls after the first and of four "
            "untimed calls after the timed ones (`after`; glibc's heap: or another allocator, "
            "or a framework's pool); the batches each process ran before this one. In the "
            f"other {len(alike)} configurations and batches every process alike: "
            + alike_text(alike) + ".")


def course_cell(processes, calls):
    """'every call 3 (1,178 faults); first 4 to 7 of 20 calls 5; none 2': how these processes'
    timed calls went (process_courses), each course with how many processes took it."""
    parts = []
    for course in ("every", "switched", *UNEVEN, "none"):
        group = processes[processes["course"] == course]
        if group.empty:
            continue
        span = figures.span(group["faulting"].astype(int))
        faults = ", ".join(f"{f:,.0f}" for f in sorted(group["faults"].unique()))
        text = {"every": f"every call {{n}} ({faults} faults)",
                "switched": f"first {span} of {calls} calls {{n}}", "none": "none {n}",
                **{uneven: f"{calls_of(span)}, {how}, {{n}}" for uneven, how in UNEVEN.items()}}
        parts.append(text[course].format(n=len(group)))
    return "; ".join(parts)


# numpy's copy into memory asked for PyTorch's way, and the PyTorch runs it stands for
ALIGNED_AS = {("aligned", "glibc"): ("torch", "glibc"),
              ("aligned_thp", "glibc"): ("torch", "torch_thp")}


CEILING = 32 << 20  # glibc's mmap threshold never rises above this (64-bit)


THP_ALIGNMENT = 2 << 20  # what PyTorch asks under THP_MEM_ALLOC_ENABLE=1, and aligned_thp


def aligned(t):
    """numpy's copy into posix_memalign'd memory beside numpy and PyTorch: per configuration
    and batch, how the processes' timed calls went; and, below glibc's ceiling, in how many
    rounds and batches the aligned copy's process and PyTorch's both faulted (in some timed
    call; in every one) and in how many only one of them did."""
    per_process, calls = process_courses(t)
    sizes = copy_bytes(t)
    lines = ["| copy | " + " | ".join(f"{b} ({n / 1e6:.3g} MB)" for b, n in sizes.items())
             + " |", "|---" * (len(sizes) + 1) + "|"]
    for (framework, environment), group in per_process.groupby(level=[0, 1]):
        lines.append(f"| {framework} {environment} | " + " | ".join(
            course_cell(group.xs(batch, level=2), calls)
            if batch in group.index.get_level_values(2) else "-" for batch in sizes.index)
            + " |")
    cases = per_process[per_process["bytes"] < CEILING]
    faulted, every = cases["course"] != "none", cases["course"] == "every"

    def both_and_one(kind, mine, theirs):  # rounds and batches below the ceiling
        mine, theirs = kind.xs(mine, level=[0, 1]), kind.xs(theirs, level=[0, 1])
        mine, theirs = mine.align(theirs, join="inner")  # the rounds and batches both ran
        return (f"in both {(mine & theirs).sum()}, in one only {(mine ^ theirs).sum()} "
                f"(of {len(mine)})")

    pairs = [f"{mine[0]} under {mine[1]} and {theirs[0]} under {theirs[1]}: a faulting call "
             f"{both_and_one(faulted, mine, theirs)}; every call faulting "
             f"{both_and_one(every, mine, theirs)}" for mine, theirs in ALIGNED_AS.items()]

    def faults(rows):
        return f"{rows['minor_faults'].median():,.0f}"

    above = []  # every output a fresh mapping: the same memcpy, the same faults
    for batch in sizes[sizes >= CEILING].index:
        (mine, rows), (numpys, numpy_rows), (torchs, torch_rows) = (
            copy_processes(t, f, "glibc", batch) for f in ("aligned", "numpy", "torch"))
        above.append(f"at {batch} ({sizes[batch] / 1e6:.3g} MB) the aligned copy ("
                     f"{faults(rows)} faults per call) against numpy's ({faults(numpy_rows)}: "
                     f"numpy asks for huge pages) {against(mine, numpys)}, and PyTorch's ("
                     f"{faults(torch_rows)}) against the aligned copy {against(torchs, mine)}")
    grown = cases["warmed"].str.contains("grown:", na=False).groupby(level=[0, 1])
    grown = "; ".join(f"{f} {e} {n} of {total}" for (f, e), n, total in
                      zip(grown.sum().index, grown.sum(), grown.size()))
    return ("\n".join(lines) + f"\n\n{figures.span(per_process.groupby(level=[0, 1, 2]).size())}"
            f" processes per configuration, in rounds (the same case order in each round's "
            f"processes). Each cell: how the processes' {calls} timed calls went (every call "
            "faulted, with its faults per call; the first calls faulted, then none; some calls "
            f"faulted, not all at the start: {', or '.join(UNEVEN.values())}; none did: a call "
            "faults where it pays at least one fault per 4 MiB of its output, and at least two) "
            "and how many processes did so. Below glibc's 32 MiB ceiling, numpy's "
            f"process-cases with a faulting call: {faulted.xs('numpy', level=0).sum()} of "
            f"{len(faulted.xs('numpy', level=0))}. Rounds and batches below the ceiling where "
            "the aligned copy's process and PyTorch's faulted: " + "; ".join(pairs) + ". "
            "Process-cases below the ceiling whose warm-up calls found an output in glibc's heap "
            "grown: " + grown + ". Above the ceiling, under glibc, paired by round: "
            + "; ".join(above) + ".")


def maps_afresh(nbytes, freed, alignment=THP_ALIGNMENT):
    """Whether glibc maps every output of `nbytes` asked with `alignment` afresh, in a process
    whose earlier cases freed blocks of `freed` bytes (each its input and its copy check's
    largest temporary). glibc serves a request above its mmap threshold with a mapping and
    raises the threshold to the size of each mapping it frees (up to its ceiling). An aligned
    request asks for the alignment on top; an output's own mapping, freed, raises the
    threshold only to the block without its padding, short of the next request: once mapped
    afresh, always."""
    return max((size for size in freed if size <= CEILING), default=0) < nbytes + alignment


def asks_thp_alignment(t, framework, environment):
    spec = t.config["environments"].get(environment.split(".")[0], {})
    return framework == "aligned_thp" or (
        framework == "torch" and str(spec.get("env", {}).get("THP_MEM_ALLOC_ENABLE")) == "1")


# The shipped sets whose processes' case orders and per-call faults test maps_afresh
THRESHOLD_SETS = ("", "layout", "layout/second", "layout/mapped", "aligned", "aligned/second",
                  "aligned/chunked", "aligned/chunked_second")


def mmap_threshold(t):
    """maps_afresh against what each process did, for every configuration asking 2 MiB
    alignment below glibc's ceiling in the shipped sets: the processes and cases whose every
    timed call faulted (a fresh mapping each), measured and predicted."""
    lines = ["| result set | copy | process-cases | every call faulted | predicted | "
             "agree | agree without the check |", "|---|---|---|---|---|---|---|"]
    for folder in THRESHOLD_SETS:
        tables = tables_at(t.root / folder) if folder else t
        per_process = process_courses(tables)[0].reset_index()
        for (framework, environment), group in per_process.groupby(["framework",
                                                                    "environment"]):
            if not asks_thp_alignment(tables, framework, environment):
                continue
            cases = group[group["bytes"] + THP_ALIGNMENT < CEILING]
            earlier = [group[(group["rep"] == row.rep) & (group["position"] < row.position)]
                       for row in cases.itertuples()]
            predicted, without = ([maps_afresh(nbytes, freed(before))
                                   for nbytes, before in zip(cases["bytes"], earlier)]
                                  for freed in (lambda b: [*b["bytes"], *b["check"]],
                                                lambda b: b["bytes"]))
            measured = cases["course"] == "every"
            lines.append(f"| {folder or 'the reference run'} | {framework} {environment} | "
                         f"{len(cases)} | {measured.sum()} | {sum(predicted)} | "
                         f"{(measured == predicted).sum()} | {(measured == without).sum()} |")
    return ("\n".join(lines) + "\n\nA process-case: one process at one batch whose output and "
            "its 2 MiB of alignment stay below glibc's 32 MiB ceiling (above it every call maps "
            "afresh in every process). Predicted: no earlier case of the process freed a "
            "mapping at least as large as this case's request (its input, or its copy check's "
            "largest temporary: a quarter of it where the check compared the whole batch at "
            "once, 16 KiB in sets with `check_temporary_bytes`, whose check compares in "
            "chunks); the last column leaves the check out.")


def allocations(t):
    """What PyTorch asks glibc for between its outputs, against the aligned copy and numpy
    (studies/output_memory/allocations.py's tables in results/paper/allocations and its second/): per
    framework and batch, in each run, the heap blocks the outputs took, the processes whose
    timed calls took a new one, what every gap between an output's free and the next output's
    request asked for, how often a request landed right after the freed output and how often
    the next output went elsewhere."""
    runs = [pd.read_csv(folder / "allocations.csv", dtype={"asked_in_every_gap": str})
            for folder in (t.root / "allocations", t.root / "allocations" / "second")]

    def cells(rows):
        every = set.intersection(*(set(str(v).split()) for v in
                                   rows["asked_in_every_gap"].fillna("")))
        gaps = rows["gaps"].sum()
        return [figures.span(rows["blocks"]),
                f"{(rows['timed_calls_at_new_blocks'] > 0).sum()} of {len(rows)}",
                " ".join(sorted(every, key=int)) or "nothing",
                f"{rows['landed_right_after_freed_output'].sum()} of {gaps} "
                f"({rows['landed_after_and_next_elsewhere'].sum()})",
                f"{rows['next_output_elsewhere'].sum()} of {gaps}"]

    lines = ["| copy | batch (MB) | blocks the outputs took | processes whose timed calls took "
             "a new block | asked for in every gap, every process (bytes) | gaps where a "
             "request landed right after the freed output (of them, the next output elsewhere) "
             "| gaps whose next output went elsewhere |", "|---" * 7 + "|"]
    keys = ["framework", "batch"]
    for (framework, batch), rows in runs[0].groupby(keys, sort=False):
        again = runs[1].set_index(keys).loc[(framework, batch)].reset_index()
        lines.append(f"| {framework} | {batch} ({rows['bytes'].iloc[0] / 1e6:.3g}) | "
                     + " | ".join(f"{one}; {two}" for one, two in zip(cells(rows), cells(again)))
                     + " |")
    table = runs[0]
    return ("\n".join(lines) + "\n\nEach cell: the first run; the second. "
            f"{table.groupby('framework')['process'].nunique().max()} processes per copy in "
            f"each run, each running batches {', '.join(map(str, table['batch'].unique()))} in "
            f"that order with {figures.span(table['calls'])} calls per batch (the copy's check, "
            "the warm-up calls, the timed calls, the calls after them that show where glibc "
            "found the outputs), glibc's default allocator, every allocation call recorded. "
            "aligned_storage: the aligned copy with 96 bytes from malloc just before each "
            "output's posix_memalign, freed just after the output. A block: an address no "
            "earlier output of that batch had in the process (where glibc found no room in the "
            "blocks before: fresh heap, faulted in page by page, or memory an earlier batch "
            "left); a gap: from an output's free to the next output's request; right after: "
            "within 4 KiB past the freed output's end.")


BLOCKS = {
    "layout-mapped": ("layout/mapped", layout_mapped),
    "aligned": ("aligned", aligned),
    "aligned-second": ("aligned/second", aligned),
    "aligned-chunked": ("aligned/chunked", aligned),
    "aligned-chunked-second": ("aligned/chunked_second", aligned),
    "mmap-threshold": ("", mmap_threshold),
    "allocations": ("", allocations),
}
