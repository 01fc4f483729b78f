"""A description of the machine a run measured, stored with every result."""

import glob
import os
import platform
import socket


def _read(path, default=None):
    try:
        with open(path) as handle:
            return handle.read().strip()
    except OSError:
        return default


def _cpu_model():
    for line in (_read("/proc/cpuinfo") or "").splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def _caches():
    caches = {}
    for index in sorted(os.listdir("/sys/devices/system/cpu/cpu0/cache")
                        if os.path.isdir("/sys/devices/system/cpu/cpu0/cache") else []):
        base = f"/sys/devices/system/cpu/cpu0/cache/{index}"
        level, kind = _read(f"{base}/level"), _read(f"{base}/type")
        if level and kind:
            caches[f"L{level}{'' if kind == 'Unified' else kind[0].lower()}"] = _read(f"{base}/size")
    return caches


def _meminfo_kib(key):
    for line in (_read("/proc/meminfo") or "").splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    return None


def _selected(path):
    """The bracketed choice of a sysfs setting such as `always [madvise] never`."""
    text = _read(path, "")
    return text[text.find("[") + 1:text.find("]")] if "[" in text else text or None


def gpus():
    """Name and driver of each NVIDIA GPU, where nvidia-smi answers."""
    import shutil
    import subprocess

    if not shutil.which("nvidia-smi"):  # the driver's own files, where its tool is missing
        return [{"name": _read(path, "").partition("Model:")[2].split("\n")[0].strip() or "GPU",
                 "driver": _read("/proc/driver/nvidia/version", "?").split("  ")[0]}
                for path in sorted(glob.glob("/proc/driver/nvidia/gpus/*/information"))]
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version",
                              "--format=csv,noheader"], capture_output=True, text=True,
                             timeout=20).stdout
    except (OSError, subprocess.TimeoutExpired):
        return []
    return [dict(zip(("name", "driver"), map(str.strip, line.split(","))))
            for line in out.splitlines() if line.strip()]


def describe():
    """CPU, cores, caches, memory, kernel, glibc and transparent huge page mode."""
    try:
        glibc = os.confstr("CS_GNU_LIBC_VERSION")
    except (ValueError, OSError):
        glibc = None
    return {
        "host": socket.gethostname(),
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "cores_usable": len(os.sched_getaffinity(0)),
        "caches": _caches(),
        "memory_gib": round((_meminfo_kib("MemTotal") or 0) / 2**20, 1),
        "kernel": platform.release(),
        "os": _read("/etc/os-release", "").split("PRETTY_NAME=")[-1].split("\n")[0].strip('"'),
        "glibc": glibc,
        "thp_enabled": _selected("/sys/kernel/mm/transparent_hugepage/enabled"),
        "thp_defrag": _selected("/sys/kernel/mm/transparent_hugepage/defrag"),
        "page_size": os.sysconf("SC_PAGE_SIZE"),
        "python": platform.python_version(),
        "gpus": gpus(),
    }


def gpu_text(description):
    """The GPUs of a `describe()` result as one table cell ("" where there is none)."""
    return "; ".join(f"{g['name']} (driver {g['driver']})" for g in description.get("gpus", []))


def available_memory_bytes():
    return (_meminfo_kib("MemAvailable") or 0) * 1024
