"""The plain data the whole system talks in: frozen dataclasses, no I/O."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum

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
    """Bytes of GPU memory needed on each GPU; None = not declared."""
    after: tuple[int, ...] = ()
    retries: int = 0
    timeout: float | None = None
    """Seconds a single attempt may run before it is stopped with outcome `timeout`."""
    grace: float = DEFAULT_GRACE
    project: str | None = None


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
class Job:
    id: int
    spec: JobSpec
    state: JobState
    priority: int = 0
    position: float = 0.0
    """Order among queued jobs of the same priority (smaller runs first)."""
    attempt: int = 0
    """Number of the current or last attempt; 0 = never started."""
    created_at: float = 0.0
    queued_at: float = 0.0
    """When the job last entered `queued`; a blocked job reserves GPUs after a bounded wait."""
    started_at: float | None = None
    ended_at: float | None = None
    gpus: tuple[int, ...] = ()
    """GPU indices of the current or last attempt."""
    pid: int | None = None
    outcome: Outcome | None = None


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
    state: DeviceState = DeviceState.ENABLED
    memory_total: int | None = None
    memory_used: int | None = None
    foreign_processes: int = 0
    """Processes on the GPU that gpuherd did not start."""


@dataclass(frozen=True)
class Reservation:
    """What a running or paused job holds: its GPUs, and memory per GPU."""

    job_id: int
    gpus: tuple[int, ...]
    mem: int = 0


@dataclass(frozen=True)
class Policy:
    reserve_after: float = 300.0
    """Seconds a job that does not fit waits before it reserves GPUs against smaller jobs."""
    max_running: int | None = None
    """Cap on jobs running at once (GPU and CPU-only alike); None = no cap."""


@dataclass(frozen=True)
class Assignment:
    """Placement's answer: start this job on these GPUs."""

    job_id: int
    gpus: tuple[int, ...]
