"""What one minor page fault costs on this machine, at each size the copy step allocates: map
a fresh anonymous region, write one byte per 4 KiB page (the kernel faults in, zeroes and maps
each page), unmap it; per step, time / faults. Case `4k-<bytes>`: small pages; case
`2m-<bytes>`: the region advised for transparent huge pages (MADV_HUGEPAGE), where the kernel's
THP mode allows it, touched only over whole 2 MiB-aligned pages.

A fault taken inside a copy may cost more than one taken alone (the zeroed page and the copied
data meet in the cache). Cases `copy4k-<bytes>` and `copy2m-<bytes>`: the same fresh regions
written by a copy of random bytes (`np.copyto`: glibc's memcpy, as the copy step's outputs
are); cases `warm4k-<bytes>` and `warm2m-<bytes>`: the same copy into a region of the same
page kind faulted in once, before the clock. Their difference per fault is what a fault costs
inside a copy (knobs/tables.py, fault_costs).

The cost per fault differs with the region's size (measured: a little dearer in larger
regions; why is not measured), so the copy step's model takes the cost at each call's own size.

params: sizes (region sizes in bytes; the copy step's output sizes), or mib (one size, MiB;
default 64).
"""

import mmap

import numpy as np

PAGE = 4096
HUGE_PAGE = 2 << 20


def thp_mode():
    try:
        with open("/sys/kernel/mm/transparent_hugepage/enabled") as handle:
            text = handle.read()
        return text[text.index("[") + 1:text.index("]")]
    except (OSError, ValueError):
        return "never"


def fresh_region(size, huge):
    """A new anonymous mapping and a view of `size` bytes of it: on 4 KiB pages (huge pages
    refused), or advised for huge pages and starting on a 2 MiB boundary, with whole huge pages
    behind it, so that every fault is a huge one where the kernel can give one."""
    touched = -(-size // HUGE_PAGE) * HUGE_PAGE if huge else -(-size // PAGE) * PAGE
    region = mmap.mmap(-1, touched + (HUGE_PAGE if huge else 0),
                       flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    region.madvise(mmap.MADV_HUGEPAGE if huge else mmap.MADV_NOHUGEPAGE)
    pages = np.frombuffer(region, dtype=np.uint8)
    start = -pages.ctypes.data % HUGE_PAGE if huge else 0
    return region, pages[start:start + touched]


class Benchmark:
    def __init__(self, params, device, seed):
        self.sizes = [int(size) for size in params.get("sizes", [params.get("mib", 64) << 20])]
        self.rng = np.random.default_rng(seed)

    def cases(self):
        huge = thp_mode() in ("madvise", "always")
        kinds = (["4k", "2m", "copy4k", "copy2m", "warm4k", "warm2m"] if huge
                 else ["4k", "copy4k", "warm4k"])
        return [f"{kind}-{size}" for kind in kinds for size in self.sizes]

    @staticmethod
    def _parse(case):
        kind, size = case.split("-")
        return kind, int(size)

    def setup(self, case):
        kind, size = self._parse(case)
        huge = kind.endswith("2m")
        if kind in ("4k", "2m"):
            def step():
                region, pages = fresh_region(size, huge)
                pages[::PAGE] = 1  # one write per small page: all faulted in
                del pages
                region.close()  # unmapped inside the clock, as a freed copy output is

            return step
        source = self.rng.integers(0, 256, size, dtype=np.uint8)
        if kind.startswith("warm"):
            _, target = fresh_region(size, huge)  # the view keeps the mapping
            target[::PAGE] = 1  # faulted in before the clock
            target = target[:size]
            return lambda: np.copyto(target, source)

        def step():
            region, pages = fresh_region(size, huge)
            np.copyto(pages[:size], source)
            del pages
            region.close()

        return step

    def info(self, case):
        kind, size = self._parse(case)
        return {"bytes": size, "huge": kind.endswith("2m"), "page": kind, "thp_mode": thp_mode()}
