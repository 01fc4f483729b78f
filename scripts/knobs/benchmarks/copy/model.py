"""The copy step's own table columns: GB/s, the copy limit of each size measured in the same
run, and the fault model (the copy limit plus each call's page faults at what a fault costs
here, from the fault probe of the same run), and for `make compare` which copies do the same
work. pandas only: no framework is imported."""

import numpy as np
import pandas as pd

from knobs.experiments import TWIN

def copy_columns(table, settings, tables):
    """GB/s, and the copy limit per size: the fastest median among the reference copies (into
    a buffer already faulted in; a fresh copy), measured in the row's own environment where
    the limit ran in it (an environment may change the copy itself: glibc's store path), else
    in the first of the limit's environments."""
    table["batch"] = table["batch"].astype(int)
    table["gbps"] = table["bytes"] / table["seconds"] / 1e9
    limit = settings["limit"]
    reference = table[table["framework"].isin(limit["frameworks"])
                      & table["environment"].isin(limit["environments"])]
    size = ["host", "device", "input", "batch"]
    medians = (reference.groupby([*size, "framework", "environment"])
               ["seconds"].median().reset_index())
    nbytes = dict(zip(table["batch"], table["bytes"]))

    def fastest(by):
        best = medians.loc[medians.groupby(by)["seconds"].idxmin()]
        return best.assign(
            limit_gbps=lambda d: d["batch"].map(nbytes) / d["seconds"] / 1e9,
            limit_source=lambda d: d["framework"] + "/" + d["environment"])[
                [*by, "limit_gbps", "limit_source"]]

    by_environment = fastest([*size, "environment"])
    own = table[size + ["environment"]].merge(by_environment, how="left")
    baseline = table[size].merge(by_environment[by_environment["environment"]
                                                == limit["environments"][0]], how="left")
    for column in ("limit_gbps", "limit_source"):
        table[column] = own[column].fillna(baseline[column]).to_numpy()
    table = fault_model(table, tables.get("faults"))
    first = ["experiment", "framework", "environment", "device", "batch", "input", "rep",
             "sample", "seconds", "minor_faults", "bytes", "gbps", "limit_gbps"]
    table = table[first + [c for c in table.columns if c not in first]]
    return table.sort_values(["framework", "environment", "batch", "input", "rep", "sample"])


HUGE_PAGE = 2 << 20
SMALL_PAGE = 4096


def probe_kind(faults_table):
    """Each fault-probe row's kind: `4k`, `2m`, `copy4k`, `warm4k`, ... (its case less its size)."""
    return faults_table["case"].astype(str).str.split("-").str[0].rename("page")


def copies_as_the_probe(environments):
    """The environments whose copies take glibc's default store path, as the fault probe's
    copies do (no GLIBC_TUNABLES): where its cost of a fault inside a copy applies."""
    return {name for name, spec in environments.items()
            if "GLIBC_TUNABLES" not in (spec or {}).get("env", {})}


def page_kind(faults, nbytes):
    """How a copy meets its output's pages, from its minor faults per call: `warm` (none
    faulted), `4k` (about one fault per 4 KiB page) or `2m` (fewer: huge pages)."""
    return "warm" if faults < 1 else "4k" if faults * SMALL_PAGE >= nbytes / 2 else "2m"


def same_work(comparison, configs):
    """The work of each copy compared between two sets (`comparison`: one row per copy, its
    faults per call in each): its device, size, page kind and store path (the environments
    that keep glibc's share one; each other is its own), in any framework or allocator; None
    where its page kind changed between the sets (it did other work)."""
    same_store_path = set.intersection(*(copies_as_the_probe(c["environments"]) for c in configs))
    kinds = [{page_kind(f, n) if pd.notna(f) else None for f in faults} for *faults, n in
             zip(comparison["faults_before"], comparison["faults_after"], comparison["bytes"])]
    kinds = [k.pop() if len(k) == 1 else None for k in kinds]  # one kind in both sets, or none
    environment = comparison["environment"].astype(str).str.removesuffix(TWIN)
    path = environment.where(~environment.isin(same_store_path), "glibc's store path")
    return [None if kind is None else (device, nbytes, kind, store)
            for device, nbytes, kind, store in zip(comparison["device"], comparison["bytes"],
                                                   kinds, path)]


def fault_costs(faults_table):
    """Seconds per fault per host, page kind and region size (`bytes`): for "4k" and "2m" (a
    page touched), the median over the fault probe's samples of time / faults; for "copy4k" and
    "copy2m" (pages faulted in by a copy), the median copy into fresh pages less the median
    copy into pages of the same kind faulted in before (`warm4k`, `warm2m`), per fault."""
    ok = faults_table[faults_table["seconds"].notna()]
    page = probe_kind(ok)
    keys = [ok["host"], page, ok["bytes"]]
    touched = ok[page.isin(["4k", "2m"]) & (ok["minor_faults"] > 0)]
    per_fault = touched["seconds"] / touched["minor_faults"]
    costs = per_fault.groupby([k[touched.index] for k in keys]).median().rename("cost")
    medians = ok.groupby(keys)[["seconds", "minor_faults"]].median()
    kinds = set(page)
    for kind in sorted(k for k in ("copy4k", "copy2m") if {k, "warm" + k[4:]} <= kinds):
        fresh, warm = (medians.xs(k, level="page") for k in (kind, "warm" + kind[4:]))
        in_copy = (fresh["seconds"] - warm["seconds"]) / fresh["minor_faults"]
        in_copy = in_copy[np.isfinite(in_copy)]
        in_copy.index = pd.MultiIndex.from_tuples(
            [(host, kind, nbytes) for host, nbytes in in_copy.index], names=costs.index.names)
        costs = pd.concat([costs, in_copy.rename("cost")])
    return costs.reset_index()


def cost_at(costs, host, page, nbytes):
    """What a fault costs in a region of `nbytes`: the probe's cost at that size, interpolated
    between the sizes it measured (in log size), the nearest one beyond them; NaN unprobed."""
    probed = costs[(costs["host"] == host) & (costs["page"] == page)].sort_values("bytes")
    if probed.empty:
        return np.nan
    return float(np.interp(np.log(nbytes), np.log(probed["bytes"]), probed["cost"]))


def fault_model(table, faults_table):
    """The copy step's model of a call on the CPU: the copy limit for its size, plus its page
    faults at what a fault costs here in a region of that size. A call that faults at all
    faults in its whole output (a fresh mapping): `huge` of its faults are 2 MiB pages, the
    rest 4 KiB, such that they cover its bytes. Without a fault probe the model is left out.
    `predicted_in_copy_seconds`: the same with each fault at what it costs inside a copy
    (where the probe measured that)."""
    if faults_table is None or faults_table.empty:
        return table
    costs = fault_costs(faults_table)
    pages = ("4k", "2m", "copy4k", "copy2m")
    at = {(host, nbytes): [cost_at(costs, host, page, nbytes) for page in pages]
          for host, nbytes in set(zip(table["host"], table["bytes"]))}
    pairs = list(zip(table["host"], table["bytes"]))
    small_cost, huge_cost, small_in_copy, huge_in_copy = (
        pd.Series([at[p][i] for p in pairs], index=table.index) for i in range(len(pages)))
    faults = table["minor_faults"].astype(float)
    huge = ((table["bytes"] - faults * SMALL_PAGE) / (HUGE_PAGE - SMALL_PAGE)).clip(lower=0)
    huge = huge.where(faults > 0, 0).clip(upper=faults).where(huge_cost.notna(), 0)
    table["fault_cost_4k"], table["fault_cost_2m"] = small_cost, huge_cost
    table["limit_seconds"] = table["bytes"] / table["limit_gbps"] / 1e9
    table["fault_seconds"] = (faults - huge) * small_cost + huge * huge_cost.fillna(0)
    table["predicted_seconds"] = (table["limit_seconds"] + table["fault_seconds"]).where(
        table["device"] == "cpu")
    table["fault_cost_4k_in_copy"], table["fault_cost_2m_in_copy"] = small_in_copy, huge_in_copy
    if small_in_copy.isna().all() and huge_in_copy.isna().all():
        return table  # the probe did not copy into fresh pages
    # each page kind at its cost inside a copy: NaN where faults of a kind were not probed so
    small_seconds = ((faults - huge) * small_in_copy).where(faults - huge > 0, 0)
    huge_seconds = (huge * huge_in_copy).where(huge > 0, 0)
    table["predicted_in_copy_seconds"] = (
        table["limit_seconds"] + small_seconds + huge_seconds).where(table["device"] == "cpu")
    return table


