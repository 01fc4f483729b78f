"""What one minor page fault costs on this machine: map a fresh anonymous region, write one
byte per 4 KiB page (the kernel faults in, zeroes and maps each page), unmap it; per step,
time / faults. Case `4k`: small pages; case `2m`: the region advised for transparent huge
pages (MADV_HUGEPAGE), where the kernel's THP mode allows it. The copy step's model predicts a
call's time as the copy limit plus its faults at these costs (knobs/tables.py).

params: mib (size of the region, default 64).
"""

import mmap

import numpy as np

PAGE = 4096


def thp_mode():
    try:
        with open("/sys/kernel/mm/transparent_hugepage/enabled") as handle:
            text = handle.read()
        return text[text.index("[") + 1:text.index("]")]
    except (OSError, ValueError):
        return "never"


class Benchmark:
    def __init__(self, params, device, seed):
        self.size = params.get("mib", 64) << 20

    def cases(self):
        return ["4k", "2m"] if thp_mode() in ("madvise", "always") else ["4k"]

    def setup(self, case):
        size, huge = self.size, case == "2m"

        def step():
            region = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
            region.madvise(mmap.MADV_HUGEPAGE if huge else mmap.MADV_NOHUGEPAGE)
            pages = np.frombuffer(region, dtype=np.uint8)
            pages[::PAGE] = 1  # one write per small page: every page is faulted in
            del pages
            region.close()  # unmapped inside the clock, as a freed copy output is

        return step

    def info(self, case):
        return {"bytes": self.size, "huge": case == "2m", "thp_mode": thp_mode()}
