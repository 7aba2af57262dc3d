"""How full a GPU's slots are, as `gpuherd gpus` and the dashboard both say it (pure).

Jobs with --mem share a GPU by memory, beyond its slots (gpus.md, "Placement rules"): three
of them on a GPU of one slot are `3 sharing`, not `3/1`, which reads as a GPU overbooked.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple


class SlotUse(NamedTuple):
    runs: int
    slots: int

    @property
    def sharing(self) -> bool:
        """More runs than slots: jobs with --mem sharing the GPU by its memory."""
        return self.runs > self.slots

    def text(self, between: str = "/") -> str:
        return f"{self.runs} sharing" if self.sharing else f"{self.runs}{between}{self.slots}"


def slot_use(gpu: Mapping[str, Any]) -> SlotUse:
    """A GPU of `GET /api/v1/gpus`. Each run takes a slot: two runs of a job (a held run
    beside its next attempt) two. (An older daemon sends no `runs`: its `jobs` had an entry
    per run.)"""
    slots = gpu["slots"] if gpu.get("max_jobs") is None else gpu["max_jobs"]
    return SlotUse(len(gpu.get("runs", gpu["jobs"])), slots)
