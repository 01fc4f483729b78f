"""Which knobs make a benchmark faster here: the pieces of `make search` (scripts/search.py
drives them). Every knob is tried alone against the baseline; the ones that made it faster are
combined greedily, best first, each step measured side by side with the best so far and kept
only where it is faster again (a ladder built from data); the launchers' own settings are
measured beside. At most one environment of each `group` (allocator, openmp, ...) goes into a
combination: two allocators cannot both serve malloc.
"""

import os
import re
import subprocess

from knobs import kinds
from knobs.kinds.preload import portable

JOIN = "-"  # a combination's name: its parts' names, in the order they were added


def candidates(environments, section, cores):
    """{name: spec} of what the search tries on `section`: the environments its `search.knobs`
    names, else every one with a `group`; and each thread count this machine allows that the
    benchmark does not already run with (1, half the cores, all of them)."""
    wanted = section.get("search", {}).get("knobs")
    found = {name: spec for name, spec in environments.items()
             if (name in wanted if wanted else "group" in spec)}
    for count in sorted({1, max(1, cores // 2), cores} - {section.get("threads", 1)}):
        if not wanted or f"threads_{count}" in wanted:
            found[f"threads_{count}"] = {"threads": count, "group": "threads"}
    if cores > 1 and (not wanted or "interop_1" in wanted):  # both frameworks' default: cores
        found["interop_1"] = {"interop_threads": 1, "group": "interop"}
    return found


def combined(first, second):
    """One environment with the knobs of both, each kind combining its own (lists joined,
    variables merged, a count or a name: the second's)."""
    spec = {kind.key: kind.combine(first.get(kind.key), second.get(kind.key))
            for kind in kinds.load()}
    spec["groups"] = sorted({*groups(first), *groups(second)})
    return {key: value for key, value in spec.items() if value not in (None, {}, [])}


def groups(spec):
    return set(spec.get("groups", [])) | ({spec["group"]} if "group" in spec else set())


def clash(first, second):
    """The groups two environments share (they cannot be combined), empty if none."""
    return sorted(groups(first) & groups(second))


def ladder(helped, specs, try_step, affordable):
    """The combination built from data: `helped` (the knobs faster alone, best first) added
    one by one to the best so far, each kept only where `try_step(best, combination)` says
    `faster`; a knob of a group already in it is not tried; `affordable()` false stops it.
    (best, the path: one row per knob after the first, budget left over)."""
    best = helped[0] if helped else None
    path = []
    for name in helped[1:]:
        combination = f"{best}{JOIN}{name}"
        shared = clash(specs[best], specs[name])
        if shared:
            path.append({"environment": combination, "compared_with": best,
                         "verdict": "not tried",
                         "reason": f"same group as a knob already in it ({', '.join(shared)})"})
            continue
        if not affordable():
            return best, path, False
        specs[combination] = combined(specs[best], specs[name])
        row = try_step(best, combination)
        path.append({"environment": combination, "compared_with": best, **row})
        if row["verdict"] == "faster":
            best = combination
    return best, path, True


def run_cpu_environment(python, venv):
    """What PyTorch's launcher (`python -m torch.backends.xeon.run_cpu`) sets on this machine,
    read by having it start `env`: ({name: spec}, what it does that no environment can, such
    as pinning the process with taskset or numactl)."""
    done = subprocess.run(
        [python, "-m", "torch.backends.xeon.run_cpu", "--no-python", "env"],
        capture_output=True, text=True, timeout=120,
        env={**os.environ, "VIRTUAL_ENV": os.path.abspath(venv)})
    if done.returncode != 0:
        return {}, [f"run_cpu failed here: {done.stderr.strip().splitlines()[-1:]}"]
    seen = dict(line.split("=", 1) for line in done.stdout.splitlines() if "=" in line)
    spec = {"env": {k: v for k, v in seen.items()
                    if k.startswith(("KMP_", "MALLOC_CONF")) and os.environ.get(k) != v}}
    if seen.get("LD_PRELOAD") and seen.get("LD_PRELOAD") != os.environ.get("LD_PRELOAD"):
        spec["preload"] = seen["LD_PRELOAD"].split(":")
    if seen.get("OMP_NUM_THREADS"):
        spec["threads"] = int(seen["OMP_NUM_THREADS"])
    wrapper = re.search(r"INFO - ((?:numactl|taskset) [^\n]*?) env$", done.stderr, re.M)
    notes = []
    if wrapper:
        cpus = re.search(r"(?:-c|-C|--physcpubind=?) ?([0-9,-]+)", wrapper.group(1))
        allowed = _cpu_list(cpus.group(1)) if cpus else None
        if allowed != set(os.sched_getaffinity(0)):
            notes.append(f"run_cpu also starts the process under `{wrapper.group(1)}`, which "
                         "this environment does not reproduce")
        else:
            notes.append(f"run_cpu's `{wrapper.group(1)}` allows every CPU here: nothing to add")
    return {"run_cpu": {key: value for key, value in spec.items() if value}}, notes


def _cpu_list(text):
    cpus = set()
    for part in text.split(","):
        low, _, high = part.partition("-")
        cpus |= set(range(int(low), int(high or low) + 1))
    return cpus


def configured(spec, environment_name):
    """`spec` with its preloads named as a config that works elsewhere names them."""
    if not spec.get("preload"):
        return spec
    return {**spec, "preload": [portable(p, environment_name).config for p in spec["preload"]]}


def recipe(spec, runtime, command="python train.py"):
    """The shell line that sets `spec`'s knobs for `command`, what goes in the code, and what
    each preload needs: each kind's own words, the variables' last."""
    parts = [kind.recipe(spec.get(kind.key), runtime)
             for kind in sorted(kinds.load(), key=lambda kind: kind.recipe_late)]
    words, code, notes = ([item for part in parts for item in part[index]] for index in range(3))
    return " ".join(words + [command]), code, notes


def caption(ranked_csv, recipe_txt):
    """The report's text beside a search's figure: the recipe as written, then the ranked
    table (reStructuredText)."""
    import pandas as pd

    recipe = open(recipe_txt).read().rstrip().splitlines()
    table = pd.read_csv(ranked_csv)
    reasons = "reason" in table and table["reason"].notna().any()  # a knob not measured
    columns = ["kind", "environment", "compared_with", "ratio", "interval", "verdict",
               *(["reason"] if reasons else [])]
    rows = []
    for r in table.itertuples():
        measured = not pd.isna(getattr(r, "ratio", float("nan")))
        row = [r.kind, r.environment, r.compared_with, f"{r.ratio:.2f}" if measured else "",
               f"[{r.ratio_low:.2f}, {r.ratio_high:.2f}]" if measured else "", r.verdict]
        rows.append(row + ([] if not reasons else [""] if pd.isna(r.reason) else [r.reason]))
    lines = ["The recipe (``recipe.txt``)::", "", *[f"    {line}" for line in recipe], "",
             "The ranked table (``search.csv``):", "", ".. list-table::", "   :header-rows: 1", ""]
    for row in [columns, *rows]:  # '..' (a comment) keeps an empty cell a cell
        cells = [re.sub(r"([\\`*_|])", r"\\\1", str(cell)) or ".." for cell in row]
        lines += [f"   * - {cells[0]}", *[f"     - {cell}" for cell in cells[1:]]]
    return "\n".join(lines)
