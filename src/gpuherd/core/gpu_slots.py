"""How full a GPU's slots are, as `gpuherd gpus` and the dashboard both say it (pure).

Jobs with --mem share a GPU by memory, beyond its slots (gpus.md, "Placement rules"): three
of them on a GPU of one slot are `3 sharing`, not `3/1`, which reads as a GPU overbooked.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

MAX_SLOTS = 1024
"""Jobs one GPU may run at once (--slots): more is a typo, and overflowed the database."""


class SlotUse(NamedTuple):
    runs: int
    """Each takes a slot: a job with two runs here (a held run beside its next attempt) two."""
    slots: int
    jobs: int

    @property
    def sharing(self) -> bool:
        """More runs than slots: jobs with --mem sharing the GPU by its memory."""
        return self.runs > self.slots

    @property
    def unit(self) -> str:
        """What `N sharing` counts: jobs (""), or runs where a job has two here, said so:
        `2 sharing` (on the dashboard `2 jobs sharing it`) of one job's two runs was false."""
        return "" if self.runs == self.jobs else " runs"

    def text(self) -> str:
        """SLOTS of `gpuherd gpus` (and the GPUs page's Slots): runs / slots, or who shares."""
        return f"{self.runs}{self.unit} sharing" if self.sharing else f"{self.runs}/{self.slots}"


def slot_use(gpu: Mapping[str, Any]) -> SlotUse:
    """A GPU of `GET /api/v1/gpus`: its `runs`, each of a job's runs, and its `jobs`, each job
    once. (An older daemon sends no `runs`: its `jobs` had an entry per run.)"""
    slots = gpu["slots"] if gpu.get("max_jobs") is None else gpu["max_jobs"]
    return SlotUse(len(gpu.get("runs", gpu["jobs"])), slots, len(set(gpu["jobs"])))
