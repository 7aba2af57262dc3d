"""Who holds a GPU besides gpuherd's jobs, as `gpuherd gpus` and the dashboard both say it
(pure): each foreign process as `pid (user, memory)`, and memory in use that no listed
process holds (another container's processes, which NVML does not list), which placement
counts as other users' too (gpus.md, "Placement rules")."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpuherd.core.units import format_size


def foreign_processes(gpu: Mapping[str, Any]) -> list[str]:
    """A GPU of `GET /api/v1/gpus`: its foreign processes, `4242 (alice, 20.0 GiB)` each; a
    user that cannot be read (another container's process, a fake state file's) is `?`."""
    return [
        f"{p['pid']} ({p.get('user') or '?'}"
        + (f", {format_size(p['memory'])})" if p.get("memory") else ")")
        for p in gpu.get("processes", [])
        if p.get("job_id") is None
    ]


def not_listed(gpu: Mapping[str, Any]) -> str | None:
    """`70.0 GiB used by processes not listed (another container?)`: the memory other users'
    processes use (`foreign_memory`) beyond what the listed ones hold; None when none is.
    Else a GPU that looked idle took no job, and nothing said why."""
    listed = sum(p.get("memory") or 0 for p in gpu.get("processes", []) if p.get("job_id") is None)
    unlisted = (gpu.get("foreign_memory") or 0) - listed
    if unlisted <= 0:
        return None
    return f"{format_size(unlisted)} used by processes not listed (another container?)"
