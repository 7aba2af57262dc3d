"""The Python API's job listing and its verbs on jobs and on the queue (pyapi.py's `Herd` and
`Job` take them from here): `herd.jobs(...)` as `gpuherd ls`, `job.retry()`, `hold()`,
`release()`, `pause()`, `resume()`, `remove()`, `kill()`, `move()` and `priority()` as the
CLI's verbs of those names (`remove` is `rm`), `herd.pause()` and `herd.resume()` as
`gpuherd pause` and `resume` without ids; a listing's `kill()`, `hold()`, `release()` and
`retry()` on all its jobs in one request (pyapi_verbs.py). Each is a call to the endpoint the
CLI calls; what it is given is checked here first, in one line."""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Never, SupportsIndex, cast, overload

import click

from gpuherd.cli.job_refs import filtered
from gpuherd.core.int64 import TOO_LARGE
from gpuherd.core.listing_filters import empty_filter
from gpuherd.core.when import parse_since, window_refusal
from gpuherd.errors import Conflict, HerdError, InvalidValue
from gpuherd.pyapi_checks import job_number, log_numbers, refuse_other_home, refuse_unknown
from gpuherd.pyapi_notebook import jobs_table, jobs_text, pretty_jobs
from gpuherd.pyapi_types import WrongType, WrongValue, as_given, check_types
from gpuherd.pyapi_values import plain
from gpuherd.pyapi_verbs import act_on, kill_options, retry_action

if TYPE_CHECKING:
    from pathlib import Path

    from gpuherd.client import Client
    from gpuherd.pyapi import Herd, Job, ListedJob

_AS_LS = "as `gpuherd ls --{}` takes it ('2d', 'yesterday', '2026-11-20')"


class JobList(list["Job"]):
    """`herd.jobs()`'s handles (a list, as it always was), with `more`: how many more jobs
    matched but were left out, as `gpuherd ls` says "… and N more" (0: none was); and the
    verbs `kill()`, `hold()`, `release()` and `retry()` on all its jobs in one request (as
    `gpuherd kill 3 4 5`), each answering a dict of what the daemon said of each job, by id,
    in the list's order: {7: "cancelled", 8: "already ended (succeeded)"}. Nothing raises for
    what a job's state refused, nor for a job removed meanwhile ("no job 8: ..." is its
    answer); an empty list sends nothing and answers {}."""

    def __init__(self, jobs: Iterable[Job] = (), *, more: int = 0) -> None:
        super().__init__(jobs)
        self.more = more

    def kill(self, grace: float | str | timedelta | None = None) -> dict[int, str]:
        """`job.kill(grace)` for every job, in one request: the unfinished ones are stopped
        or cancelled, a finished one answers "already ended (succeeded)"."""
        return act_on(self, "kill", kill_options(grace))

    def hold(self) -> dict[int, str]:
        """Hold every queued job (the others answer why not), in one request."""
        return act_on(self, "hold", {})

    def release(self) -> dict[int, str]:
        """Release every held job, in one request."""
        return act_on(self, "release", {})

    def retry(self, hold: bool = False) -> dict[int, str]:
        """`job.retry(hold)` for every job, in one request: the finished ones run again."""
        return act_on(self, retry_action(hold), {})

    def pause(self) -> dict[int, str]:
        """Pause every running job (SIGSTOP; their GPUs stay reserved), in one request."""
        return act_on(self, "pause", {})

    def resume(self) -> dict[int, str]:
        """Resume every paused job (SIGCONT), in one request."""
        return act_on(self, "resume", {})

    def rm(self) -> dict[int, str]:
        """`job.remove()` for every job, in one request, as `gpuherd rm`: waiting ones are
        cancelled, finished ones forgotten with their folders; a running one answers why
        not (kill it first). (Not `remove`: that is the list's own, `list.remove(job)`.)"""
        return act_on(self, "rm", {})

    # What a notebook shows: each job's id, name and state as listed (its snapshot), with
    # no call to the daemon per job; a table where HTML is rendered.
    def _listed(self) -> list[tuple[int, dict[str, Any] | None]]:
        return [(job.id, job.snapshot) for job in self]

    def __repr__(self) -> str:
        return jobs_text(self._listed(), self.more)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:  # (IPython's printer)
        pretty_jobs(self._listed(), self.more, printer)

    def _repr_html_(self) -> str:
        return jobs_table([row or {"id": job_id} for job_id, row in self._listed()], self.more)


class ListedJobs(JobList):
    """`herd.jobs()`' JobList, of ListedJob handles: a type checker sees each as one, with
    its `snapshot` (`for job in herd.jobs(): job.snapshot["exit_code"]`, `jobs[0]`), and the
    listing is still a `list[Job]` (a JobList) to code that names it so."""

    def __iter__(self) -> Iterator[ListedJob]:
        return cast("Iterator[ListedJob]", super().__iter__())

    @overload
    def __getitem__(self, index: SupportsIndex) -> ListedJob: ...
    @overload
    def __getitem__(self, index: slice) -> list[Job]: ...
    def __getitem__(self, index: SupportsIndex | slice) -> ListedJob | list[Job]:
        return cast("ListedJob | list[Job]", super().__getitem__(index))


class JobListing:
    """Part of `Herd`: its jobs, as `gpuherd ls` lists them, and the queue's pause."""

    client: Client

    def jobs(
        self,
        state: str | Iterable[str] | None = None,
        *,
        project: str | None = None,
        sweep: str | None = None,
        name: str | None = None,
        since: datetime | timedelta | float | str | None = None,
        until: datetime | timedelta | float | str | None = None,
        all: bool = False,
        limit: int | None = None,
        **misspelt: Never,
    ) -> ListedJobs:
        """Handles on the jobs `gpuherd ls --json` lists, in its order: without `all`,
        `state`, `since` or `until`, the unfinished jobs and the latest finished ones.
        `state` is a state's name or a list of them; `project`, `sweep` and `name` (a name, or
        a pattern like 'resnet-*') as `ls` takes them; `since` and `until` a datetime (naive:
        local time), epoch seconds, a timedelta (that long ago, as "2d"), or text as `ls
        --since` takes it ("2d", "yesterday", "2026-11-20"): the jobs in the queue in that
        window, finished ones too; `limit` as `ls --limit`: N waiting jobs (besides the
        running and latest finished ones) in the default listing, N jobs and every running
        one otherwise. Each handle's `snapshot` is the job's row in the listing (its state
        then); `info()` asks the daemon again. A list, whose `more` says how many more jobs
        matched but were left out (by `limit`), as `ls` says "… and N more"."""
        if misspelt:  # (`Never`: a type checker refuses them too) Python's error named none
            import inspect  # (only on this error path)

            known = frozenset(inspect.signature(JobListing.jobs).parameters) - {"self", "misspelt"}
            refuse_unknown(misspelt, known, "jobs() takes no keyword {!r}; it takes")
        match = {"project": project, "sweep": sweep, "name": name}
        for key, text in match.items():
            _text_filter(key, text)
        window = {"since": _moment("since", since), "until": _moment("until", until)}
        if refusal := window_refusal(window["since"], window["until"], time.time(), _WINDOW):
            raise InvalidValue(refusal)
        if not isinstance(all, bool):
            raise WrongType(
                f"all is True (every job, finished ones too) or False, got {as_given(all)}"
            )
        every = all or any(moment is not None for moment in window.values())  # as ls
        query = {**match, **window, "state": _states(state), "all": every or None}
        answer = self.client.get("/jobs", **query, **log_numbers(limit=limit))
        try:
            filtered(answer, {**match, **window})
        except click.ClickException as exc:  # a daemon older than a filter: it listed all
            raise HerdError(exc.message) from None
        _warn_of(answer)
        from gpuherd.pyapi import ListedJob  # (pyapi's Job, which imports this module)

        herd = cast("Herd", self)  # (only Herd takes this part)
        listed = (ListedJob(herd, row) for row in answer["jobs"])
        return ListedJobs(listed, more=int(answer.get("more", 0)))

    def pause(self) -> str:
        """Pause the queue's dispatch, as `gpuherd pause` without ids: nothing new starts;
        running jobs go on (`job.pause()` stops one). What the daemon did."""
        return str(self.client.post("/queue/pause")["message"])

    def resume(self) -> str:
        """Let the queue start jobs again, as `gpuherd resume` without ids."""
        return str(self.client.post("/queue/resume")["message"])


_WINDOW = ("since", "until")


def _text_filter(key: str, value: Any) -> None:
    check_types({key: value})
    if refusal := empty_filter(key, value, key, f"None for jobs of any {key}"):
        raise InvalidValue(refusal)


def _states(state: Any) -> list[str]:
    """`state` as the listing's query takes it: a name, or a list of names (the daemon says
    which names there are)."""
    if state is None:
        return []
    names = [state] if isinstance(state, str) else state
    if isinstance(names, Iterable) and not isinstance(names, bytes | Mapping):
        names = list(names)
        if all(isinstance(name, str) for name in names):
            if not names:  # (a filter of nothing would list as ls does: not what was meant)
                raise InvalidValue(f"state is empty: give {_STATES}")
            return names
    raise WrongType(f"state is {_STATES}, got {as_given(state)}")


_STATES = "a state's name or a list of them ('failed', ['queued', 'held']; None: as `gpuherd ls`)"


def _moment(key: str, value: Any) -> float | None:
    """`since` or `until` in epoch seconds: a datetime (naive: local time), a number of
    epoch seconds, a timedelta (that long ago), or text as `ls --since` takes it."""
    if value is None:
        return None
    if isinstance(value, timedelta):  # as "2d" (and "-2d") is: that long ago, its sign aside
        return time.time() - abs(value.total_seconds())
    if isinstance(value, str):
        try:
            return parse_since(value, time.time(), key)
        except ValueError as exc:
            raise InvalidValue(str(exc)) from None
    if isinstance(value, datetime):
        try:
            return value.timestamp()
        except (ValueError, OverflowError, OSError):  # datetime(1, 1, 1) in some time zones
            raise InvalidValue(
                f"{key} {value} is beyond the clock: give a moment from 1970 to the year 9999"
            ) from None
    value = plain(value)
    wanted = f"a datetime, epoch seconds, a timedelta (that long ago), or text {_AS_LS.format(key)}"
    if isinstance(value, int | float) and not isinstance(value, bool):
        if not math.isfinite(value):
            raise InvalidValue(f"{key} {value!r} is no moment: give {wanted}")
        return float(value)
    raise WrongType(f"{key} is {wanted}, got {as_given(value)}")


class JobActions:
    """Part of `Job`: the CLI's verbs on one job. Each answers what the daemon said for the
    job: what was done, or why nothing was (as `gpuherd kill 7` prints it, without `job 7: `
    on an answer of what was done); NotFound if there is no such job."""

    herd: Herd
    id: int
    snapshot: dict[str, Any] | None = None
    """The job's row in the listing that made this handle (`herd.jobs()`): its fields as
    `gpuherd ls --json` gives them, as they were then. None for a handle from elsewhere."""

    def kill(self, grace: float | str | timedelta | None = None) -> str:
        """Stop the job (cancel it if it has not started), as `gpuherd kill`: "stopping
        (SIGTERM, ...)", "cancelled", or, for a job that ended before (nothing to stop, no
        error, as `gpuherd kill` exits 0 for it), "already ended (succeeded)". `grace`, as
        `kill --grace`: the SIGKILL that long after the SIGTERM instead of after the job's
        own grace (seconds, "5m" or a timedelta; 0: at once), and, for a job already being
        stopped, that long from now."""
        return self._act("kill", kill_options(grace))

    def retry(self, hold: bool = False) -> str:
        """Run the finished job again as a new attempt ("queued again"); a running one is
        stopped and queued again. `hold=True`: held instead, as `retry --hold`."""
        return self._act(retry_action(hold))

    def hold(self) -> str:
        """Keep the queued job from starting until `release()`."""
        return self._act("hold")

    def release(self) -> str:
        """Let the held job run."""
        return self._act("release")

    def pause(self) -> str:
        """Pause the running job (SIGSTOP to its process group; its GPUs stay reserved)."""
        return self._act("pause")

    def resume(self) -> str:
        """Resume the paused job (SIGCONT)."""
        return self._act("resume")

    def remove(self) -> str:
        """Remove the job, as `gpuherd rm`: a waiting one is cancelled, a finished one
        forgotten with its folder and logs; a running one is refused (kill it first)."""
        return self._act("rm")

    def move(
        self,
        *,
        first: bool = False,
        before: Job | int | str | None = None,
        swap: Job | int | str | None = None,
    ) -> str:
        """Move the waiting job to the front of the queue (`first=True`), just before
        another waiting job (`before=`, a handle or an id), or into another's place, which
        takes this one's (`swap=`), as `gpuherd move`."""
        if not isinstance(first, bool):
            raise WrongType(
                f"first is True (to the front of the queue) or False, got {as_given(first)}"
            )
        given = [first, before is not None, swap is not None].count(True)
        if given != 1:
            raise WrongType(
                "move() takes first=True (to the front of the queue), before=JOB (just before "
                "that waiting job) or swap=JOB (the two swap places; JOB: a handle or an id), "
                + ("saying where to" if not given else "only one of them")
            )
        place: dict[str, Any] = {"first": first, "before": None}
        home = self.herd.client.home
        if before is not None:
            place["before"] = _job_id("before", before, home)
        if swap is not None:  # (sent only when given: a daemon older than swap refuses it)
            place["swap"] = _job_id("swap", swap, home)
        return self._answer(f"/jobs/{self.id}/move", place)

    def priority(self, priority: int) -> str:
        """Set the job's priority (higher runs first; the default is 0), as `gpuherd
        priority`: "priority 5", or why not ("job 7 already ended (succeeded): `gpuherd retry
        --hold 7` puts it back held, ..."): the words `gpuherd priority` says."""
        priority = plain(priority)
        if not isinstance(priority, int) or isinstance(priority, bool):
            raise WrongType(
                "priority is a whole number (higher runs first; the default is 0), got "
                + as_given(priority)
            )
        return self._answer(f"/jobs/{self.id}/priority", {"priority": priority})

    def _act(self, action: str, more: Mapping[str, Any] | None = None) -> str:
        """POST /jobs/ACTION for this job (the verbs of many jobs), with `more` in its body;
        NotFound for no such job."""
        client = self.herd.client
        (result,) = client.post(f"/jobs/{action}", {"ids": [self.id], **(more or {})})["results"]
        # Not for a removal that left the job's folder: the job is gone, yet not "no job 7".
        if not result["ok"] and not result.get("left"):
            client.get(f"/jobs/{self.id}")  # raises NotFound for no such job: "no job 7"
        return str(result["message"])

    def _answer(self, path: str, body: dict[str, Any]) -> str:
        """POST to a verb of one job (move, priority): its answer, or why the job's state
        refused it, as the verbs of many jobs answer that."""
        try:
            return str(self.herd.client.post(path, body)["message"])
        except Conflict as refused:
            return str(refused)


def _job_id(key: str, job: Any, home: Path) -> int:
    """A job given as a handle (of the daemon of `home`: one of another's is refused) or an
    id."""
    if isinstance(job, JobActions):
        refuse_other_home(job, home, key)
        return job.id
    try:
        return job_number(job)
    except WrongValue as exc:  # (-1, "abc": job_number's words named no keyword)
        if TOO_LARGE in str(exc):  # (10**30: from 1 up would not say what is wrong)
            raise WrongValue(f"{key} {job} {TOO_LARGE}") from None
        raise WrongValue(f"{key} is a job: a handle or its id (from 1 up), got {job!r}") from None
    except WrongType:
        raise WrongType(f"{key} is a job: a handle or its id, got {as_given(job)}") from None


def _warn_of(answer: Mapping[str, Any]) -> None:
    """What `gpuherd ls` says on stderr of a listing, said as warnings (to jobs()' caller): a
    herd.db replaced under the daemon, jobs left out as their rows cannot be read."""
    import warnings

    if replaced := answer.get("database_replaced"):
        warnings.warn(replaced, UserWarning, stacklevel=3)
    if found := answer.get("unreadable"):
        from gpuherd.damaged_rows import unlisted

        said = unlisted([(job["id"], job["error"]) for job in found])
        warnings.warn(str(said), UserWarning, stacklevel=3)
