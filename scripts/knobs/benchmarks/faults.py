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

Where the fault lands: cases `chunk4k-<bytes>` copy into a fresh region `chunk` bytes (64 KiB
by default) per `memcpy`, each page faulting inside its chunk's copy; cases `before4k-<bytes>`
run the same loop, the kernel faulting in (and zeroing) each chunk's pages just before its
copy (MADV_POPULATE_WRITE, Linux 5.14+: no trap, the copy uninterrupted, its lines zeroed at
most one chunk before). `chunkwarm4k-<bytes>` and `beforewarm4k-<bytes>` run each loop over a
region faulted in before the clock (the madvise calls then find every page there). Set
beside the whole copy's, their differences per fault separate what a fault adds to a copy by
the copy's length and by whether the fault traps inside it. `chunk2m`, `chunkwarm2m`,
`before2m` and `beforewarm2m` do the same over huge pages (`chunk` then a whole number of
them). A chunk above the region's size makes one copy of it: with `before`, the kernel faults
the whole region in, then one `memcpy` copies it. `allbefore4k-<bytes>` (and `allbefore2m`)
have the kernel fault the whole region in, then copy it chunk by chunk: set against
`before4k`, the same copies, the same faults taken on request, only the time between a
page's zeroing and its copy differs (at most one chunk, or the whole region);
`allbeforewarm4k` and `allbeforewarm2m` are their warm twins.

The cost per fault differs with the region's size (measured: a little dearer in larger
regions; why is not measured), so the copy step's model takes the cost at each call's own size.

params: sizes (region sizes in bytes; the copy step's output sizes), or mib (one size, MiB;
default 64); kinds (the kinds to run, a list; default 4k, 2m, copy4k, copy2m, warm4k, warm2m;
huge ones only where THP allows); chunk (bytes per `memcpy` of the chunked kinds).
"""

import mmap

import numpy as np

PAGE = 4096
HUGE_PAGE = 2 << 20
# the kernel faults the whole region in (MADV_POPULATE_WRITE), then the chunks' copies
ALL_BEFORE = ("allbefore4k", "allbeforewarm4k", "allbefore2m", "allbeforewarm2m")
CHUNKED = ["chunk4k", "chunkwarm4k", "before4k", "beforewarm4k",
           "chunk2m", "chunkwarm2m", "before2m", "beforewarm2m", *ALL_BEFORE]
KINDS = ["4k", "2m", "copy4k", "copy2m", "warm4k", "warm2m", *CHUNKED]
DEFAULT_KINDS = ["4k", "2m", "copy4k", "copy2m", "warm4k", "warm2m"]
CHUNK = 64 << 10  # bytes per memcpy of the chunked kinds, unless params.chunk says
# the kernel faults in each chunk's pages just before its copy
EACH_BEFORE = ("before4k", "beforewarm4k", "before2m", "beforewarm2m")
POPULATED = (*EACH_BEFORE, *ALL_BEFORE)  # need MADV_POPULATE_WRITE
MADV_POPULATE_WRITE = getattr(mmap, "MADV_POPULATE_WRITE", 23)  # Linux's value


def populate_write_error():
    """Why this kernel cannot fault pages in on request (MADV_POPULATE_WRITE), or None."""
    try:
        with mmap.mmap(-1, PAGE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS) as probe:
            probe.madvise(MADV_POPULATE_WRITE, 0, PAGE)
    except OSError as error:
        return f"this kernel has no MADV_POPULATE_WRITE ({error}; Linux 5.14+)"
    return None


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


def offset_in(region, view):
    """Where `view` starts inside `region`, in bytes (madvise takes offsets into the mapping)."""
    return view.ctypes.data - np.frombuffer(region, dtype=np.uint8).ctypes.data


def copy_in_chunks(region, pages, source, chunk, populate, offset=0):
    """Copy `source` into `pages` `chunk` bytes per `memcpy`; where `populate`, the kernel
    faults in each chunk's pages just before its copy. `pages` starts `offset` bytes into
    `region` (a page boundary)."""
    for start in range(0, len(source), chunk):
        end = min(start + chunk, len(source))
        if populate:
            region.madvise(MADV_POPULATE_WRITE, offset + start, -(-(end - start) // PAGE) * PAGE)
        np.copyto(pages[start:end], source[start:end])


class Benchmark:
    def __init__(self, params, device, seed):
        self.sizes = [int(size) for size in params.get("sizes", [params.get("mib", 64) << 20])]
        kinds = params.get("kinds", DEFAULT_KINDS)
        if isinstance(kinds, str) or sorted(set(kinds) - set(KINDS)):
            raise ValueError(f"faults: params.kinds {kinds!r} is not a list of {KINDS}")
        self.kinds = list(dict.fromkeys(kinds))  # each once, in the order given
        self.chunk = int(params.get("chunk", CHUNK))
        if self.chunk <= 0 or self.chunk % PAGE:
            raise ValueError(f"faults: chunk {self.chunk} is not a positive multiple of {PAGE}")
        huge_chunks = [kind for kind in self.kinds if kind in CHUNKED and kind.endswith("2m")]
        if huge_chunks and self.chunk % HUGE_PAGE:
            raise ValueError(f"faults: chunk {self.chunk} is not a multiple of {HUGE_PAGE}, as "
                             f"{', '.join(huge_chunks)} need (each fault its own chunk's)")
        refused = set(self.kinds) & set(POPULATED) and populate_write_error()
        if refused:
            raise RuntimeError(f"faults: {refused}: leave {', '.join(POPULATED)} out of "
                               "params.kinds")
        self.rng = np.random.default_rng(seed)

    def cases(self):
        huge = thp_mode() in ("madvise", "always")
        kinds = [kind for kind in self.kinds if huge or not kind.endswith("2m")]
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
        if kind in CHUNKED:
            return self._chunked(size, source, huge, warm="warm" in kind,
                                 populate=kind in EACH_BEFORE, ahead=kind in ALL_BEFORE)
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

    def _chunked(self, size, source, huge, warm, populate, ahead):
        """The copy chunk by chunk into fresh pages (or, warm, pages faulted in before the
        clock), the kernel faulting each chunk's pages in just before its copy where
        `populate`, the whole region's before the first copy where `ahead`."""
        def copy(region, pages, offset):
            if ahead:
                region.madvise(MADV_POPULATE_WRITE, offset, -(-size // PAGE) * PAGE)
            copy_in_chunks(region, pages, source, self.chunk, populate, offset)

        if warm:
            region, pages = fresh_region(size, huge)
            pages[::PAGE] = 1  # faulted in before the clock
            offset = offset_in(region, pages)
            return lambda: copy(region, pages, offset)

        def step():
            region, pages = fresh_region(size, huge)
            copy(region, pages, offset_in(region, pages))
            del pages
            region.close()

        return step

    def info(self, case):
        kind, size = self._parse(case)
        return {"bytes": size, "huge": kind.endswith("2m"), "page": kind, "thp_mode": thp_mode()}
