"""Rows of the store's tables to and from the core's dataclasses (no SQL runs here)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from gpuherd.core.deps import MEETS
from gpuherd.core.int64 import LARGEST as LARGEST  # (still read from here by config, api)
from gpuherd.core.model import Attempt, Job, JobSpec, Outcome, StopRequest
from gpuherd.core.states import FINISHED_STATES, JobState, OutcomeKind
from gpuherd.errors import StoreError
from gpuherd.store_row_types import NUMBER, found, row_checker

JOB_COLUMNS = (
    "id, name, command, cwd, env_id, env_overrides, gpus, mem, after, retries, timeout, grace,"
    " project, state, priority, position, attempt, created_at, queued_at, started_at, ended_at,"
    " assigned, pid, outcome, exit_code, signal, message, exclusive, ram, oom_retry,"
    " stop_reason, stop_at, stop_requeue, folder, sweep, git, no_output_timeout, kill_on_no_output,"
    " release_at, after_any, only_gpus, retry_delay, output, error, after_fail, max_log_size,"
    " retries_from"
)
UNMET = (
    "NOT ("
    + " OR ".join(
        f"d.kind = '{kind}' AND j.state IN ({', '.join(repr(s.value) for s in sorted(states))})"
        for kind, states in MEETS.items()
    )
    + ")"
)
"""SQL over `deps d JOIN jobs j ON j.id = d.dep`: this dependency still holds its job back
(`--after` waits for a success, `--after-any` for any end, `--after-fail` for a bad end:
core/deps.MEETS, written out)."""
ATTEMPT_COLUMNS = (
    "job_id, number, gpus, gpu_uuids, dir, host, started_at, pid, ended_at,"
    " outcome, exit_code, signal, message, mem, peak_mem, stdout_file, stderr_file,"
    " peak_rss, cpu_time"
)


NEW_JOB_COLUMNS = (
    "id, position, name, command, cwd, env_overrides, gpus, mem, after, after_any, after_fail,"
    " only_gpus, retries, retry_delay, timeout, max_log_size, grace, project, attempt,"
    " exclusive, ram, oom_retry, folder, sweep, git, no_output_timeout, kill_on_no_output,"
    " output, error, state, priority, release_at, env_id, created_at, queued_at"
)
"""A new job's columns: its id and position, then spec_values' and its state, priority and
release (NewJob.values, made with the job: off the loop for a sweep), then what the store
adds as it inserts it (Store.add_jobs)."""


@dataclass(frozen=True)
class NewJob:
    spec: JobSpec
    priority: int = 0
    held: bool = False
    release_at: float | None = None
    """Held until then (`--begin`)."""
    state: JobState = field(init=False, repr=False, compare=False)
    """The state it is stored in: held (until released, or until release_at) or queued."""
    values: tuple[Any, ...] = field(init=False, repr=False, compare=False)
    """Its row's columns but its id, env and times (NEW_JOB_COLUMNS), made with the job: a
    sweep's on its worker thread, not in the transaction that holds the daemon's loop."""

    def __post_init__(self) -> None:
        held = self.held or self.release_at is not None
        state = JobState.HELD if held else JobState.QUEUED
        object.__setattr__(self, "state", state)
        values = (*spec_values(self.spec), state.value, self.priority, self.release_at)
        object.__setattr__(self, "values", values)


def spec_values(spec: JobSpec) -> tuple[Any, ...]:
    """A new job's columns its spec gives (NEW_JOB_COLUMNS from `name` to `error`)."""
    return (
        spec.name,
        spec.command,
        spec.cwd,
        json.dumps(dict(spec.env_overrides)) if spec.env_overrides else "{}",
        spec.gpus,
        spec.mem,
        _id_list(spec.after),
        _id_list(spec.after_any),
        _id_list(spec.after_fail),
        _id_list(spec.only_gpus),
        spec.retries,
        spec.retry_delay,
        spec.timeout,
        spec.max_log_size,
        spec.grace,
        spec.project,
        0,  # attempt
        int(spec.exclusive),
        spec.ram,
        int(spec.oom_retry),
        spec.folder,
        spec.sweep,
        spec.git,
        spec.no_output_timeout,
        int(spec.kill_on_no_output),
        spec.output,
        spec.error,
    )


def _id_list(ids: tuple[int, ...]) -> str:
    # Most jobs have none: four json.dumps of empty lists were a quarter of what storing a
    # job cost (add_jobs of 10,000: 289 -> 205 ms).
    return json.dumps(list(ids)) if ids else "[]"


@lru_cache(maxsize=256)
def gpu_list(values: tuple[int, ...] | tuple[str, ...]) -> str:
    """A few GPUs' indices or UUIDs as JSON: a job's start writes three such lists, of the
    few sets of GPUs a machine has (json.dumps costs ~1 us each)."""
    return json.dumps(list(values))


@lru_cache(maxsize=256)
def set_clause(names: tuple[str, ...]) -> str:
    """`a = ?, b = ?`: the columns an UPDATE sets (the engine's repeat a few shapes)."""
    return ", ".join(f"{name} = ?" for name in names)


def _ids(text: str | None, column: str) -> tuple[int, ...]:
    # Most jobs have no dependencies and hold no GPU: skipping the parser for those is a
    # quarter of what reading a job costs (every tick and every page reads jobs).
    if not text or text == "[]":
        return ()
    ids = json.loads(text)
    if type(ids) is not list or not all(type(one) is int for one in ids):
        raise ValueError(f"{column}: {found(text)}, not a list of whole numbers")
    return tuple(ids)


def _overrides(text: str) -> dict[str, str]:
    overrides = json.loads(text)
    if type(overrides) is not dict or not all(type(v) is str for v in overrides.values()):
        raise ValueError(f"env_overrides: {found(text)}, not an object of texts")
    return overrides


_check_types = row_checker(JOB_COLUMNS)


def job_from_row(r: Sequence[Any], env: Mapping[str, str]) -> Job:
    """The job a row of `jobs` holds. A value no gpuherd writes there (herd.db changed by
    another program) is a StoreError naming the job: the parser's own words (`Expecting
    property name ...`, `'x' is not a valid JobState`) named nothing, at every `ls`, every
    pass of the scheduler and every daemon start. So is a value of another kind than its
    column's (text where a number belongs: store_row_types.py)."""
    try:
        _check_types(r)
        return _job_from_row(r, env)
    except (ValueError, TypeError) as exc:
        raise damaged(f"job {r[0]}'s row", exc) from None


def damaged(row: str, exc: Exception) -> StoreError:
    """A row of herd.db holding what no gpuherd writes (`row`: which), said with the way out."""
    return StoreError(
        f"{row} in herd.db holds a value gpuherd never writes ({exc}): herd.db was changed by"
        " another program; set that value back (sqlite3), or put a backup of herd.db in its"
        " place (`gpuherd daemon backup` makes them)"
    )


def _job_from_row(r: Sequence[Any], env: Mapping[str, str]) -> Job:
    spec = JobSpec(
        name=r[1],
        command=r[2],
        cwd=r[3],
        env=env,
        env_overrides={} if r[5] == "{}" else _overrides(r[5]),
        gpus=r[6],
        mem=r[7],
        after=_ids(r[8], "after"),
        after_any=_ids(r[39], "after_any"),
        only_gpus=_ids(r[40], "only_gpus"),
        retries=r[9],
        retry_delay=r[41],
        timeout=r[10],
        max_log_size=r[45],
        grace=r[11],
        project=r[12],
        exclusive=bool(r[27]),
        ram=r[28],
        oom_retry=bool(r[29]),
        folder=r[33],
        sweep=r[34],
        git=r[35],
        no_output_timeout=r[36],
        kill_on_no_output=bool(r[37]),
        output=r[42],
        error=r[43],
        after_fail=_ids(r[44], "after_fail"),
    )
    return Job(
        id=r[0],
        spec=spec,
        state=JobState(r[13]),
        priority=r[14],
        position=r[15],
        attempt=r[16],
        created_at=r[17],
        queued_at=r[18],
        started_at=r[19],
        ended_at=r[20],
        gpus=_ids(r[21], "assigned"),
        pid=r[22],
        outcome=outcome_from_columns(r[23], r[24], r[25], r[26]),
        stop=None if r[30] is None else _stop(r[30], r[31], r[32]),
        release_at=r[38],
        retries_from=r[46],
    )


def _stop(reason: str, at: float | None, requeue: int) -> StopRequest:
    if at is None:  # (written with its reason, always: when the kill is due counts from it)
        raise ValueError(f"stop_at: NULL, not {NUMBER} (stop_reason is {reason!r})")
    return StopRequest(OutcomeKind(reason), at, bool(requeue))


def attempt_from_row(r: Sequence[Any]) -> Attempt:
    """The attempt a row of `attempts` holds; a value no gpuherd writes there (`gpus` that is
    no JSON list) is a StoreError naming the row, as for a job's (the parser's words alone,
    `Expecting value: line 1 column 1`, ended `daemon start` naming nothing)."""
    try:
        return _attempt_from_row(r)
    except (ValueError, TypeError) as exc:
        raise damaged(f"job {r[0]}'s attempt {r[1]}", exc) from None


def _attempt_from_row(r: Sequence[Any]) -> Attempt:
    return Attempt(
        job_id=r[0],
        number=r[1],
        gpus=tuple(json.loads(r[2])),
        gpu_uuids=tuple(json.loads(r[3])),
        dir=r[4],
        host=r[5],
        started_at=r[6],
        pid=r[7],
        ended_at=r[8],
        outcome=outcome_from_columns(r[9], r[10], r[11], r[12]),
        mem=r[13],
        peak_mem=r[14],
        files=None if r[15] is None else (r[15], r[16]),
        peak_rss=r[17],
        cpu_time=r[18],
    )


def new_attempt_row(attempt: Attempt) -> dict[str, Any]:
    """The columns of a starting attempt's row (how it ends is added as it ends)."""
    files = attempt.files or (None, None)
    return {
        "job_id": attempt.job_id,
        "number": attempt.number,
        "gpus": gpu_list(attempt.gpus),
        "gpu_uuids": gpu_list(attempt.gpu_uuids),
        "dir": attempt.dir,
        "host": attempt.host,
        "started_at": attempt.started_at,
        "pid": attempt.pid,
        "mem": attempt.mem,
        "stdout_file": files[0],
        "stderr_file": files[1],
    }


_SINCE = (  # JobFilter.since
    f"(state NOT IN ({','.join(repr(s.value) for s in sorted(FINISHED_STATES))})"
    " OR COALESCE(ended_at, created_at) >= ?)"
)


@dataclass(frozen=True)
class JobFilter:
    """Which jobs a listing wants, besides their state (`ls --project/--sweep/--name`, and
    `--since/--until`)."""

    project: str | None = None
    sweep: str | None = None
    name: str | None = None
    """A glob on the job's name: `resnet-*`; a name without * ? [ matches itself alone, and
    one with them matches itself too (`exp[v2]`, a name with brackets)."""
    since: float | None = None
    """Epoch seconds: the jobs in the queue at some moment since then, as `sacct -S` picks
    them: not finished (a retry waiting keeps its last end), or ended then or later (a
    finished row without an end, from an older gpuherd, by its submission)."""
    until: float | None = None
    """Epoch seconds: the jobs submitted by then."""
    latest: bool = False
    """Each sweep point's latest job alone (the newest of its sweep and folder), jobs of no
    sweep too: an older run of a point run again since is left out, as `retry` refuses it
    (retry_chain.newer_run). One GROUP BY over the sweeps' jobs, not a lookup per job."""
    ids: tuple[int, ...] | None = None
    """These jobs alone (the dashboard's: a sweep's points' latest jobs, views_jobs)."""

    def clauses(self) -> tuple[list[str], list[Any]]:
        found = [
            (clause, value)
            for clause, value in (
                ("project = ?", self.project),
                ("sweep = ?", self.sweep),
                (_SINCE, self.since),
                ("created_at <= ?", self.until),
                # (as JSON: a sweep's 40,000 ids are more than SQLite's ? of one statement)
                (_IDS, None if self.ids is None else json.dumps(self.ids)),
            )
            if value is not None
        ]
        clauses, values = [clause for clause, _ in found], [v for _, v in found]
        if self.name is not None:  # (the name itself too: `exp[v2]` matched no job so named)
            clauses.append("(name GLOB ? OR name = ?)")
            values += [self.name, self.name]
        return clauses + [_LATEST] * self.latest, values


_IDS = "id IN (SELECT value FROM json_each(?))"  # JobFilter.ids
_LATEST = (  # JobFilter.latest
    "(sweep IS NULL OR folder IS NULL OR id IN (SELECT MAX(id) FROM jobs"
    " WHERE sweep IS NOT NULL AND folder IS NOT NULL GROUP BY sweep, folder))"
)


ANY_JOB = JobFilter()


def filters(states: Sequence[JobState], match: JobFilter = ANY_JOB) -> tuple[str, list[Any]]:
    clauses, args = match.clauses()
    if states:
        clauses.append(f"state IN ({','.join('?' * len(states))})")
        args.extend(s.value for s in states)
    return ("WHERE " + " AND ".join(clauses) if clauses else ""), args


def outcome_columns(outcome: Outcome | None) -> dict[str, Any]:
    if outcome is None:
        return {"outcome": None, "exit_code": None, "signal": None, "message": None}
    return {
        "outcome": outcome.kind.value,
        "exit_code": outcome.exit_code,
        "signal": outcome.signal,
        "message": outcome.message,
    }


@lru_cache(maxsize=1024)
def outcome_from_columns(
    kind: str | None, code: int | None, sig: int | None, msg: str | None
) -> Outcome | None:
    """An Outcome is a value (frozen): the jobs that ended alike share one (a sweep's 40,000
    points cancelled: a tenth of reading them whole, to remove them, was making these)."""
    if kind is None:
        return None
    return Outcome(OutcomeKind(kind), exit_code=code, signal=sig, message=msg)
