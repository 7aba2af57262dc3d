"""GPUs kept for a job not running on them, as `gpuherd gpus` and the GPUs page both say it
(pure): a run no job's attempt is (a restored herd.db), or a job that waited past
reserve-after. One sentence per job and reason, naming all its GPUs: `GPUs 0-1 are reserved
for job 2, ...` (the GPUs page said it once per GPU, the same long reason twice)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from gpuherd.core.idspec import format_ids


class Reserved(NamedTuple):
    job: int
    reason: str
    gpus: list[int]

    @property
    def gpus_are(self) -> str:
        """`GPU 0 is`, `GPUs 0-1 are`: the sentence's subject."""
        if len(self.gpus) == 1:
            return f"GPU {self.gpus[0]} is"
        return f"GPUs {format_ids(self.gpus)} are"


def reserved(gpus: Iterable[Mapping[str, Any]]) -> list[Reserved]:
    """The `reserved` entries of `GET /api/v1/gpus`' GPUs, grouped by job and reason, in the
    order first seen. (An older daemon sends none.)"""
    runs: dict[tuple[int, str], list[int]] = {}
    for gpu in gpus:
        for run in gpu.get("reserved") or ():
            runs.setdefault((run["job"], run["reason"]), []).append(gpu["index"])
    return [Reserved(job, reason, indices) for (job, reason), indices in runs.items()]
