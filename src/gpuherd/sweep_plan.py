"""A sweep's submission planned: which of its points it submits, resumed against their
folders (SUCCESS, FAILURE) and the queue (a point whose job is queued or running is not
submitted twice), counted by kind for its answer.

Its functions run on a worker thread (10,000 points: ~1 s of expansion, file checks and jobs
made, the daemon's loop free meanwhile): they read the spec, the files and what the loop read
of the queue before (the folders in use, the run times), nothing the loop changes meanwhile;
what may change until the commit is checked again there (sweeps.py)."""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from gpuherd.core.ordering import longest_first
from gpuherd.core.sweep import Point, SweepError, SweepSpec, plan_resume, spec_from_dict
from gpuherd.core.sweep_fixed import overridden_fixed, unused_fixed
from gpuherd.core.sweep_values import alike_values, check_finite
from gpuherd.core.units import first_named, plural
from gpuherd.errors import InvalidValue
from gpuherd.submission_folders import check_cwd, refuse_home_folder
from gpuherd.sweep_checks import changed_values, missing_scripts
from gpuherd.sweep_files import marker, moved_run, points_there
from gpuherd.sweep_specs import expand_points
from gpuherd.unknown_ended import EndedRun
from gpuherd.wire import SubmitItem
from gpuherd.wire_requests import SweepRequest


@dataclass
class Plan:
    to_submit: list[Point]
    counts: dict[str, int]
    skipped_done: Sequence[Point] = ()
    shared: list[str] = field(default_factory=list)
    """A warning when points were skipped because another sweep's jobs use their folders."""
    unwatched: list[Point] = field(default_factory=list)
    """Points it would have run (--force: done ones too) skipped because a run no job of the
    queue accounts for is in their folders (`busy`: sweep_unwatched.py)."""
    there: frozenset[str] = frozenset()
    """The folders of its points that may be there (points_there: one listing of their
    results folder), for a look into them after the plan's (unknown_ended.ended_runs)."""


def parsed_spec(request: SweepRequest) -> SweepSpec:
    """The request's spec, checked, and its working directory (InvalidValue: what is wrong)."""
    if request.spec.get("name") in (None, ""):  # (another kind: spec_from_dict's words)
        # The CLI and the Python API always send one (made from the command when none is
        # given); SweepSpec's own refusal said "leave it out for the default one", which a
        # request leaving it out had just done.
        raise InvalidValue(
            'invalid sweep: spec.name: missing or empty; send the sweep\'s name ("spec": '
            '{"name": "lr-sweep", ...}): a request has no default one'
        )
    try:
        spec = spec_from_dict(request.spec)
    except SweepError as exc:
        raise InvalidValue(f"invalid sweep: {exc}") from None
    if spec.command is None:
        raise InvalidValue(f"sweep {spec.name!r} has no command: give a command template")
    try:
        check_finite(request.spec)
    except SweepError as exc:
        raise InvalidValue(f"invalid sweep: {exc}") from None
    # A task's fixed values are its function's keywords, checked by its call (tasks.py); one
    # every point's own value overrides is refused all the same (a raw HTTP task request).
    if unused := overridden_fixed(spec) if request.task else unused_fixed(spec):
        raise InvalidValue(f"invalid sweep: {unused}")
    check_cwd(request.cwd)  # (a relative one was said "does not exist")
    return spec


def placed_spec(spec: SweepSpec, cwd: str, seed: int | None) -> SweepSpec:
    """`spec` with its results folder absolute (relative ones are `cwd`'s), and `seed`;
    InvalidValue for a results folder in gpuherd's home (refuse_home_folder)."""
    where = os.path.expanduser(spec.results_path)
    results = os.path.normpath(os.path.join(cwd, where))
    refuse_home_folder("results_dir", results)  # (its points' folders are jobs' folders)
    try:
        return replace(spec, results_dir=results, seed=seed)
    except SweepError as exc:
        raise InvalidValue(f"invalid sweep: {exc}") from None


def planned_points(
    spec: SweepSpec,
    force: bool,
    active: Mapping[str, str],
    times: Mapping[str, float] | None = None,
    busy: Collection[str] = (),
) -> tuple[list[Point], Plan]:
    """The spec's points, and the plan of its submission (plan_points); the points to submit
    longest first by `times` (the run times of their latest runs, by folder), if given."""
    points = expand_points(spec)
    plan = plan_points(spec.name, points, force, active, busy)
    if times is not None:
        plan = replace(
            plan, to_submit=longest_first(plan.to_submit, lambda p: times.get(p.run_dir))
        )
    return points, plan


def plan_points(
    name: str,
    points: Sequence[Point],
    force: bool,
    active: Mapping[str, str],
    busy: Collection[str] = (),
) -> Plan:
    """What a submission of the sweep submits: its points neither done (unless `force`) nor
    in `active` (the folders of jobs queued, held, running or paused, with their sweep's
    name: Store.active_folders) nor `busy` (folders a run writes in that no job of the
    queue runs: herd.db restored from an older backup), and how many of each kind. A busy
    point counts as running, --force or not: run again, the new job would have that run's
    files moved aside under it, and the run's shell would write its end into the new job's
    record (its `process` file, by path)."""
    # Only the folders there are looked into (two lookups a point: 80,000 for a resubmission
    # of 40,000 new points), and FAILURE only where SUCCESS is not (done wins: plan_resume).
    there = points_there(points)
    found = [(p.folder, _last_said(p.run_dir, active)) for p in there]
    done = {folder for folder, said in found if said == "done"}
    failed = {folder for folder, said in found if said == "failed"}
    resume = plan_resume(points, done, failed, force=force)

    def idle(group: Sequence[Point]) -> list[Point]:
        return [p for p in group if p.run_dir not in active and p.run_dir not in busy]

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
    unwatched = [p for p in resume.to_run if p.run_dir in busy and p.run_dir not in active]
    return Plan(
        idle(resume.to_run),
        counts,
        resume.skipped_done,
        shared if others else [],
        unwatched,
        frozenset(p.run_dir for p in there),
    )


def _last_said(run_dir: str, active: Mapping[str, str]) -> str:
    """What the point's folder says of its last run: its marker, or, where a submission moved
    that run aside and its job never started, the marker moved with it (moved_run). (Not
    looked for where a job of the queue has the folder: that point is not submitted.)"""
    said = marker(run_dir)
    if said == "missing" and run_dir not in active and (moved := moved_run(run_dir)):
        return marker(moved)
    return said


def judged_by_ended_runs(
    plan: Plan, ended: Mapping[str, EndedRun], known: Collection[str], force: bool
) -> tuple[Plan, list[str]]:
    """`plan` with its points whose folder holds an ended run (`ended`) judged by it, as the
    table judges them: but those of a folder a job of herd.db ran (`known`), judged by that
    job. Counted new before (no marker), they are done (skipped; rerun with `force`) or
    failed (rerun); and the line that says so of those skipped."""
    judged = {p.run_dir: ended[p.run_dir] for p in plan.to_submit if p.run_dir in ended}
    judged = {folder: run for folder, run in judged.items() if folder not in known}
    if not judged:
        return plan, []
    counts = dict(plan.counts)
    skipped = []
    for run in judged.values():
        counts["new"] -= 1
        kind = "rerun_failed" if not run.succeeded else "rerun_done" if force else "skipped_done"
        counts[kind] += 1
    if not force:
        skipped = [p for p in plan.to_submit if p.run_dir in judged and judged[p.run_dir].succeeded]
    left = {p.run_dir for p in skipped}
    plan = replace(
        plan,
        to_submit=[p for p in plan.to_submit if p.run_dir not in left],
        counts=counts,
        skipped_done=(*plan.skipped_done, *skipped),
    )
    return plan, _skipped_line(skipped, judged)


def _skipped_line(skipped: Sequence[Point], judged: Mapping[str, EndedRun]) -> list[str]:
    if not skipped:
        return []
    if len(skipped) == 1:
        point, run = skipped[0], judged[skipped[0].run_dir]
        return [
            f"point {point.folder} skipped as done: job {run.job_id} attempt {run.attempt}, a"
            " run herd.db does not know (restored from an older backup?), ended in its folder"
            " with exit 0, which alone records its end; --force runs it again"
        ]
    runs = [(p.folder, judged[p.run_dir]) for p in skipped]
    named = first_named(runs, lambda ran: f"{ran[0]}: job {ran[1].job_id} attempt {ran[1].attempt}")
    return [
        f"{len(skipped):,} points skipped as done: runs herd.db does not know (restored from"
        f" an older backup?) ended in their folders with exit 0, which alone record their ends"
        f" ({named}); --force runs them again"
    ]


def items_of(
    spec: SweepSpec,
    points: Sequence[Point],
    request: SweepRequest,
    git: str | None,
    options: dict[str, Any],
) -> list[SubmitItem]:
    """The job of each point (on a worker thread: 10,000 points took ~0.3 s)."""
    return [
        SubmitItem(
            command=point.command or "",
            cwd=request.cwd,
            env=dict(request.env),
            name=f"{spec.name}/{point.folder}",
            folder=point.run_dir,
            sweep=spec.name,
            git=git,
            **{k: _own(v) for k, v in options.items()},
        )
        for point in points
    ]


def read_from_points(
    spec: SweepSpec, plan: Plan, request: SweepRequest, on_ray: bool = False
) -> tuple[list[str], list[str], list[str]]:
    """The warnings of a submission that read its points and their files, not the queue (on
    a worker thread: 10,000 points took ~0.3 s): values that read alike, done points that ran
    other values or another command, scripts missing (`on_ray`: see missing_scripts)."""
    return (
        alike_values(spec),
        changed_values(plan.skipped_done),
        missing_scripts(plan.to_submit, request, on_ray),
    )


def _own(value: Any) -> Any:
    """A list or dict copied (each item its own, as job_options() gives them); else as is."""
    return value.copy() if isinstance(value, list | dict) else value
