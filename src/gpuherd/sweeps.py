"""Sweeps in the daemon: expand a spec, resume it against its folders, submit, and tabulate.

The CLI, the Python API and the dashboard all come here through the API, so expansion,
resume and the results table have one implementation. Expansion and folder naming are the
pure core's (core/sweep.py); this module adds what needs the file system and the queue:

- a point is *done* when its folder holds SUCCESS, *failed* when it holds FAILURE, *missing*
  otherwise; a point whose latest job of the sweep is still queued, held, running or paused
  is never submitted twice;
- each submitted point gets `params.json` in its folder (sweep_folders.py), and its job
  gets that folder as its own (logs, job.json, markers), the sweep's name and the git
  commit of the submitter's working directory;
- the latest submission's spec is kept in the `sweeps` table: it defines the points that
  `status` lists (with the seed it used, so a resubmission draws the same points);
- a submission warns of what it cannot tell from its counts: values that read alike (one
  point), done points that ran with other fixed values (skipped all the same), folders named
  with True/False/None by earlier versions (not found under true/false/null);
- removing a sweep (sweep_removal.py) removes its jobs as `rm` does, then its record; a
  submission of it meanwhile is refused here.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Sequence
from contextlib import nullcontext
from dataclasses import asdict, dataclass
from typing import Any

from gpuherd import sweep_table
from gpuherd.core.choices import ORDERS
from gpuherd.core.run_time import measured_run_time, pauses
from gpuherd.core.sweep import (
    SweepSpec,
    count,
    size_refusal,
    spec_to_dict,
    unused_params,
)
from gpuherd.core.units import not_a_choice, plural
from gpuherd.errors import Conflict, InvalidValue
from gpuherd.service import CheckedJobs, Service
from gpuherd.submission import never_runs, spec_from_item
from gpuherd.submission_batch import Batch
from gpuherd.sweep_checks import (
    env_placeholders,
    waiting_jobs,
    waiting_with_other_command,
    waiting_with_other_options,
)
from gpuherd.sweep_folders import write_points
from gpuherd.sweep_journal import forget, journal_for
from gpuherd.sweep_plan import (
    Plan,
    items_of,
    judged_by_ended_runs,
    parsed_spec,
    placed_spec,
    planned_points,
    read_from_points,
)
from gpuherd.sweep_reads import full_table
from gpuherd.sweep_unwatched import folder_runs, not_rerun
from gpuherd.unknown_ended import ended_runs
from gpuherd.wire import SubmitItem
from gpuherd.wire_requests import SweepRequest


@dataclass
class _Planned:
    spec: SweepSpec
    plan: Plan
    options: dict[str, Any]
    """The job options every point shares (made once)."""
    answer: dict[str, Any]


class Sweeps:
    def __init__(self, service: Service) -> None:
        self.service = service
        self.store = service.store

    # ---- submit ---------------------------------------------------------------------------

    async def submit(self, request: SweepRequest, git: str | None = None) -> dict[str, Any]:
        """Expand, resume and submit (or, with dry_run, only say what would run). What reads
        only the spec, the points and their files runs on a worker thread, the loop free
        meanwhile (10,000 points: ~1 s of plan, ~1 s of checks, 3 s of folders written):
        every check that can refuse comes first (a refused sweep leaves no folder behind),
        the jobs are stored after (none starts before its params.json is there)."""
        # One submission at a time from its plan to its commit: another planned while these
        # folders are written (the same sweep again, another into the same results folder)
        # would find the same points not yet queued, and queue them twice. A dry run writes
        # nothing: nothing to wait for.
        async with nullcontext() if request.dry_run else self.service.sweep_submitting:
            planned = await self._planned(request, git)
            points = planned.plan.to_submit
            # A dry run's too, refused as the submission is (it took an --after job not there).
            checked = await self._checked(request, git, planned) if points else None
            if not request.dry_run:
                await self._write_and_commit(request, planned, checked, git)
            return planned.answer

    async def _write_and_commit(
        self, request: SweepRequest, planned: _Planned, checked: CheckedJobs | None, git: str | None
    ) -> None:
        """Write the points' folders, then store the sweep and its jobs; an error of either
        leaves none of the folders it made (a failed write removes them itself). The folders
        are noted until the jobs are stored: a daemon killed meanwhile removes them at its
        next start (sweep_journal.py)."""
        spec, points = planned.spec, planned.plan.to_submit
        journal = journal_for(self.service.home, spec.name) if points else None
        try:
            made = await asyncio.to_thread(write_points, spec, points, git, journal)
            try:
                self._commit(request, planned, checked)
            except Exception:  # refused after all (changed meanwhile): no folder left behind
                await asyncio.to_thread(made.remove)
                raise
        except asyncio.CancelledError:  # (its thread may go on writing: the next start removes)
            raise
        except Exception:
            forget(journal)
            raise
        forget(journal)

    def _commit(
        self, request: SweepRequest, planned: _Planned, checked: CheckedJobs | None
    ) -> None:
        """Store the sweep and its checked jobs, in one durable transaction, unless what the
        loop did while the folders were written refuses them now."""
        spec, plan, answer = planned.spec, planned.plan, planned.answer
        if spec.name in self.service.sweeps_removing:
            raise Conflict(_being_removed(spec.name))
        active = self.store.active_folders()
        if taken := [p.folder for p in plan.to_submit if p.run_dir in active]:
            raise Conflict(
                f"sweep {spec.name!r}: {plural(len(taken), 'point')} ({', '.join(taken[:3])}"
                f"{', ...' * (len(taken) > 3)}) got a queued job while the sweep's folders were"
                " written (a retry, another submission): nothing submitted; submit it again"
            )
        stored = spec_to_dict(spec)
        stored["submission"] = {
            "cwd": request.cwd,
            "git": answer["git"],
            **asdict(request.options),
        }
        with self.store.transaction(durable=True):  # its jobs: acknowledged as stored
            self.store.put_sweep(spec.name, spec.results_dir, stored, self.service.engine.clock())
            if checked is not None:
                submitted = self.service.store_checked(checked)  # (dependencies looked up again)
                answer.update(ids=submitted.ids, cancelled=sorted(submitted.cancelled))
                answer["warnings"] += submitted.warnings()  # points cancelled at once
            self.service.engine.set_sweep_cap(spec.name, request.options.max_parallel)

    async def _checked(
        self, request: SweepRequest, git: str | None, planned: _Planned
    ) -> CheckedJobs:
        """The jobs of the points to submit, made and checked (on worker threads, but for
        what reads the queue: Service.submission_check)."""
        spec, points = planned.spec, planned.plan.to_submit
        items = await asyncio.to_thread(items_of, spec, points, request, git, planned.options)
        named = Batch(len(items), spec.name, [p.folder for p in points])
        return await asyncio.to_thread(self.service.submission_check(items, named))

    async def _planned(self, request: SweepRequest, git: str | None) -> _Planned:
        """The sweep expanded and resumed against its folders and the queue, checked as a
        whole, and the answer it gets (without its ids yet)."""
        spec, seed_chosen = await self._prepare(request)
        request.options.max_parallel = self._cap(spec.name, request.options.max_parallel)
        if wrong := not_a_choice("order", request.options.order, ORDERS):  # (it ran as given)
            raise InvalidValue(wrong)
        if spec.name in self.service.sweeps_removing and not request.dry_run:
            raise Conflict(_being_removed(spec.name))
        refusal = size_refusal(
            spec.name,
            count(spec),
            yes=request.yes,
            action='send "yes": true to submit them all',  # the CLI and Python API check first
            samples='"samples": N',
        )
        if refusal:
            raise InvalidValue(refusal)
        shared = request.options.job_options()  # the same for every point: made once
        # Checked once, as the sweep's: "job 1 of the submission: give hold or begin, not
        # both" blamed one point for every point's options, and a dry run said nothing of it.
        probe = spec_from_item(SubmitItem(command="true", cwd=request.cwd, **shared))
        # Any sweep's folders in use: two sweeps into one results folder share their points'
        # folders, and two jobs running in one folder would write one set of logs and files.
        active = self.store.active_folders()
        runs = folder_runs(self.service.engine)  # (a point whose folder a run writes in runs)
        longest = request.options.order == "longest-first"
        times = self._run_times(spec.name) if longest else None
        points, plan = await asyncio.to_thread(
            planned_points, spec, request.force, active, times, frozenset(runs)
        )
        # Points whose folder holds the end of a run herd.db does not know (unknown_ended.py).
        plan, ended = await self._judged_by_ended_runs(spec.name, plan, request.force)
        # Whether the GPUs could ever run it, judged here so a dry run is refused as the
        # submission is: each point asks for the options alone (its values change none of
        # them). A sweep with nothing to submit (all done) is refused nothing, as before.
        engine = self.service.engine
        never = never_runs(probe, engine.device_listing(), engine.policy, engine.devices.missing())
        if plan.to_submit and never:
            raise InvalidValue(Batch(1, spec.name).never_runs(1, never))
        on_ray = not engine.executor.user_files  # (its jobs run on a cluster's nodes)
        read = await asyncio.to_thread(read_from_points, spec, plan, request, on_ray)
        alike, changed, missing = read
        waiting = waiting_jobs(self.store, spec.name)
        answer: dict[str, Any] = {
            "name": spec.name,
            "results_dir": spec.results_dir,
            "seed": spec.seed,
            "seed_chosen": seed_chosen,
            "points": len(points),
            **plan.counts,
            "ids": [],
            "cancelled": [],  # as a submission's: points cancelled at once (`--after` a failure)
            "git": git,
            "dry_run": request.dry_run,
            "max_parallel": request.options.max_parallel,
            "warnings": [
                *alike,
                *self._warnings(spec, request),
                *changed,
                *waiting_with_other_command(waiting, spec.name, points),
                *waiting_with_other_options(waiting, spec.name, probe, request.options),
                *missing,
                *env_placeholders(spec, request),
                # Both: its points in use now say nothing of the folder shared for good, and
                # once the sweep is stored, moving in is never said again (its resubmission
                # took the other's done points without a word).
                *self._moving_in(spec),
                *plan.shared,
                *not_rerun(plan.unwatched, runs, request.force),
                *ended,
            ],
        }
        if request.dry_run:
            answer["commands"] = [p.command for p in plan.to_submit]
        return _Planned(spec, plan, shared, answer)

    async def _judged_by_ended_runs(
        self, name: str, plan: Plan, force: bool
    ) -> tuple[Plan, list[str]]:
        """The plan with its points judged by runs herd.db does not know that ended in their
        folders, as `sweep status` judges them: not those of a folder a job of the sweep in
        herd.db ran (read only where such a run is found). Only new points (no marker) may be."""
        if not plan.counts["new"]:
            return plan, []
        ended = await asyncio.to_thread(ended_runs, plan.to_submit, plan.there)
        if not ended:
            return plan, []
        known = {folder for _, folder, *_ in self.store.sweep_runs(name)}
        return judged_by_ended_runs(plan, ended, known, force)

    def _cap(self, name: str, given: int | None) -> int | None:
        """The sweep's --max-parallel: as given, else the one it was last submitted with. A
        resubmission that adds points keeps the cap (the points queued before are held to it
        too); dropping it silently let them all start at once. `sweep rm` forgets it."""
        if given is not None:
            if given < 1:  # a cap of 0 would keep every point queued for ever
                raise InvalidValue(
                    f"max_parallel {given}: no point of the sweep could ever start; give 1 or"
                    " more (how many of its points may run at once)"
                )
            return given
        known = self.store.get_sweep(name)
        cap = sweep_table.submission_of(known).get("max_parallel") if known else None
        return cap if isinstance(cap, int) and not isinstance(cap, bool) and cap >= 1 else None

    def _run_times(self, name: str) -> dict[str, float]:
        """How long each point's latest run measured to its end took, by its folder, its
        time paused left out (core/run_time.py: a lost or killed run's is not known)."""
        jobs = [job for job in self.store.sweep_jobs(name) if job.spec.folder and job.ended_at]
        paused = self.store.pause_events([job.id for job in jobs])
        times: dict[str, float] = {}
        for job in jobs:
            start, end = job.started_at or 0.0, job.ended_at
            kind = job.outcome.kind if job.outcome else None
            seconds = measured_run_time(
                start, end, kind, pauses(paused.get(job.id, ()), start, end)[0]
            )
            if job.spec.folder and seconds is not None:
                times[job.spec.folder] = seconds
        return times

    async def _prepare(self, request: SweepRequest) -> tuple[SweepSpec, bool]:
        """The spec with an absolute results_dir and a seed when it needs one (parsed and
        checked on a worker thread: 10,000 values took ~0.1 s)."""
        spec = await asyncio.to_thread(parsed_spec, request)
        seed_chosen = False
        seed = spec.seed
        if spec.needs_seed and seed is None:
            known = self.store.get_sweep(spec.name)
            seed = known.spec.get("seed") if known else None
            if not isinstance(seed, int):  # a new sweep: choose one, and say which
                seed, seed_chosen = secrets.randbelow(2**31), True
        return await asyncio.to_thread(placed_spec, spec, request.cwd, seed), seed_chosen

    def _warnings(self, spec: SweepSpec, request: SweepRequest) -> list[str]:
        """Those of the spec's warnings that read the queue (the others: read_from_points)."""
        warnings = []
        if not request.task and spec.command is not None:
            for key in unused_params(spec.command, spec):
                warnings.append(
                    f"parameter {key!r} does not appear in the command: it only names folders"
                )
        known = self.store.get_sweep(spec.name)
        if known and known.results_dir != spec.results_dir and request.dry_run:
            # (a dry run moves nothing: "from now on they are in" read as done)
            warnings.append(
                f"sweep {spec.name!r} keeps its results in {known.results_dir}; submitted, "
                f"from then on they would be in {spec.results_dir} (use another --name to "
                "keep both)"
            )
        elif known and known.results_dir != spec.results_dir:
            warnings.append(
                f"sweep {spec.name!r} kept its results in {known.results_dir}; "
                f"from now on they are in {spec.results_dir} (use another --name to keep both)"
            )
        return warnings

    def _moving_in(self, spec: SweepSpec) -> list[str]:
        """A warning when the sweep moves into other sweeps' results folder (said once)."""
        known = self.store.get_sweep(spec.name)
        if known and known.results_dir == spec.results_dir:
            return []
        others = [n for n in self.store.sweeps_in(spec.results_dir) if n != spec.name]
        return [_shared_folder(others, spec.results_dir)] if others else []

    # ---- read -----------------------------------------------------------------------------

    def listing(self) -> list[dict[str, Any]]:
        """Every sweep with its points counted by state (`sweep ls`)."""
        return sweep_table.listing(self.store, folder_runs(self.service.engine))

    def table(
        self,
        name: str,
        sort: str | None = None,
        states: Sequence[str] = (),
        limit: int | None = None,
    ) -> dict[str, Any]:
        """The sweep's points: params, state, times and metrics (`sweep status`), and
        `warnings`: what its rows cannot say (points waiting with other job options)."""
        # A point whose folder a run the queue does not know writes in runs (sweep_unwatched).
        # (The daemon's routes read it off the loop: sweep_reads.sweep_status.)
        return full_table(self.store, name, sort, states, limit, folder_runs(self.service.engine))


def _being_removed(name: str) -> str:
    return (
        f"sweep {name!r} is being removed (gpuherd sweep rm): its points counted now would be"
        " gone in a moment; submit it again once the removal is done"
    )


def _shared_folder(others: list[str], results_dir: str) -> str:
    """A sweep moving into the results folder of others (a sweep file's `results_dir` is kept
    whatever --name says): their points of the same values are its points."""
    names = ", ".join(map(repr, others))
    keeps = "keeps its" if len(others) == 1 else "keep their"
    return (
        f"sweep {names} {keeps} results in {results_dir} too: a point of the same values is "
        "one folder for both, done once (--force runs it again, the other's results moved to "
        "its previous-runs/); give another --results-dir to keep them apart"
    )
