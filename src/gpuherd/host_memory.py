"""The host's memory (RAM), as placement's `--ram` and `keep-ram` and submit's checks read it."""

from __future__ import annotations


def _meminfo() -> dict[bytes, int]:
    """/proc/meminfo's fields in bytes ({} where it cannot be read: not Linux).

    Read here as psutil.virtual_memory() reads it on Linux, so that `gpuherd run` need not
    import psutil (~6 ms) before its first placement; psutil answers where this cannot.
    """
    try:
        with open("/proc/meminfo", "rb") as f:
            return {k: int(v) * 1024 for k, v, *_ in (line.split() for line in f)}
    except (OSError, ValueError):
        return {}


def host_memory_available() -> int:
    info = _meminfo()
    total, available = info.get(b"MemTotal:", 0), info.get(b"MemAvailable:", 0)
    if 0 < available <= total:
        return available
    import psutil  # deferred: estimates what an old kernel or another system does not say

    return int(psutil.virtual_memory().available)


def host_memory_total() -> int:
    total = _meminfo().get(b"MemTotal:", 0)
    if total:
        return total
    import psutil  # deferred: not Linux

    return int(psutil.virtual_memory().total)
