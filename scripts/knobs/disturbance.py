"""Was the machine doing something else while a process measured? The machine's CPU time
(/proc/stat) minus the process's own is what other processes used; steal is what the
hypervisor gave to other guests. Read at the start and end of every measured process.
"""

import datetime
import os
import resource
import time

TICKS = os.sysconf("SC_CLK_TCK")

# A process is flagged when, on average over its run, other processes kept more than this many
# CPUs busy, or the hypervisor stole more than this share of the machine's CPU time. Chosen
# from measurements on the 2-core development VM (README, "Noise and disturbance"): quiet
# runs stay under 0.05 CPUs and 1% steal; one competing busy process shows as about 1 CPU.
MAX_OTHER_CPUS = 0.25
MAX_STEAL = 0.05
# ... and only when that adds up to this much CPU time: the kernel counts in ticks of 10 ms, so
# one stray tick in a 50 ms process reads as 0.2 CPUs.
MIN_SECONDS = 0.05


def _machine_ticks():
    """(busy, steal, total) jiffies of the whole machine since boot."""
    with open("/proc/stat") as stat:
        fields = [int(v) for v in stat.readline().split()[1:]]
    user, nice, system, idle, iowait, irq, softirq, steal = (fields + [0] * 8)[:8]
    busy = user + nice + system + irq + softirq
    return busy, steal, busy + idle + iowait + steal


def _own_cpu_seconds():
    """CPU time of this process, all its threads, and its reaped children (compilers)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _load():
    with open("/proc/loadavg") as loadavg:
        return float(loadavg.read().split()[0])


class Watch:
    """The machine's activity from `start()` to `stop()` of one measured process."""

    def __init__(self):
        self.started = datetime.datetime.now(datetime.timezone.utc).isoformat()
        self.wall = time.perf_counter()
        self.ticks = _machine_ticks()
        self.own = _own_cpu_seconds()
        self.load_before = _load()

    def stop(self):
        wall = time.perf_counter() - self.wall
        busy, steal, total = (b - a for a, b in zip(self.ticks, _machine_ticks()))
        own = _own_cpu_seconds() - self.own
        other = max(0.0, busy / TICKS - own)
        record = {
            "started": self.started,
            "wall_seconds": wall,
            "own_cpu_seconds": own,
            "other_cpu_seconds": other,
            "other_cpus": other / wall if wall > 0 else 0.0,
            "steal_seconds": steal / TICKS,
            "steal_share": steal / total if total else 0.0,
            "load_before": self.load_before,
            "load_after": _load(),
        }
        record["disturbed"] = verdict(record)
        return record


def verdict(record, max_other=MAX_OTHER_CPUS, max_steal=MAX_STEAL):
    """Why a process counts as disturbed, or None."""
    reasons = []
    if record["other_cpus"] > max_other and record["other_cpu_seconds"] >= MIN_SECONDS:
        reasons.append(f"other processes used {record['other_cpus']:.2f} CPUs "
                       f"(limit {max_other})")
    if record["steal_share"] > max_steal and record["steal_seconds"] >= MIN_SECONDS:
        reasons.append(f"the hypervisor stole {record['steal_share']:.1%} of CPU time "
                       f"(limit {max_steal:.0%})")
    return "; ".join(reasons) or None
