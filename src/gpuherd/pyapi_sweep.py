"""A sweep's handle in the Python API: what its submission did, waiting for its points, and
its results table (`Herd.sweep()` and a task's `sweep()` answer one; pyapi.py)."""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable, Mapping, Sequence
from datetime import timedelta
from typing import TYPE_CHECKING, Any

import click

from gpuherd.cli.job_refs import filtered
from gpuherd.core.metrics_unread import unread_line
from gpuherd.core.states import FINISHED_STATES
from gpuherd.core.sweep import is_sweep_name, no_such_sweep
from gpuherd.core.sweep_env import worded_for_file, worded_for_python
from gpuherd.core.sweep_verdict import WAITED_FOR, unsucceeded, waited_for
from gpuherd.errors import HerdError, NotFound
from gpuherd.pyapi_checks import (
    deadline_after,
    log_numbers,
    refuse_other_daemon,
    refuse_unknown,
    still_unfinished,
)
from gpuherd.pyapi_jobs import JobList
from gpuherd.pyapi_notebook import SHOWN_ROWS as _SHOWN_POINTS
from gpuherd.pyapi_notebook import quick, sweep_table, wait_interrupted
from gpuherd.pyapi_stuck import warn_stuck
from gpuherd.pyapi_types import WrongType, as_given, check_types
from gpuherd.pyapi_values import SUBMIT_OPTIONS, non_finite, plain
from gpuherd.pyapi_verbs import kill_options
from gpuherd.sweep_wait import waited_despite_removals

if TYPE_CHECKING:
    from gpuherd.pyapi import Herd
    from gpuherd.sweepfile_options import SubmitOptions

SWEEP_OWN = frozenset(
    {"name", "samples", "seed", "shuffle", "fixed", "force", "yes", "dry_run", "cwd", "order"}
)
"""A sweep's own keywords, besides results_dir and the job options: Herd.sweep's, and a
task's sweep's (there also `sweep_` and its name, for a function with a parameter so named)."""


class SweepWarning(UserWarning):
    """What a sweep's submission warns of (a changed results folder, points that ran with
    other fixed values, values that read alike): shown once, as Python warnings are."""


class Sweep:
    """A handle on a sweep: what the last submission did, waiting, and the results table."""

    def __init__(self, herd: Herd, name: str, answer: dict[str, Any] | None) -> None:
        self.herd = herd
        self.name = name
        self.submission = answer or {}
        """The daemon's answer: counts (new, rerun_failed, skipped_done, ...), ids, seed."""

    @classmethod
    def existing(cls, herd: Herd, name: Any) -> Sweep:
        """`Herd.get_sweep(name)`: NotFound at once for a name no sweep has, in the daemon's
        words (a handle on no sweep failed only when used, far from the misspelt name)."""
        if not isinstance(name, str):
            raise WrongType(f"a sweep's name is text (herd.get_sweep('lr-grid')), got {name!r}")
        if not is_sweep_name(name):  # ('a/b', ''): the daemon would not even route it
            raise NotFound(no_such_sweep(name))
        sweep = cls(herd, name, None)
        sweep.status(limit=1)  # raises NotFound for no such sweep
        return sweep

    def __repr__(self) -> str:
        if not self.submission:
            return f"<gpuherd.Sweep {self.name}>"
        words = {
            "new": "new",
            "rerun_failed": "failed rerun",
            "rerun_done": "done rerun (force)",
            "skipped_done": "done skipped",
            "skipped_active": "already queued or running skipped",
        }
        counts = ", ".join(
            f"{self.submission.get(k, 0)} {w}"
            for k, w in words.items()
            if k != "rerun_done" or self.submission.get(k)
        )
        return f"<gpuherd.Sweep {self.name}: {counts}>"

    def _repr_html_(self) -> str | None:
        """What a notebook shows: its points as a table (`status()`), with what the last
        submission did; None (the repr instead) if the daemon cannot say."""
        from urllib.parse import quote

        path = f"/sweeps/{quote(self.name, safe='')}"
        try:  # (asked as status() asks, waiting seconds, not 60 s, for a hung daemon)
            status = dict(quick(self.herd.client).get(path, limit=_SHOWN_POINTS))
        except HerdError:
            return None
        submitted = repr(self).partition(":")[2].rstrip(">")
        return sweep_table(status, f"; submitted:{submitted}" if submitted else "")

    @property
    def ids(self) -> list[int]:
        """The ids of the jobs this submission made (its new and rerun points), in order;
        [] for a dry run and for get_sweep()'s handle. `jobs()`: every point's latest job."""
        return [int(i) for i in self.submission.get("ids", [])]

    def jobs(self) -> JobList:
        """Handles on the jobs of the sweep's points (each point's latest job, done ones too),
        by id: `for job in herd.as_completed(sweep.jobs())`. A point never submitted has none.
        Each has its `snapshot`, its row of one listing of the sweep's jobs (as herd.jobs()'
        have: a repr with its name and state, not `<gpuherd.Job 7>` alone)."""
        ids = self._job_ids()
        listed = {job.id: job for job in self.herd.jobs(sweep=self.name, all=True)}
        jobs = JobList(listed.get(job_id) or self.herd.job(job_id) for job_id in ids)
        for job in jobs:
            job.seen = True  # (ids the daemon answered)
        return jobs

    def _job_ids(self) -> list[int]:
        """The ids of jobs()' handles, sorted: each point's latest job, and this submission's
        jobs, read from the points' table alone."""
        points = (row.get("job_id") for row in self._table()["rows"])
        return sorted({*self.ids, *(int(job_id) for job_id in points if job_id is not None)})

    def waited_on(self, herd: Herd) -> list[int]:
        """`herd.wait(sweep)`'s jobs: the ids of jobs()' handles, without their listing (of
        40,000 points' jobs, each worded, ~1.5 s of the wait only to be read for their ids).
        Refused, as jobs()' handles were, for a sweep of another daemon than `herd`'s."""
        ids = self._job_ids()
        if ids:  # (the first handle's words: "job 7 is of the daemon of ...")
            refuse_other_daemon(self.herd.job(ids[0]), herd, "wait()")
        return ids

    def kill(self, grace: float | str | timedelta | None = None) -> dict[int, str]:
        """Stop every unfinished job of the sweep (queued and held ones cancelled, running
        and paused ones stopped), as `JobList.kill(grace)` does, in one request after one
        listing: what the daemon said of each, by id ({} if none was unfinished). Its
        finished points are left out, so the answer names only what was stopped."""
        kill_options(grace)  # refused before the listing: nothing asked, nothing sent
        return self._jobs_in(["queued", "held", "running", "paused"]).kill(grace)

    def hold(self) -> dict[int, str]:
        """Hold the sweep's queued jobs (`release()` lets them run), in one request."""
        return self._jobs_in(["queued"]).hold()

    def release(self) -> dict[int, str]:
        """Release the sweep's held jobs, in one request."""
        return self._jobs_in(["held"]).release()

    def _jobs_in(self, states: list[str]) -> JobList:
        """The sweep's jobs in `states`, as one listing names them (`herd.jobs`), by their ids
        alone: the listing of 40,000 points' jobs, each job worded, took seconds to make and
        to read, for a verb that sends their ids."""
        answer = self.herd.client.get("/jobs", sweep=self.name, state=states, ids_only=True)
        try:  # (a daemon without the filter lists every job: not to kill)
            filtered(answer, {"sweep": self.name})
        except click.ClickException as exc:
            raise HerdError(exc.message) from None
        # (A daemon from before ids_only answers with the listing.)
        found = answer["ids"] if "ids" in answer else [job["id"] for job in answer["jobs"]]
        return JobList(self.herd.job(job_id) for job_id in found)

    @property
    def commands(self) -> list[str]:
        """With dry_run: the commands that would have been submitted."""
        return list(self.submission.get("commands", []))

    def status(
        self, sort: str | None = None, state: Sequence[str] = (), limit: int | None = None
    ) -> dict[str, Any]:
        """The results table (`gpuherd sweep status NAME --json`): with `state`, only the
        points in those states; with `limit`, the first `limit` (after sorting)."""
        return self._table(sort, state, limit, paths=True)

    def _table(
        self,
        sort: str | None = None,
        state: Sequence[str] = (),
        limit: int | None = None,
        paths: bool = False,
    ) -> dict[str, Any]:
        """status(); each point's `job_dir` and `log_files` only with `paths` (a read of
        every point's job, which wait() and jobs() need not wait for)."""
        from urllib.parse import quote

        path = f"/sweeps/{quote(self.name, safe='')}"
        if sort is not None and not isinstance(sort, str):  # (5 was "cannot sort by '5'")
            raise WrongType(f"sort is {_SORT}, got {as_given(sort)}")
        states = [state] if isinstance(state, str) else _states(state)
        limit = log_numbers(limit=limit)["limit"]  # (as jobs()': not in pydantic's words)
        query = {"sort": sort, "state": states, "limit": limit, "paths": paths or None}
        try:
            return dict(self.herd.client.get(path, **query))
        except NotFound:
            if not self.submission.get("dry_run"):
                raise
            raise NotFound(  # (it said "no sweep named 'x'" of the handle just answered)
                f"sweep {self.name!r} was a dry run (dry_run=True): nothing was submitted, so "
                "it has no points to wait for or results; submit it without dry_run"
            ) from None

    def results(
        self, sort: str | None = None, state: Sequence[str] = (), limit: int | None = None
    ) -> list[dict[str, Any]]:
        """One row per point: params, state, metrics (the task's return value, or what the
        command wrote to metrics.json, with its values as they were), folder, …; `sort`,
        `state` and `limit` as for status(): `results("-acc", limit=5)`, the best five."""
        rows = list(self.status(sort, state, limit)["rows"])
        for row in rows:  # NaN and the infinities travel as text (JSON has no such numbers)
            row["metrics"] = {k: non_finite(v) for k, v in row["metrics"].items()}
        if said := unread_line(rows, "each row's metrics_error says why"):  # (else: {}, unsaid)
            warnings.warn(said, UserWarning, stacklevel=2)
        return rows

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until no point is queued, running or paused; True if all are done, as `gpuherd
        sweep wait` exits 0 (core/sweep_verdict.py). As `gpuherd wait`, held points are not
        waited for: they wait for a release (see herd.wait); nor are they done. A point whose
        job is removed meanwhile (`gpuherd rm`) is judged by its folder, as one with no job
        left (it raised NotFound, `no job 7`: sweep_wait.py). A WaitWarning first says which
        points cannot end by themselves (the queue or a job paused: pyapi_stuck.py)."""
        deadline = deadline_after(timeout)
        ids = self._waited_ids()
        try:
            warn_stuck(self.herd.client, ids)  # (a paused queue: said, not a silent hang)
            waited = waited_despite_removals(self.herd.client, ids, self._waited_ids, deadline)
        except KeyboardInterrupt:  # (as herd.wait says it)
            raise wait_interrupted(ids) from None
        if not waited.done:
            busy = [i for i, state in waited.states.items() if state not in FINISHED_STATES]
            raise still_unfinished(timeout or 0, busy, len(waited.states))
        return not unsucceeded(self._table()["rows"])  # (read again: the ends waited for)

    def _waited_ids(self) -> list[int]:
        """The jobs wait() waits for: its points' queued, running or paused, and this
        submission's jobs that are no point's latest job now (a later submission narrowed the
        grid) and have not ended: they still write to the results folder. Not one removed
        (`gpuherd rm`): the daemon knows it no longer, and a wait for it raised NotFound."""
        rows = self._table()["rows"]
        listed = {row["job_id"] for row in rows}
        outside = {i for i in self.ids if i not in listed}
        if outside:
            states = list(WAITED_FOR)
            answer = self.herd.client.get("/jobs", sweep=self.name, state=states, ids_only=True)
            # (A daemon from before ids_only answers with the listing.)
            found = answer["ids"] if "ids" in answer else [j["id"] for j in answer["jobs"]]
            outside &= {int(i) for i in found}
        return sorted({*waited_for(rows), *outside})


_SORT = "a column's name as text ('-val_acc': descending; None: the points' order)"


def _states(state: Any) -> list[str]:
    """status()'s `state`: a list of state names (a name alone is taken above); 5 raised
    Python's bare "'int' object is not iterable", and [5] was "unknown state '5'"."""
    if isinstance(state, Iterable) and not isinstance(state, bytes | Mapping):
        names = list(state)
        if all(isinstance(name, str) for name in names):
            return names
    raise WrongType(
        "state is a state's name or a list of them ('failed', ['failed', 'missing']; "
        f"(): every point), got {as_given(state)}"
    )


def bare_command_refusal(herd: Herd, command: str) -> str:
    """Why `herd.sweep(command)` is refused: a command with no placeholder and no params
    (core.sweep_names.is_bare_command), most often a sweep's name; if a sweep has that name,
    how to open it (asked of the daemon only here, on the way to refusing)."""
    refusal = (
        f"sweep({command!r}) needs a command template with {{placeholders}} and params "
        "(herd.sweep('python train.py --lr {lr}', {'lr': [0.1, 0.01]})), or a sweep file"
    )
    try:
        known = any(sweep["name"] == command for sweep in herd.sweeps())
    except HerdError:
        known = False  # the daemon went away: the refusal stands without the hint
    if known:
        refusal += f"; to open the existing sweep {command!r}: herd.get_sweep({command!r})"
    return refusal


def check_keywords(given: Iterable[str], own: Mapping[str, Any]) -> None:
    """TypeError for a keyword Herd.sweep does not take, naming the closest of all it takes:
    `result_dir` was refused naming only the job options, neither results_dir nor dry_run
    (and `param=` guessed `ram`: its own arguments, given by keyword, are taken too).
    WrongType for one of its `own` arguments (None: not given) of the wrong kind, before
    anything is sent: `samples="5"` raised Python's "'<' not supported between ...",
    `shuffle="no"` shuffled, `force="yes"` was refused in pydantic's words, `results_dir=5`
    made a folder named 5, `fixed=[1]` raised "cannot convert dictionary update sequence"."""
    refuse_unknown(given, SUBMIT_OPTIONS | SWEEP_OWN | {"results_dir", "command", "params"})
    check_types({key: plain(value) for key, value in own.items()})  # (a numpy seed is one)
    folder, fixed = own.get("results_dir"), own.get("fixed")
    if folder is not None and not isinstance(folder, str | os.PathLike):
        raise WrongType(f"results_dir is a folder (text or a Path), got {as_given(folder)}")
    if fixed is not None and not isinstance(fixed, Mapping):
        raise WrongType(
            f"fixed is a dict of names to values ({{'epochs': 10}}), got {as_given(fixed)}"
        )


def over_file(
    options: SubmitOptions, given: dict[str, Any]
) -> tuple[dict[str, Any], str | None, str]:
    """A sweep file's options with the keywords `given` over them (sweepfile_options.
    kept_options), `env` name by name; and the file's `cwd` and `order` (Herd.sweep's own
    arguments, given apart)."""
    from gpuherd.sweepfile_options import kept_options

    kept = kept_options(options, [key for key in given if key != "env"])
    cwd, order = kept.pop("cwd"), kept.pop("order")
    env = given.get("env") or {}  # (not a dict: left for submit to refuse, in its words)
    env = {**kept["env"], **env} if isinstance(env, Mapping) else env
    return {**kept, **given, "env": env}, cwd, order


def file_env(options: SubmitOptions, given: Mapping[str, Any]) -> dict[str, str]:
    """The sweep file's `env` entries that an `env=` `given` leaves standing: the points get
    them as the file wrote them, and a warning of one is worded for the file (its `env` and
    `command` keys: core/sweep_env.worded_for_file), not for a `--env` never given."""
    env = given.get("env")
    replaced = env if isinstance(env, Mapping) else {}
    return {key: value for key, value in options.env.items() if key not in replaced}


def env_worded(
    warnings: Iterable[str],
    command: str | None,
    source: str,
    env_of_file: Mapping[str, str],
    env: object,
) -> list[str]:
    """A sweep's `warnings` with those of an env value naming a placeholder in the words of
    where it was given: the sweep file's `env` (`env_of_file`, `source` its name) or env=
    (`env`; `source` also "template" or "spec", where the command is changed)."""
    if env_of_file:
        warnings = worded_for_file(warnings, command, source, env_of_file)
    given = env if isinstance(env, Mapping) else {}
    texts = {key: value for key, value in given.items() if isinstance(value, str)}
    return worded_for_python(warnings, command, texts, source)
