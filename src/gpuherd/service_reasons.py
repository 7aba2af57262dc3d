"""Why a job is not running: what `ls`, `show`, the dashboard and `logs` say of a queued job
(waiting for what), a held one (why, or until when) and a running one (stopping, stalled).
Read by `Service` (service.py) once per listing."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial

from gpuherd.core.gpu_unknown import unknown_only_gpus
from gpuherd.core.idspec import format_ids
from gpuherd.core.lifecycle import HELD_UNSTARTED, stop_said
from gpuherd.core.model import Device, Job, JobSpec, Reservation
from gpuherd.core.reasons import Refusal, shape_waits
from gpuherd.core.reasons_never import GPUS_FLAG
from gpuherd.core.recovery import runs_unwatched, unwatched_run
from gpuherd.core.states import LIVE_STATES, JobState
from gpuherd.core.units import format_given
from gpuherd.core.waiting import Fits, Shape, shape_of, worded
from gpuherd.core.when import format_moment
from gpuherd.devices import DeviceTable
from gpuherd.engine import TELEMETRY_MAX_AGE, Engine
from gpuherd.host_room import HostMemory
from gpuherd.store import Store
from gpuherd.submission import never_runs, never_runs_judge


def explainer(
    engine: Engine, holds: Mapping[int, str] | None = None
) -> Callable[[Job], str | None]:
    """Why each queued job is not running yet (what it reads computed once per listing), and
    what `_other_reason` says of the others. `holds`: the listed held jobs' latest hold
    events (store.hold_details); without it, each held job's is read when asked."""
    store = engine.store
    devices = engine.device_listing()
    reservations = engine.reservations()
    paused = engine.queue_paused
    host = engine.devices.host_memory(TELEMETRY_MAX_AGE, engine.attempts.live.values())
    caps = engine.sweep_caps
    sweeps_running = engine.attempts.sweeps_running()
    now = engine.clock()
    missing = engine.devices.missing()
    shapes = _ByShape(engine, devices, reservations, host, missing)
    begins = _Begins(store)

    def explain(job: Job) -> str | None:
        if job.state is not JobState.QUEUED:
            return _other_reason(engine, job, now, holds)
        if engine.stopping:
            return "daemon stopping: starts after the next `gpuherd daemon start`"
        # No pass gets as far as this job, or none starts anything (a cluster away).
        if failing := engine.health.reason() or engine.devices.outage():
            return failing
        said = shapes.of(job.spec)
        if said.never:  # before any other wait: this one never ends
            return _never_here(job.id, said.never)
        if job.spec.after or job.spec.after_any or job.spec.after_fail:
            unmet = store.unmet_deps(job.id)
            if unmet:
                return _waiting_for(unmet) + _stuck_among(unmet, begins.of(unmet), now)
        if job.release_at is not None:
            when, delay = format_moment(job.release_at, now), job.spec.retry_delay or 0
            return f"retrying at {when} (--retry-delay {format_given(delay)})"
        if paused:
            return "queue paused"
        sweep = job.spec.sweep
        if sweep in caps and sweeps_running[sweep] >= caps[sweep]:
            return f"waiting: sweep {sweep} runs {caps[sweep]} at a time (--max-parallel)"
        return shapes.waits(job, said)

    return explain


@dataclass(slots=True)
class _Said:
    """What a queued job's shape alone says of it."""

    shape: Shape
    never: Refusal | None
    """Why a job of it can never run on the GPUs there are now (refused at submit, yet
    queued: a GPU it needed was removed since); the shape holds all that never_runs reads."""
    waits: str | Fits | None = None
    """What it waits for, nothing else holding it back (shape_waits), once a job gets there."""


class _ByShape:
    """What the GPUs, their load and the jobs ahead say of a queued job: worked out once per
    shape (a sweep's points all ask alike) and looked up once per job (its hash, with an
    enum in it, is no small part of a job's wording), and per job only the part that is its
    own (worded in full, ~10 µs a job: 1 s of `ls --json` of 100,000 queued jobs)."""

    def __init__(
        self,
        engine: Engine,
        devices: Sequence[Device],
        reservations: Sequence[Reservation],
        host: HostMemory,
        missing: Sequence[Device],
    ) -> None:
        self._engine, self._devices, self._reservations = engine, devices, reservations
        self._host, self._missing = host, missing
        self._policy, self._hold = engine.policy, engine.hold  # as the listing began
        self._said: dict[Shape, _Said] = {}
        # Whose `gpus add` a way out may name (a `gpuherd run` lists no reasons).
        self._unused = seen_unused(engine.devices)

    def of(self, spec: JobSpec) -> _Said:
        shape = shape_of(spec)
        if (said := self._said.get(shape)) is None:
            never = never_runs(spec, self._devices, self._policy, self._missing, self._unused)
            said = self._said[shape] = _Said(shape, never)
        return said

    def waits(self, job: Job, said: _Said) -> str:
        if said.waits is None:
            said.waits = shape_waits(
                said.shape,
                self._devices,
                self._reservations,
                self._policy,
                self._host.room,
                self._missing,
                self._hold,
                self._host.held,
            )
        ahead = partial(self._engine.scan.ahead, job)  # beyond what placement read?
        return worded(said.waits, job.id, ahead)


def _other_reason(
    engine: Engine, job: Job, now: float, holds: Mapping[int, str] | None
) -> str | None:
    """What `ls` says of a held job (why, or until when), or a running one (stopping,
    stalled, on a GPU lost or removed since it started)."""
    if job.state is JobState.HELD:
        if job.release_at is None:
            return _held_reason(engine, job, holds)
        return f"held until {format_moment(job.release_at, now)} (--begin)"
    if job.state not in LIVE_STATES:
        return None
    live = engine.live.get(job.id)
    limit = job.spec.no_output_timeout
    if live and live.stop_reason:
        return f"stopping ({stop_said(live.stop_reason, live.requeue)})"
    if live and live.stalled and limit:
        return f"stalled: no output for over {format_given(limit)}"
    if gone := engine.devices.gone(job.gpus):  # (`show` says more, on its gpus line)
        return "; ".join(f"GPU {g['index']} {_GONE[g['state']]}" for g in gone)
    return None


_GONE = {
    "lost": "lost (the probe no longer sees it)",
    "removed": "removed (gpus remove)",
    "unconfigured": "not configured (not among the GPUs the daemon started with)",
}
"""What `ls` says of a running job's GPU that went: lost, removed by `gpus remove`, or left
out of the GPUs a later `daemon start` gave (it said `removed (gpus remove)`)."""


def _held_reason(engine: Engine, job: Job, holds: Mapping[int, str] | None) -> str:
    """`held`; for a job held because an attempt herd.db did not know runs unwatched (a
    restored backup: engine_held_runs.hold), that attempt, and the GPUs reserved for it.
    The daemon watches every such run from its start (engine_held_runs.watch_held_runs)
    until it ends, so it knows, asking no one (a cluster's head may be away): one it no
    longer watches has ended, and is still named until its end is recorded (the engine
    tries again while herd.db refuses it: engine_held_runs.record_held_ends)."""
    detail = (engine.store.hold_details([job.id]) if holds is None else holds).get(job.id)
    if detail and detail.startswith(HELD_UNSTARTED):
        return "held: paused while starting, and the start failed"
    run = unwatched_run(detail) if detail else None
    if run is None:
        return "held"
    attempt, pid = run
    held = engine.attempts.held_runs.get((job.id, attempt))
    if held is not None and held.pid == pid:
        reserved = held.reservation.gpus if held.reservation else ()
        gpus = f", GPU {format_ids(reserved)} reserved for it" if reserved else ""
        return runs_unwatched(attempt, pid) + gpus
    ended = engine.attempts.held_ends.get((job.id, attempt))
    if ended is not None and ended.pid == pid:
        return (
            f"held: attempt {attempt} (pid {pid}) ran unwatched and has ended, its end not "
            "recorded yet: the daemon tries again every second while herd.db refuses it "
            "(gpuherd daemon log)"
        )
    return (
        f"held: attempt {attempt} (pid {pid}) ran unwatched and has ended, but recording "
        "its end failed (gpuherd daemon log): a restart of the daemon records it"
    )


def _waiting_for(unmet: Sequence[tuple[int, str, str]]) -> str:
    """`waiting for job 12`, `waiting for jobs 3-7,9`, `waiting for job 12 to fail` (its
    `--after-fail`), `waiting for job 3, and for job 12 to fail`, from the (id, state, kind)
    of the jobs it waits for."""
    ends = [i for i, _, kind in unmet if kind != "after_fail"]
    fails = [i for i, _, kind in unmet if kind == "after_fail"]
    said = [_jobs(ids, end) for ids, end in ((ends, ""), (fails, " to fail")) if ids]
    return "waiting for " + ", and for ".join(said)


def _jobs(ids: Sequence[int], to: str) -> str:
    """`job 12`, `jobs 3-7,9`, with `to` (` to fail`): as the verbs name jobs. A sweep's
    summary (`--after-any` of every point) listed each of its hundreds of ids; past a few
    ranges, the count and the first ones (`gpuherd show` lists them all)."""
    if len(ids) == 1:
        return f"job {ids[0]}{to}"
    runs = format_ids(ids).split(",")
    if len(runs) <= _RANGES_SHOWN:
        return f"jobs {','.join(runs)}{to}"
    return f"{len(ids):,} jobs{to}: {','.join(runs[:_RANGES_SHOWN])},…"


_RANGES_SHOWN = 4


class _Begins:
    """The `--begin` times of held jobs others wait for, read once per listing (a sweep's
    points waiting for one held job ask for it 1,000 times)."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._known: dict[int, float | None] = {}

    def of(self, unmet: Sequence[tuple[int, str, str]]) -> dict[int, float]:
        """The held ones' of `unmet` (id, state, kind) that have one, by id."""
        held = [i for i, state, _ in unmet if state == JobState.HELD.value]
        if unread := [i for i in held if i not in self._known]:
            jobs = self._store.get_jobs(unread)
            self._known.update((i, jobs[i].release_at if i in jobs else None) for i in unread)
        return {i: at for i in held if (at := self._known[i]) is not None}


def _stuck_among(
    unmet: Sequence[tuple[int, str, str]], begins: Mapping[int, float], now: float
) -> str:
    """What lets a job waiting for held or paused ones run (neither ends by itself): else
    `waiting for job 19` read as if job 19 would end by itself. ` (held: gpuherd release 19)`,
    ` (paused: gpuherd resume 19)`, or both kinds, `; `-separated; '' when none is. One held
    until its --begin time (`begins`, by id) starts by itself then: ` (held until 23:59)`,
    the last of them (it said `held: gpuherd release 20`, which starts it now)."""
    held = [i for i, state, _ in unmet if state == JobState.HELD.value]
    paused = [i for i, state, _ in unmet if state == JobState.PAUSED.value]
    timed = [i for i in held if i in begins]
    until = f"held until {format_moment(max(begins[i] for i in timed), now)}" if timed else ""
    said = [
        _among([i for i in held if i not in begins], len(unmet), JobState.HELD, "release"),
        _among(timed, len(unmet), JobState.HELD, None, until),
        _among(paused, len(unmet), JobState.PAUSED, "resume"),
    ]
    return f" ({'; '.join(s for s in said if s)})" if any(said) else ""


def _among(
    stuck: Sequence[int], waited_for: int, state: JobState, verb: str | None, said: str = ""
) -> str:
    """`held: gpuherd release 19` when all are so, `jobs 3,9 held: gpuherd release 3,9` when
    some; past a few ranges, `ls --state held` lists them; '' for none. `said`: the words of
    their state (its name); without a `verb`, nothing to do: `jobs 3,9 held until 23:59`."""
    if not stuck:
        return ""
    ids, said = format_ids(stuck), said or state.value
    every = len(stuck) == waited_for
    if len(ids.split(",")) > _RANGES_SHOWN:
        some = "all" if every else f"{len(stuck):,} of them"
        return f"{some} {said}" + (f": gpuherd ls --state {state.value}" if verb else "")
    way = f": gpuherd {verb} {ids}" if verb else ""
    if every:
        return f"{said}{way}"
    return f"{'job' if len(stuck) == 1 else 'jobs'} {ids} {said}{way}"


def _never_here(job_id: int, reason: Refusal) -> str:
    """Why a queued job cannot run on the GPUs there are now, and what to do: else it sits in
    the queue until a GPU it needs comes back. First, where GPUs seen but not in use would let
    it run, their `gpus add` (the fewest that do: each of four unused GPUs was named, where
    one was enough); then the `edit` that asks for what there is, with what it takes where
    the reason knows it (`--gpus 2`), else its own way out stays in the reason."""
    add = "; ".join(f"gpuherd gpus add {index}" for index in reason.add)
    lets = "lets" if len(reason.add) == 1 else "let"  # (`gpus add 1; gpus add 2 let it run`)
    edit = f"gpuherd edit {job_id} {reason.edit}" if reason.edit else f"gpuherd edit {job_id}"
    what = f"{reason.what}: {reason.way}" if reason.way and not reason.edit else reason.what
    return (
        f"can never run {reason.where}: {what} "
        f"({f'{add} {lets} it run, ' if add else ''}{edit} to ask for what there is, "
        f"or gpuherd rm {job_id})"
    )


def configured_gpus(engine: Engine) -> set[int]:
    """The GPUs gpuherd has, as a submission's refusals count them (never_runs): those it
    uses, and those configured but not seen now (they may come back)."""
    return {d.index for d in [*engine.device_listing(), *engine.devices.missing()]}


def unknown_gpus_named(engine: Engine, jobs: Iterable[tuple[int, JobSpec]]) -> list[str]:
    """A warning per --only-gpus of these jobs (id, spec) that names GPUs gpuherd does not
    have, beside some it has (core/gpu_unknown.py), as a submission and an edit warn of it;
    configured ones not seen now count, and those the probe sees get their `gpus add`."""
    named = [(job_id, spec.only_gpus) for job_id, spec in jobs if spec.only_gpus]
    if not named:
        return []
    devices = engine.devices
    configured = configured_gpus(engine)
    return unknown_only_gpus(named, configured, devices.unused(), devices.on_cluster)


def refusals(engine: Engine) -> Callable[[JobSpec], str | None]:
    """Why a job a submission or an edit asks for could never run here (never_runs_judge),
    on the GPUs gpuherd has and those lost for now, naming the `gpus add` of GPUs seen but
    not used that would let it run (not in a `gpuherd run`: it has no `gpus add`, its GPUs
    are those its --gpus gives, and a job's count is its --gpus-per-job)."""
    devices = engine.devices
    one_shot = engine.layout.one_shot
    unused = [] if one_shot else seen_unused(devices)
    flag = "--gpus-per-job" if one_shot else GPUS_FLAG
    listing = engine.device_listing()
    return never_runs_judge(listing, engine.policy, devices.missing(), unused, flag)


def seen_unused(devices: DeviceTable) -> list[Device]:
    """The GPUs the probe sees that gpuherd does not use (removed, or never added), as `gpus
    add` would give them: enabled, with a slot."""
    return [devices.unlisted(index)[0] for index in devices.unused()]
