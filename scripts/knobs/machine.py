"""A description of the machine a run measured, stored with every result."""

import glob
import os
import platform
import socket
import subprocess


def _read(path, default=None):
    try:
        with open(path) as handle:
            return handle.read().strip()
    except OSError:
        return default


def _cpuinfo():
    """The first processor's fields in /proc/cpuinfo."""
    fields = {}
    for line in (_read("/proc/cpuinfo") or "").splitlines():
        if not line.strip():
            break
        key, _, value = line.partition(":")
        fields[key.strip()] = value.strip()
    return fields


def _cpu_model(cpuinfo):
    return cpuinfo.get("model name") or platform.processor() or platform.machine()


# CPU flags that change which kernels a framework runs (and so its speed): two machines with
# the same model name but different flags are different machines to a benchmark.
KERNEL_FLAGS = ("sse4_2", "avx", "avx2", "fma", "avx512f", "avx512bw", "avx512vl",
                "avx512_vnni", "avx512_bf16", "avx512_fp16", "avx_vnni", "amx_tile",
                "amx_bf16", "amx_int8")


def cpu_flags():
    """The CPU's feature flags, as the kernel reports them."""
    return _cpuinfo().get("flags", "").split()


def _cpu_identity(cpuinfo):
    """What tells two CPUs apart: vendor, family, model, stepping, microcode, kernel flags."""
    flags = set(cpuinfo.get("flags", "").split())
    return {
        "vendor": cpuinfo.get("vendor_id"),
        "family": cpuinfo.get("cpu family"),
        "model": cpuinfo.get("model"),
        "stepping": cpuinfo.get("stepping"),
        "microcode": cpuinfo.get("microcode"),
        "mhz": cpuinfo.get("cpu MHz"),
        "flags": [flag for flag in KERNEL_FLAGS if flag in flags],
        "hypervisor": "hypervisor" in flags,
    }


def _virtualization():
    """What systemd says this machine runs in (kvm, docker, ...), where it can say."""
    import shutil
    import subprocess

    if not shutil.which("systemd-detect-virt"):
        return None
    try:
        done = subprocess.run(["systemd-detect-virt"], capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() or None


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


def mapped_files():
    """Files mapped into this process, from /proc/self/maps."""
    with open("/proc/self/maps") as maps:
        return {line.split(None, 5)[5].strip() for line in maps
                if len(line.split(None, 5)) == 6 and line.split(None, 5)[5].startswith("/")}


def glibc_loader():
    """The dynamic loader this process was started by (from its own mappings), or None."""
    try:
        paths = mapped_files()
    except OSError:
        return None
    return next((p for p in sorted(paths) if os.path.basename(p).startswith(
        ("ld-linux", "ld64.so", "ld.so"))), None)


def _loader_says(option, value):
    """What this process's loader prints for `option` given GLIBC_TUNABLES=`value` (nothing
    set where `value` is empty): its lines, [] where there is no glibc loader to ask."""
    loader = glibc_loader()
    if loader is None:
        return []
    try:
        return subprocess.run([loader, option], capture_output=True, text=True,
                              env={"GLIBC_TUNABLES": value} if value else {}).stdout.splitlines()
    except OSError:
        return []


def glibc_tunables(value=""):
    """{tunable: value} as this process's loader makes them of GLIBC_TUNABLES=`value` (glibc's
    own defaults for this machine where `value` is empty); {} where it cannot say."""
    return {name: setting.split(" (")[0] for name, setting in
            (line.split(": ", 1) for line in _loader_says("--list-tunables", value)
             if ": " in line)}


def glibc_cpu_features(value=""):
    """{name: value} of what this process's loader reports of its x86 CPU features and string
    functions given GLIBC_TUNABLES=`value` (`--list-diagnostics`: `preferred.Prefer_ERMS`,
    `rep_movsb_stop_threshold`, ...; names without `x86.cpu_features.`); {} where it cannot say.
    Unlike --list-tunables it shows what the loader derived, not only what it was told."""
    prefix = "x86.cpu_features."
    return dict(line[len(prefix):].split("=", 1) for line in _loader_says(
        "--list-diagnostics", value) if line.startswith(prefix) and "=" in line)


def aslr():
    """kernel.randomize_va_space: 0 no layout randomization, 1 stack and mappings, 2 the heap
    too; None where unreadable."""
    value = _read("/proc/sys/kernel/randomize_va_space")
    return int(value) if value and value.isdigit() else None


def describe():
    """CPU, cores, caches, memory, kernel, glibc and transparent huge page mode."""
    try:
        glibc = os.confstr("CS_GNU_LIBC_VERSION")
    except (ValueError, OSError):
        glibc = None
    cpuinfo = _cpuinfo()
    string_choices = glibc_cpu_features()
    return {
        "host": socket.gethostname(),
        "cpu": _cpu_model(cpuinfo),
        "cpu_identity": _cpu_identity(cpuinfo),
        "virtualization": _virtualization(),
        "cores": os.cpu_count(),
        "cores_usable": len(os.sched_getaffinity(0)),
        "caches": _caches(),
        "memory_gib": round((_meminfo_kib("MemTotal") or 0) / 2**20, 1),
        "kernel": platform.release(),
        "os": _read("/etc/os-release", "").split("PRETTY_NAME=")[-1].split("\n")[0].strip('"'),
        "glibc": glibc,
        "thp_enabled": _selected("/sys/kernel/mm/transparent_hugepage/enabled"),
        "thp_defrag": _selected("/sys/kernel/mm/transparent_hugepage/defrag"),
        "thp_khugepaged_defrag": _read("/sys/kernel/mm/transparent_hugepage/khugepaged/defrag"),
        "page_size": os.sysconf("SC_PAGE_SIZE"),
        "aslr": aslr(),
        # where glibc's memcpy switches to non-temporal stores, derived from the L3 CPUID reports
        "glibc_non_temporal_threshold": glibc_tunables().get(
            "glibc.cpu.x86_non_temporal_threshold"),
        # memcpy copies with `rep movsb` from the first size up to the second, with vector
        # loads and stores above (non-temporal ones from the threshold above); glibc stops
        # at the L2 size on AMD, at the non-temporal threshold elsewhere
        **{f"glibc_{name}": string_choices.get(name)
           for name in ("rep_movsb_threshold", "rep_movsb_stop_threshold")},
        "python": platform.python_version(),
        "gpus": gpus(),
    }


def kind(description):
    """One line that names the kind of machine (two runs compare only within one kind)."""
    identity = description.get("cpu_identity") or {}
    parts = [description.get("cpu"),
             "family {family} model {model} stepping {stepping}".format(**identity)
             if identity else "identity not recorded",
             f"{description.get('cores')} cores", " ".join(identity.get("flags", [])),
             gpu_text(description)]
    return ", ".join(str(part) for part in parts if part)


def gpu_text(description):
    """The GPUs of a `describe()` result as one table cell ("" where there is none)."""
    return "; ".join(f"{g['name']} (driver {g['driver']})" for g in description.get("gpus", []))


def available_memory_bytes():
    return (_meminfo_kib("MemAvailable") or 0) * 1024
