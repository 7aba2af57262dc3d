"""After a daemon restart: what to do with each job the database says is live, and with a
job whose later attempts ran, or run, although the database does not know them (pure)."""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace

from gpuherd.core.capacity import kind_of, load
from gpuherd.core.lifecycle import Ended
from gpuherd.core.model import Device, DeviceState, HostUsage, Job, Policy, Reservation
from gpuherd.core.states import FINISHED_STATES, Event, JobState, OutcomeKind


@dataclass(frozen=True)
class Observed:
    """What the restarted daemon found of one live job's attempt."""

    pid: int | None
    """From the database, or else from the pid file the job wrote when it started."""
    running: bool
    """`pid` is alive and is this attempt of this job (not a reused pid)."""
    exit_code: int | None = None
    signal: int | None = None
    recorded: bool = False
    """An exit status was recorded in the attempt's folder: its end, unless it is `running`
    (see _action)."""
    ended_at: float | None = None
    outlived: bool = False
    """`pid` has ended (no process has that number now), but processes of its attempt (its
    group, its attempt key) still run: what the job started, still saving after a SIGTERM.
    Looked for only in a job being stopped."""
    last_seen: float | None = None
    booted: float | None = None
    """For an attempt gone with no exit status (lost): its last sign of life and its
    machine's boot, as the executor knows them (lost_end); None where unknown."""


@dataclass(frozen=True)
class Reattach:
    job_id: int
    pid: int


@dataclass(frozen=True)
class Drain:
    """The job was being stopped and its leader has ended, but the processes it started still
    run within the stop's grace period: the job stays running until they end or the grace
    runs out (then they are killed), as if no restart had come between."""

    job_id: int
    pid: int


@dataclass(frozen=True)
class Finish:
    """The job ended while no daemon watched; `exit_code`/`signal` both None = lost."""

    job_id: int
    exit_code: int | None
    signal: int | None
    ended_at: float | None


def lost_end(
    started_at: float | None, last_seen: float | None, booted: float | None, now: float
) -> float:
    """The end recorded for an attempt found gone with no exit status (lost): its last sign
    of life (`last_seen`), so that its run time never counts the time the machine was down,
    or no daemon watched (it may have run on, silent, a little longer: its run time is one it
    is known to have had). Never later than it is known to have ended: the machine's boot,
    where that came after its start (no process outlives a reboot), or else `now`. With no
    sign of life, that bound itself: the boot, or `now` (a cluster's attempt, whose
    machine's boot gpuherd does not know)."""
    bound = now
    if booted is not None and started_at is not None and started_at < booted:
        bound = min(bound, booted)
    end = bound if last_seen is None else min(last_seen, bound)
    if started_at is not None and started_at <= bound:  # (a clock set back meanwhile)
        end = max(end, started_at)
    return end


@dataclass(frozen=True)
class Unstart:
    """The daemon died between recording the start and spawning: nothing ran, queue it again."""

    job_id: int


@dataclass(frozen=True)
class Found:
    """A live attempt of a job later than the database's own (job.attempt): herd.db was
    restored from a backup taken before that attempt started. Its process is verified as
    that attempt of that job of this home, as a re-attached one is."""

    attempt: int
    pid: int
    folder: str
    gpus: tuple[int, ...] | None
    """As the attempt's folder recorded them (attempt.json); None: not recorded."""
    gpu_uuids: tuple[str, ...] = ()
    host: str | None = None
    started_at: float | None = None


@dataclass(frozen=True)
class Ran:
    """A later attempt than the database's own that ran and has ended since (herd.db was
    restored from an older backup), as its folder recorded it. Its start is attempt.json's
    (written a second into it: without one, its GPUs and start are not known). Its end is
    what the daemon that watched it wrote there (why it ended: a kill, a --timeout); else
    the exit status its shell wrote in the `process` file; with neither, it is lost, as an
    attempt the database knows is when its process vanished without a status."""

    attempt: int
    pid: int
    folder: str
    ended_at: float
    exit_code: int | None = None
    signal: int | None = None
    stop_reason: OutcomeKind | None = None
    """gpuherd stopped it (killed, timeout, stalled), as its attempt.json says."""
    gpus: tuple[int, ...] = ()
    gpu_uuids: tuple[str, ...] = ()
    host: str | None = None
    started_at: float | None = None
    peak: int = 0
    """The most GPU memory it was seen to use on one GPU, while a daemon watched it (a run
    its job was held for: engine_held_runs.py); 0: not measured (read from its folder)."""
    usage: HostUsage | None = None
    """Its host memory peak and CPU time, as the daemon that watched its end wrote them in
    its attempt.json; None: not measured."""

    @property
    def ended(self) -> Ended:
        return Ended(self.exit_code, self.signal, self.stop_reason)


@dataclass(frozen=True)
class Take:
    """Record `ran` as the job's attempt, from its folder. `superseded`: a later attempt of
    the job ran after it, so the job goes back to the queue whatever its outcome (never
    through a final state, which would cancel the jobs waiting for it); else the job's state
    follows from its outcome, as when a watched attempt ends (retried per --retries...)."""

    job_id: int
    ran: Ran
    superseded: bool


@dataclass(frozen=True)
class CatchUp:
    """What a restart makes of the attempts of a job past the database's own that ran."""

    takes: tuple[Take, ...] = ()
    """Those that ended, in order: each recorded as the attempt it was."""
    runs: Found | None = None
    """The latest, which runs: adopted or held (take_over) once `takes` are recorded."""
    aside: tuple[Found, ...] = ()
    """Earlier ones that run still, beside the latest: not the job's run (the job was
    released while each ran), but a run of it all the same, which holds GPUs: each watched,
    its GPUs reserved, and recorded as an attempt of the job when it ends."""

    def __bool__(self) -> bool:
        return bool(self.takes) or self.runs is not None

    def first(self) -> str:
        """The first of these attempts, as the event that supersedes the job's own says."""
        if self.takes:
            return f"attempt {self.takes[0].ran.attempt} ran"
        return f"attempt {self.runs.attempt} runs" if self.runs else "none"

    def latest(self) -> int:
        """The number of the latest of these attempts: the one that decides the job."""
        return self.runs.attempt if self.runs else self.takes[-1].ran.attempt


def catch_up(job_id: int, later: Sequence[Ran | Found]) -> CatchUp:
    """`later`: the attempts past the database's own whose folders record a run of the job,
    in order. The latest one decides: if it runs, it is taken over, and those before it that
    ended are recorded first; if it ended, the job's state follows from it. An attempt that
    runs while a later one ran is not the job's run (released while it ran), but runs on its
    GPUs all the same: set `aside`, to be watched until it ends (before, it was left alone,
    unwatched, and its GPUs given to other jobs while it ran)."""
    if not later:
        return CatchUp()
    last = later[-1]
    takes = tuple(Take(job_id, r, superseded=r is not last) for r in later if isinstance(r, Ran))
    aside = tuple(r for r in later[:-1] if isinstance(r, Found))
    return CatchUp(takes, last if isinstance(last, Found) else None, aside)


def back_to_queue(state: JobState) -> Event | None:
    """The event that puts a job back in the queue before a later attempt of it is taken
    as its own (None: it is queued): the user's own verbs, which a restore undid."""
    if state is JobState.HELD:
        return Event.RELEASE
    return Event.RETRY if state in FINISHED_STATES else None


@dataclass(frozen=True)
class Supersede:
    """The database's attempt of a live job has ended (`ended`: Finish; Unstart if it never
    started) and a later one ran or runs: that attempt's end is recorded and the job goes
    back to the queue, from where the later ones are taken (never a second run, nor a final
    state that would cancel the jobs waiting for this one)."""

    job_id: int
    ended: Finish | Unstart


Action = Reattach | Drain | Finish | Unstart | Supersede


def reconcile(
    live: list[Job],
    observed: dict[int, Observed],
    now: float,
    later: Collection[int] = (),
) -> list[Action]:
    """`later`: the jobs whose later attempts ran or run (see catch_up)."""
    actions: list[Action] = []
    for job in live:
        seen = observed.get(job.id, Observed(pid=None, running=False))
        action = _action(job, seen, now)
        if isinstance(action, Finish | Unstart) and job.id in later:
            action = Supersede(job.id, action)
        actions.append(action)
    return actions


def _action(job: Job, seen: Observed, now: float) -> Action:
    if seen.outlived and seen.pid is not None and in_grace(job, now):
        return Drain(job.id, seen.pid)
    # Alive first: an `exit N` line in the attempt's folder is no end while its verified
    # process runs. The job may have written it (the file is in its own folder), or its shell
    # wrote it and is about to exit; re-attached, its end is read when it comes: the shell's
    # own line, written last, is the one read.
    if seen.running and seen.pid is not None:
        return Reattach(job.id, seen.pid)
    if seen.recorded:
        return Finish(job.id, seen.exit_code, seen.signal, seen.ended_at)
    if seen.pid is None:
        return Unstart(job.id)
    return Finish(job.id, None, None, seen.ended_at)


@dataclass(frozen=True)
class Adopt:
    """Watch the found attempt as the job's running one, on the GPUs it recorded."""

    job_id: int
    found: Found


@dataclass(frozen=True)
class Hold:
    """The found attempt cannot be adopted (`why`): hold the job, so that it is not started
    a second time while that process runs, unwatched."""

    job_id: int
    found: Found
    why: str


def take_over(
    waiting: Sequence[tuple[Job, Found]],
    devices: Sequence[Device],
    held: Sequence[Reservation],
    policy: Policy,
) -> list[Adopt | Hold]:
    """For each queued, held or finished job whose later attempt runs: adopt it where its
    recorded GPUs are this daemon's and have room beside what runs there (`held`, and the
    attempts adopted before it), else hold the job."""
    taken = list(held)
    decided: list[Adopt | Hold] = []
    for job, found in waiting:
        why = _not_adoptable(job, found, devices, taken, policy)
        if why is not None:
            decided.append(Hold(job.id, found, why))
            continue
        decided.append(Adopt(job.id, found))
        taken.append(reservation(job, found.gpus or ()))
    return decided


def reservation(job: Job, gpus: tuple[int, ...], peak: int = 0) -> Reservation:
    """What a process of the job holds on `gpus`: its --mem, or what it was seen to use if
    more (`peak`)."""
    spec = job.spec
    return Reservation(
        job.id,
        gpus,
        max(spec.mem or 0, peak),
        shares=spec.mem is not None,
        exclusive=spec.exclusive,
        project=spec.project,
    )


def _not_adoptable(
    job: Job,
    found: Found,
    devices: Sequence[Device],
    taken: Sequence[Reservation],
    policy: Policy,
) -> str | None:
    if found.gpus is None:
        return "its folder does not record its GPUs (no attempt.json)"
    known = {d.index for d in devices}
    absent = [i for i in found.gpus if i not in known]
    if absent:
        return f"{_named(absent)} {_be(absent)} not among this daemon's GPUs"
    # Foreign processes are left out: the found attempt's own processes on its GPUs count as
    # another user's until it is adopted. A draining GPU keeps what runs on it.
    mine = [
        replace(d, state=DeviceState.ENABLED, foreign_processes=0, foreign_memory=0)
        for d in devices
        if d.index in found.gpus
    ]
    room = {g.index: g for g in load(mine, taken, policy)}
    kind = kind_of(job.spec)
    busy = [i for i in found.gpus if i not in room or not room[i].fits(kind, job.spec.mem)]
    if not busy:
        return None
    holders = sorted({r.job_id for r in taken if set(r.gpus) & set(busy)})
    by = f" by job {', '.join(map(str, holders))}" if holders else ""
    return f"{_named(busy)} {_be(busy)} taken{by}"


def unwatched(attempt: int, pid: int) -> str:
    """How a held job's hold event begins when the attempt it names runs unwatched."""
    return f"attempt {attempt} runs already (pid {pid}, unwatched)"


def running_unwatched(attempt: int, pid: int) -> str:
    """A run that its job's hold named (`unwatched`), while it runs: what a waiting job's
    reason says a GPU is reserved for."""
    return f"attempt {attempt} runs unwatched (pid {pid})"


def runs_unwatched(attempt: int, pid: int, state: JobState = JobState.HELD) -> str:
    """What `ls` says of a job held while that run of it runs unwatched, and `gpuherd gpus`
    of the run whatever its job's state (released or cancelled while it runs)."""
    return f"{state.value}: {running_unwatched(attempt, pid)}"


_UNWATCHED = re.compile(r"attempt (\d+) runs already \(pid (\d+), unwatched\)")
UNWATCHED_LIKE = "attempt % runs already (pid %, unwatched)%"
"""`unwatched`'s words as an SQL LIKE pattern: the hold events that name such a run."""


def unwatched_run(hold_detail: str) -> tuple[int, int] | None:
    """(attempt, pid) of the unwatched run a hold event names (`unwatched`), else None."""
    found = _UNWATCHED.match(hold_detail)
    return (int(found[1]), int(found[2])) if found else None


def run_decides(state: JobState, latest_hold: str | None, run: tuple[int, int]) -> bool:
    """Whether a run that its job was held for (`run`: attempt, pid), which has ended, is
    taken as the job's attempt, the job's state following from its end (as from an attempt
    a daemon watched: a finished run never runs again): only while the job is still held
    for it, its latest hold naming it. A job the user released or cancelled meanwhile, or
    held again, keeps its state: that verb came after the hold said what the run was, and
    is the user's answer (a release asked for another run, a kill for none). The run is
    then recorded as an attempt of the job, and no more."""
    return state is JobState.HELD and latest_hold is not None and unwatched_run(latest_hold) == run


def _named(indices: Sequence[int]) -> str:
    return ("GPU " if len(indices) == 1 else "GPUs ") + ", ".join(map(str, indices))


def _be(indices: Sequence[int]) -> str:
    return "is" if len(indices) == 1 else "are"


def in_grace(job: Job, now: float) -> bool:
    """The job is being stopped and the SIGKILL its stop has due is still to come."""
    return job.stop is not None and now < kill_due(job)


def kill_due(job: Job) -> float:
    """When the stop of `job` (which has one) has its SIGKILL due: the stored stop time is
    set so that this holds however often (and with whatever --grace) the stop was asked."""
    assert job.stop is not None
    return job.stop.at + job.spec.grace
