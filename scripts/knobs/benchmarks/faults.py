"""What one minor page fault costs on this machine, at each size the copy step allocates: map
a fresh anonymous region, write one byte per 4 KiB page (the kernel faults in, zeroes and maps
each page), unmap it; per step, time / faults. Case `4k-<bytes>`: small pages; case
`2m-<bytes>`: the region advised for transparent huge pages (MADV_HUGEPAGE), where the kernel's
THP mode allows it, touched only over whole 2 MiB-aligned pages. The cost per fault differs
with the region's size (measured: a little dearer in larger regions; why is not measured), so
the copy step's model takes the cost at each call's own size (knobs/tables.py).

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


class Benchmark:
    def __init__(self, params, device, seed):
        self.sizes = [int(size) for size in params.get("sizes", [params.get("mib", 64) << 20])]

    def cases(self):
        pages = ["4k", "2m"] if thp_mode() in ("madvise", "always") else ["4k"]
        return [f"{page}-{size}" for page in pages for size in self.sizes]

    @staticmethod
    def _parse(case):
        page, size = case.split("-")
        return page == "2m", int(size)

    def setup(self, case):
        huge, size = self._parse(case)
        # Huge pages: whole 2 MiB pages over at least `size`, inside a region with room to
        # align them, so that every fault is a huge one where the kernel can give one.
        touched = -(-size // HUGE_PAGE) * HUGE_PAGE if huge else -(-size // PAGE) * PAGE
        mapped = touched + HUGE_PAGE if huge else touched

        def step():
            region = mmap.mmap(-1, mapped, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
            region.madvise(mmap.MADV_HUGEPAGE if huge else mmap.MADV_NOHUGEPAGE)
            pages = np.frombuffer(region, dtype=np.uint8)
            start = -pages.ctypes.data % HUGE_PAGE if huge else 0
            pages[start:start + touched:PAGE] = 1  # one write per small page: all faulted in
            del pages
            region.close()  # unmapped inside the clock, as a freed copy output is

        return step

    def info(self, case):
        huge, size = self._parse(case)
        return {"bytes": size, "huge": huge, "page": "2m" if huge else "4k",
                "thp_mode": thp_mode()}
