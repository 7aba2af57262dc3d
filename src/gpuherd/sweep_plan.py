"""A sweep's submission planned: which of its points it submits, resumed against their
folders (SUCCESS, FAILURE) and the queue (a point whose job is queued or running is not
submitted twice), counted by kind for its answer."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field

from gpuherd.core.sweep import Point, plan_resume
from gpuherd.core.units import plural
from gpuherd.store import Store


@dataclass
class Plan:
    to_submit: list[Point]
    counts: dict[str, int]
    skipped_done: Sequence[Point] = ()
    shared: list[str] = field(default_factory=list)
    """A warning when points were skipped because another sweep's jobs use their folders."""


def plan_points(store: Store, name: str, points: Sequence[Point], force: bool) -> Plan:
    """What a submission of the sweep submits: its points neither done (unless `force`) nor
    queued, held, running or paused, and how many of each kind."""
    # Any sweep's: two sweeps into one results folder share their points' folders, and
    # two jobs running in one folder would write one set of logs and files.
    active = store.active_folders()
    exists = os.path.exists  # (strings: Path objects for 5,000 points took a while)
    done = {p.folder for p in points if exists(os.path.join(p.run_dir, "SUCCESS"))}
    failed = {p.folder for p in points if exists(os.path.join(p.run_dir, "FAILURE"))}
    resume = plan_resume(points, done, failed, force=force)

    def idle(group: Sequence[Point]) -> list[Point]:
        return [p for p in group if p.run_dir not in active]

    counts = {
        "new": len(idle(resume.new)),
        "rerun_failed": len(idle(resume.rerun_failed)),
        "rerun_done": len(idle(resume.rerun_done)),
        "skipped_done": len(resume.skipped_done),
        "skipped_active": len(resume.to_run) - len(idle(resume.to_run)),
    }
    others = [active[p.run_dir] for p in resume.to_run if active.get(p.run_dir, name) != name]
    their = "their folders are" if len(others) > 1 else "its folder is"
    shared = [
        f"{plural(len(others), 'point')} skipped: {their} in use by queued or running jobs"
        f" of sweep {', '.join(map(repr, sorted(set(others))))} (the same results folder);"
        " submit again once those ended, or give another --results-dir"
    ]
    return Plan(idle(resume.to_run), counts, resume.skipped_done, shared if others else [])
