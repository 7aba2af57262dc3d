"""Request and response shapes shared by the HTTP API, the client and the CLI.

Plain dataclasses (no pydantic import) so the CLI starts fast; FastAPI validates them on the
server side. The API only ever adds fields. The bodies of the API's other requests are in
gpuherd.wire_requests (`gpuherd run` never needs them).
"""

from __future__ import annotations

from collections.abc import Iterable
from copy import copy
from dataclasses import asdict, dataclass, field, fields
from typing import Annotated, Any

from gpuherd.core.model import Attempt, Device, Job, Outcome
from gpuherd.core.retry_budget import oom_retries, retries_to_come
from gpuherd.core.states import WAITING_STATES, JobState


class _StrictOnTheServer:
    """Annotated metadata that pydantic alone reads (the CLI never imports it): the field
    takes a JSON number or true/false as it is, never text nor the other kind (`"gpus": "2"`,
    `"gpus": true`, `"hold": "yes"` were taken, and a client's mistake passed for a request)."""

    def __get_pydantic_core_schema__(self, source: Any, handler: Any) -> Any:
        return {**handler(source), "strict": True}


class _FromOneOnTheServer:
    """Annotated metadata (pydantic's alone, as _StrictOnTheServer) for a job id in a body:
    from 1 up, refused otherwise as a value no job can have (422). `"after": [-3]` was looked
    up and answered 404 (`no job -3`), as if the job might have been there; `{"ids": [0]}` to
    a verb answered one 404 result."""

    def __get_pydantic_core_schema__(self, source: Any, handler: Any) -> Any:
        from pydantic_core import PydanticCustomError, core_schema

        def from_one(value: int) -> int:
            if value < 1:
                raise PydanticCustomError(
                    "job_id", "job ids are whole numbers from 1 up, got {value}", {"value": value}
                )
            return value

        return core_schema.no_info_after_validator_function(from_one, handler(source))

    def __get_pydantic_json_schema__(self, schema: Any, handler: Any) -> Any:
        return {**handler(schema), "minimum": 1}


_STRICT = _StrictOnTheServer()
Int = Annotated[int, _STRICT]
JobId = Annotated[int, _STRICT, _FromOneOnTheServer()]
"""A job's id in a request's body (`ids`, `after`, a move's `before`)."""
Float = Annotated[float, _STRICT]
"""A number; an integer is one too (`"timeout": 60`)."""
Bool = Annotated[bool, _STRICT]

REFUSE_UNKNOWN_FIELDS = {"extra": "forbid"}
"""Every request body's pydantic config: a misspelt field (`"gpu": 2`) is refused, not
dropped, or the request would be carried out as not asked. (A plain dict: pydantic reads it,
and the CLI does not import pydantic.)"""


@dataclass(kw_only=True)
class JobOptions:
    """How a job is to run, as `submit` takes it: what SubmitItem and SweepOptions share."""

    env_overrides: dict[str, str] = field(default_factory=dict)
    gpus: Int = 1
    only_gpus: list[Int] = field(default_factory=list)
    """The GPUs (indices) the job may be placed on (`--only-gpus`); empty = any."""
    mem: Int | None = None
    ram: Int | None = None
    oom_retry: Bool = False
    exclusive: Bool = False
    """Each of the job's GPUs to itself (`--exclusive`): no other gpuherd job shares them."""
    priority: Int = 0
    after: list[JobId] = field(default_factory=list)
    after_any: list[JobId] = field(default_factory=list)
    """Jobs to wait for however they end (`--after-any`)."""
    after_fail: list[JobId] = field(default_factory=list)
    """Jobs to wait for the failure of (`--after-fail`): a success of one cancels the job."""
    retries: Int | None = None
    """None: the daemon's `config retries` (0 unless set)."""
    retry_delay: Float | None = None
    """Seconds an automatic retry waits before it may start (`--retry-delay`)."""
    timeout: Float | None = None
    max_log_size: Int | None = None
    """Bytes its stdout or stderr log may reach (`--max-log-size`); 0: no cap; None: the
    daemon's `config max-log-size` (no cap unless set)."""
    grace: Float | None = None
    """Seconds from SIGTERM to SIGKILL when stopped; None: the daemon's `config grace` (10
    s unless set)."""
    no_output_timeout: Float | None = None
    kill_on_no_output: Bool = False
    project: str | None = None
    hold: Bool = False
    begin: Float | None = None
    """Epoch seconds: the job is held until then (`--begin`), then queued."""
    output: str | None = None
    """The file stdout (and stderr, without `error`) goes to (`--output`; relative to `cwd`;
    placeholders %j, %a, %x, %%: core/output_files.py)."""
    error: str | None = None
    """The file stderr goes to (`--error`)."""

    def job_options(self) -> dict[str, Any]:
        """These options alone (not a subclass's), as keywords; lists and dicts copied."""
        return {f.name: copy(getattr(self, f.name)) for f in fields(JobOptions)}


@dataclass(kw_only=True)
class SubmitItem(JobOptions):
    __pydantic_config__ = REFUSE_UNKNOWN_FIELDS

    command: str
    cwd: str
    env: dict[str, str] | None = field(default_factory=dict)
    """The job's whole environment; None (or empty) = the batch's (SubmitRequest.env)."""
    name: str | None = None
    folder: str | None = None
    """The job's own folder (absolute); a sweep point's results folder."""
    sweep: str | None = None
    git: str | None = None


@dataclass
class ActionResult:
    id: int
    ok: bool
    message: str
    left: bool = False
    """Removed, but not all its files: its message names those left, why, and what to do.
    (Not ok, since what was asked is not all done; a field, so that no client reads the
    message's words to tell it from a refusal.)"""
    status: int | None = None
    """Of a refusal, the HTTP status of its error (422 InvalidValue, 409 Conflict, 404
    NotFound): the Python API raises the class a request on the job alone raised (`edit`
    raised a plain HerdError where `submit` raised InvalidValue for one value)."""

    def to_wire(self) -> dict[str, Any]:
        """As an answer carries it; `left` and `status` only when set, so the 20,000
        answers of a sweep's verb carry no field they all lack."""
        said: dict[str, Any] = {"id": self.id, "ok": self.ok, "message": self.message}
        if self.status is not None:
            said["status"] = self.status
        return {**said, "left": True} if self.left else said


OVER_MEM_FACTOR = 1.2
"""A job seen using more than this times its --mem is flagged."""


def over_mem(mem: int | None, peak: int | None) -> bool:
    return bool(mem and peak and peak > mem * OVER_MEM_FACTOR)


def job_view(
    job: Job, reason: str | None = None, peak_mem: int | None = None, for_a_run: bool = False
) -> dict[str, Any]:
    """The JSON form of a job in listings (`ls --json`). A waiting job has no GPUs, also one
    an older gpuherd stored with its last attempt's (its attempts keep theirs), and no pid: a
    retry waiting its --retry-delay kept its failed attempt's, as if that process ran (its
    attempt and its `spawn` event keep it); but one held `for_a_run` that a restored herd.db
    did not know (engine_held_runs.hold) has that run's GPUs and pid.
    (engine.move stores no GPUs for a job it makes wait; this is for the rows it did not
    write, until a migration clears them: only the hold events tell a held run's apart.)
    Nor has a waiting job a run's start, end or outcome: a retry waiting its --retry-delay
    kept its failed attempt's, as if that were how the job runs or ended (a `retry` by hand
    clears them in the store; the attempts keep theirs). A job cancelled (only a waiting one
    is) never ran as that job either: no pid, as no start (the cancel clears started_at);
    one cancelled while it waited out its --retry-delay showed its failed attempt's pid, a
    process long gone whose number the system may have given to another."""
    waiting = job.state in WAITING_STATES and not for_a_run
    never_ran = waiting or job.state is JobState.CANCELLED
    return {
        "id": job.id,
        "name": job.spec.name,
        "state": job.state.value,
        **outcome_view(None if waiting else job.outcome),
        "gpus": [] if waiting else list(job.gpus),
        "gpus_requested": job.spec.gpus,
        "only_gpus": list(job.spec.only_gpus),
        "mem": job.spec.mem,
        "exclusive": job.spec.exclusive,
        "ram": job.spec.ram,
        "peak_mem": peak_mem,
        "over_mem": over_mem(job.spec.mem, peak_mem),
        "pid": None if never_ran else job.pid,
        "attempt": job.attempt,
        "retries": job.spec.retries,
        "retries_left": retries_to_come(job),
        "oom_retries": oom_retries(job.spec) if job.spec.oom_retry else None,
        "retry_delay": job.spec.retry_delay,
        "retry_at": job.release_at if job.state is JobState.QUEUED else None,
        "timeout": job.spec.timeout,
        "max_log_size": job.spec.max_log_size,
        "no_output_timeout": job.spec.no_output_timeout,
        "kill_on_no_output": job.spec.kill_on_no_output,
        "grace": job.spec.grace,
        "priority": job.priority,
        "project": job.spec.project,
        "sweep": job.spec.sweep,
        "git": job.spec.git,
        "after": list(job.spec.after),
        "after_any": list(job.spec.after_any),
        "after_fail": list(job.spec.after_fail),
        "command": job.spec.command,
        "cwd": job.spec.cwd,
        "output": job.spec.output,
        "error": job.spec.error,
        "begin": job.release_at if job.state is JobState.HELD else None,
        "created_at": job.created_at,
        "started_at": None if waiting else job.started_at,
        "ended_at": None if waiting else job.ended_at,
        "reason": reason,
    }


def outcome_view(outcome: Outcome | None) -> dict[str, Any]:
    """How a job or an attempt ended, as its JSON form has it (none: it has not ended)."""
    return {
        "outcome": outcome.kind.value if outcome else None,
        "exit_code": outcome.exit_code if outcome else None,
        "signal": outcome.signal if outcome else None,
        "message": outcome.message if outcome else None,
    }


def over_ram(ram: int | None, peak_rss: int | None) -> bool:
    """An attempt's largest process alone had more resident memory than the job's --ram:
    the kernel's exact count, so without --mem's margin (OVER_MEM_FACTOR)."""
    return bool(ram and peak_rss and peak_rss > ram)


def attempt_view(attempt: Attempt, ram: int | None = None) -> dict[str, Any]:
    """An attempt's JSON form (`show --json`); `ram`: its job's --ram, that `over_ram`
    compares its host memory peak with."""
    view = asdict(attempt)
    del view["files"]  # (as `log_files`, the paths the service makes of them: Service.show)
    view.update(
        gpus=list(attempt.gpus),
        gpu_uuids=list(attempt.gpu_uuids),
        **outcome_view(attempt.outcome),
        over_mem=over_mem(attempt.mem, attempt.peak_mem),
        over_ram=over_ram(ram, attempt.peak_rss),
    )
    return view


def device_view(
    device: Device, runs: Iterable[tuple[int, int]], processes: list[Any]
) -> dict[str, Any]:
    """A GPU as GET /gpus has it. `runs`: the (job id, attempt) of each run on it, running
    attempts and the runs that jobs were held for (a restored herd.db); a job has two where
    its held run and its next attempt share the GPU. `jobs` names each job once, `runs` each
    run, with its attempt: each takes a slot (SLOTS counts them, as placement does)."""
    view = asdict(device)
    view["state"] = device.state.value
    view["links"] = {str(k): v for k, v in device.links.items()}
    ordered = sorted(set(runs))
    view["jobs"] = sorted({job for job, _ in ordered})
    # `job_id`, as every other answer names a job; `job` too, as older daemons named it
    view["runs"] = [{"job": job, "job_id": job, "attempt": attempt} for job, attempt in ordered]
    view["processes"] = [asdict(p) for p in processes]
    return view


def from_dict(cls: type[Any], data: dict[str, Any]) -> Any:
    """Build a wire dataclass from JSON, ignoring fields a newer peer added."""
    names = {f.name for f in fields(cls)}
    return cls(**{k: v for k, v in data.items() if k in names})
