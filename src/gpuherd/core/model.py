"""The plain data the whole system talks in: frozen dataclasses, no I/O."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum

# MAX_SLOTS is kept there: the CLI's --slots needs it, not the ~10 ms of these dataclasses
from gpuherd.core.gpu_slots import MAX_SLOTS as MAX_SLOTS
from gpuherd.core.states import JobState, OutcomeKind

DEFAULT_GRACE = 10.0
"""Seconds between SIGTERM and SIGKILL when a job is stopped."""


@dataclass(frozen=True)
class JobSpec:
    """What a user asked for; fixed at submission (priority and order live on Job)."""

    command: str
    cwd: str
    env: Mapping[str, str] = field(default_factory=dict)
    """The submitter's whole environment at submit time (the job sees exactly this)."""
    env_overrides: Mapping[str, str] = field(default_factory=dict)
    """`--env K=V` pairs, applied on top of `env`; recorded so `show` can list them."""
    name: str | None = None
    gpus: int = 1
    mem: int | None = None
    """Bytes of GPU memory needed on each GPU; None = not declared (the job takes a slot).

    May grow between attempts: a job that ran out of memory is retried with more."""
    only_gpus: tuple[int, ...] = ()
    """The GPUs (indices) the job may be placed on (`--only-gpus`); () = any."""
    exclusive: bool = False
    """Run alone on each of its GPUs (set when an out-of-memory retry has no better guess)."""
    ram: int | None = None
    """Bytes of host memory the job needs; None = not declared."""
    oom_retry: bool = False
    """Retry a CUDA out-of-memory failure with a larger memory request."""
    after: tuple[int, ...] = ()
    """Jobs that must succeed first (a bad end of one cancels this job)."""
    after_any: tuple[int, ...] = ()
    """Jobs that must end first, however they end (Slurm's afterany)."""
    after_fail: tuple[int, ...] = ()
    """Jobs that must end without success first (Slurm's afternotok: core/deps.py says
    which ends count); a success of one cancels this job."""
    retries: int = 0
    retry_delay: float | None = None
    """Seconds a failed attempt's automatic retry waits, queued, before it may start."""
    timeout: float | None = None
    """Seconds a single attempt may run before it is stopped with outcome `timeout`."""
    max_log_size: int | None = None
    """Bytes its stdout log or its stderr log may reach before it is stopped with outcome
    `log_too_large` (`--max-log-size`); None = no cap."""
    no_output_timeout: float | None = None
    """Seconds without a byte on stdout or stderr after which the job is flagged as stalled."""
    kill_on_no_output: bool = False
    """Stop a stalled job (outcome `stalled`) instead of only flagging it."""
    grace: float = DEFAULT_GRACE
    project: str | None = None
    folder: str | None = None
    """The job's own folder (a sweep point's results folder); None = gpuherd's default."""
    sweep: str | None = None
    """The sweep this job is a point of."""
    git: str | None = None
    """The git commit of the working directory at submit time, "+dirty" when changed,
    "+unknown" when `git status` could not say (git_commit.py)."""
    output: str | None = None
    """The file stdout goes to (`--output`, absolute, placeholders kept: core/output_files.py),
    and stderr too unless `error` names another; None: the attempt folder's log."""
    error: str | None = None
    """The file stderr goes to (`--error`), as `output`."""


@dataclass(frozen=True)
class Outcome:
    """Why an attempt ended. `exit_code` is set for EXIT (and CUDA_OOM); `signal` for SIGNAL."""

    kind: OutcomeKind
    exit_code: int | None = None
    signal: int | None = None
    message: str | None = None

    @property
    def success(self) -> bool:
        return self.kind is OutcomeKind.EXIT and self.exit_code == 0

    def describe(self) -> str:
        if self.kind is OutcomeKind.EXIT:
            text = f"exit {self.exit_code}"
        elif self.kind is OutcomeKind.SIGNAL:
            text = f"signal {self.signal}"
        else:
            text = self.kind.value
        return f"{text}: {self.message}" if self.message else text


@dataclass(frozen=True)
class StopRequest:
    """gpuherd is stopping the running attempt (kept so a restarted daemon finishes the job)."""

    reason: OutcomeKind
    at: float
    requeue: bool = False


@dataclass(frozen=True)
class Job:
    id: int
    spec: JobSpec
    state: JobState
    priority: int = 0
    position: float = 0.0
    """Order among queued jobs of the same priority (smaller runs first)."""
    attempt: int = 0
    """Number of the current or last attempt; 0 = never started."""
    retries_from: int = 1
    """The attempt its --retries count from: 1, or the one a retry by hand started (each
    such retry gives the job its retries anew, as a new submission would have them)."""
    created_at: float = 0.0
    queued_at: float = 0.0
    """When the queued job could first start: it entered `queued`, then the last job it waited
    for ended and its --retry-delay was over (store_ready.py). A blocked job reserves GPUs once
    it has waited `Policy.reserve_after` since."""
    started_at: float | None = None
    ended_at: float | None = None
    gpus: tuple[int, ...] = ()
    """GPU indices of the current or last attempt."""
    pid: int | None = None
    outcome: Outcome | None = None
    stop: StopRequest | None = None
    release_at: float | None = None
    """A held job's `--begin` time: the engine releases it then (None = held until told).
    A queued job's earliest start after a failure (`--retry-delay`): not placed before."""


def queue_order_key(job: Job) -> tuple[int, float, int]:
    """Dispatch order: priority descending, then position, then id."""
    return (-job.priority, job.position, job.id)


@dataclass(frozen=True)
class Attempt:
    job_id: int
    number: int
    gpus: tuple[int, ...]
    gpu_uuids: tuple[str, ...]
    dir: str
    host: str
    started_at: float
    pid: int | None = None
    ended_at: float | None = None
    outcome: Outcome | None = None
    mem: int | None = None
    """The memory request (per GPU) this attempt ran with."""
    peak_mem: int | None = None
    """The most GPU memory (per GPU) the attempt's processes were seen to use."""
    files: tuple[str, str] | None = None
    """Where its stdout and stderr went, recorded as it started (core/output_files.Files):
    an edit of the job's files or name changes its next attempts' alone. None: begun before
    attempts recorded them, or found in its folder by a restored database."""
    peak_rss: int | None = None
    """HostUsage.peak_rss of the attempt; None where it was not measured."""
    cpu_time: float | None = None
    """HostUsage.cpu_time of the attempt; None where it was not measured."""


@dataclass(frozen=True)
class HostUsage:
    """What an attempt's processes used of the host, as the kernel counted them for the
    process the executor waited for (its job shell) and all that process waited for."""

    peak_rss: int | None
    """Bytes: the largest resident set of any one of those processes (ru_maxrss), not their
    sum: each worker of a data loader counts alone. None: too small to tell, as no larger
    than the spawner's own peak, which the kernel counts in the job shell's."""
    cpu_time: float
    """Seconds of CPU (user + system) of those processes together."""


class DeviceState(StrEnum):
    ENABLED = "enabled"
    DRAINING = "draining"
    """Running jobs finish; nothing new starts here."""


@dataclass(frozen=True)
class Device:
    """One GPU as placement sees it: configuration merged with the probe's reading."""

    index: int
    uuid: str | None = None
    name: str = "GPU"
    slots: int = 1
    """How many jobs may share the GPU when a job without --mem is among them."""
    state: DeviceState = DeviceState.ENABLED
    memory_total: int | None = None
    memory_used: int | None = None
    foreign_processes: int = 0
    """Processes on the GPU that gpuherd did not start."""
    foreign_memory: int = 0
    """Bytes those processes use (0 when the driver does not say)."""
    max_jobs: int | None = None
    """A hard cap on gpuherd jobs on this GPU (`--slots`, a repeated index); None = jobs
    with --mem are bound by memory alone."""
    utilization: int | None = None
    links: Mapping[int, int] = field(default_factory=dict)
    """Link quality to other GPUs by index (higher = faster: NVLink > same PCIe switch)."""
    node: str | None = None
    """The machine the GPU is on (a Ray node id); None = this machine. A job's GPUs are all
    on one node: GPUs without a node count as one more node."""
    host: str | None = None
    """How to show the node to people (its host name); None = the node itself, or local."""


@dataclass(frozen=True)
class Reservation:
    """What a running or paused job holds on each of its GPUs."""

    job_id: int
    gpus: tuple[int, ...]
    mem: int = 0
    """Bytes held per GPU: the larger of the request and the measured use, for its whole life."""
    shares: bool = False
    """Declared --mem: bound by memory, not by a slot."""
    exclusive: bool = False
    project: str | None = None
    """The job's project (what `Policy.project_limits` counts)."""
    run: str | None = None
    """Set for a run the queue does not watch as its job's attempt (a restored herd.db:
    engine_held_runs.py): what it is, as a waiting job's reason names it (core/reasons.py)."""


class ForeignMode(StrEnum):
    """What a GPU's processes that gpuherd did not start mean for placement."""

    AUTO = "auto"
    """The GPU is busy for jobs without --mem; jobs with --mem see only its free memory."""
    MEMORY = "memory"
    """Only their memory counts, for every job."""
    EXCLUSIVE = "exclusive"
    """The GPU is busy for every job."""
    IGNORE = "ignore"
    """They do not count at all."""


@dataclass(frozen=True)
class Policy:
    reserve_after: float = 300.0
    """Seconds a job that does not fit waits (since it could first start: `Job.queued_at`)
    before it reserves GPUs against smaller jobs."""
    max_running: int | None = None
    """Cap on jobs running at once (GPU and CPU-only alike); None = no cap."""
    project_limits: tuple[tuple[str, int], ...] = ()
    """(project, cap): at most that many jobs of the project run at once (pueue's groups)."""
    cpu_jobs: int | None = None
    """Cap on CPU-only jobs (`--gpus 0`) running at once; None = no cap. Such a job holds no
    GPU slot, so without it a sweep of 2,000 CPU-only points would start 2,000 processes."""
    foreign: ForeignMode = ForeignMode.AUTO
    keep_free: float = 0.0
    """Fraction (0-1) of each GPU's memory that placement never hands out."""
    keep_ram: int = 0
    """Bytes of host memory that must stay available after a job's --ram is taken."""
    retries: int = 0
    """The --retries of a job submitted without one (gpulimit's MAX_ERR_TIMES)."""
    grace: float = DEFAULT_GRACE
    """The --grace of a job submitted without one: stored in the job as it is submitted, as
    `retries` is, so that `show` says the grace the job will get."""
    on_end: str | None = None
    """Not placement: the shell command the daemon runs when a job that ran ends (hooks.py)."""
    max_log_size: int | None = None
    """Not placement: the --max-log-size of a job submitted without one (None: no cap)."""


@dataclass(frozen=True)
class Assignment:
    """Placement's answer: start this job on these GPUs."""

    job_id: int
    gpus: tuple[int, ...]
