"""How full a GPU's slots are, as `gpuherd gpus` and the dashboard both say it (pure).

Jobs with --mem share a GPU by memory, beyond its slots (gpus.md, "Placement rules"): three
of them on a GPU of one slot are `3 sharing`, not `3/1`, which reads as a GPU overbooked.
A GPU overbooked is `3/1 over`: more runs than slots that do take a slot, as when its slots
were lowered (`gpus add 0 --slots 1`) below the jobs already running there. It was said
`3 sharing` too, as though they shared it by memory.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from gpuherd.core.units import plural

MAX_SLOTS = 1024
"""Jobs one GPU may run at once (--slots): more is a typo, and overflowed the database."""


class SlotUse(NamedTuple):
    runs: int
    """Each takes a slot: a job with two runs here (a held run beside its next attempt) two."""
    slots: int
    jobs: int
    taking: int
    """Runs bound by the slots: all of them where the slots cap every job (two or more
    slots: `max_jobs`), else those without --mem (placement.py's PLAIN, EXCLUSIVE)."""

    @property
    def sharing(self) -> bool:
        """More runs than slots: jobs with --mem sharing the GPU by its memory."""
        return self.runs > self.slots and not self.taking

    @property
    def over(self) -> bool:
        """More runs than slots that take one: nothing new starts there until some end."""
        return self.runs > self.slots and self.taking > 0

    @property
    def unit(self) -> str:
        """What `N sharing` counts: jobs (""), or runs where a job has two here, said so:
        `2 sharing` (on the dashboard `2 jobs sharing it`) of one job's two runs was false."""
        return "" if self.runs == self.jobs else " runs"

    def text(self) -> str:
        """SLOTS of `gpuherd gpus` (and the GPUs page's Slots): runs / slots, or who shares."""
        if self.sharing:
            return f"{self.runs}{self.unit} sharing"
        return f"{self.runs}/{self.slots}" + (" over" if self.over else "")

    def over_note(self) -> str:
        """What an overbooked GPU means: `3 jobs on 1 slot, so nothing new starts there until
        they all end` (`gpuherd gpus` under its table, the dashboard's tooltip and card)."""
        on = (
            f"{self.runs} runs of {plural(self.jobs, 'job')}"
            if self.unit
            else plural(self.runs, "job")
        )
        # A job starts there once fewer runs than slots are left (two end at least: over).
        ending = self.runs - self.slots + 1
        until = "they all end" if ending >= self.runs else f"{ending} of them end"
        return f"{on} on {plural(self.slots, 'slot')}, so nothing new starts there until {until}"


def slot_use(gpu: Mapping[str, Any]) -> SlotUse:
    """A GPU of `GET /api/v1/gpus`: its `runs`, each of a job's runs, and its `jobs`, each job
    once; `mem_runs`, the runs sharing it by memory (an older daemon sends no `runs`: its
    `jobs` had an entry per run; nor `mem_runs`: every run beyond the slots was sharing)."""
    capped = gpu.get("max_jobs") is not None
    slots = gpu["max_jobs"] if capped else gpu["slots"]
    runs = len(gpu.get("runs", gpu["jobs"]))
    taking = runs if capped else max(runs - gpu.get("mem_runs", runs), 0)
    return SlotUse(runs, slots, len(set(gpu["jobs"])), taking)
