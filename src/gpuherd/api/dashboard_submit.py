"""The dashboard's submit page (POST /submit): the form as typed, checked as the CLI checks
a submission, shown again with the error when something is wrong."""

from __future__ import annotations

import functools
import math
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from fastapi import Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from gpuherd import job_commits
from gpuherd.api import scheduler_banner, views
from gpuherd.api.form_fields import read_field, stored_whole
from gpuherd.api.form_words import SUBMIT_LABELS, in_form_words
from gpuherd.api.forms import Form, one, read_form, service_of
from gpuherd.api.routes import RouteTable
from gpuherd.core.commands import command_lines
from gpuherd.core.env_vars import check_variable
from gpuherd.core.idspec import format_ids, parse_job_ids
from gpuherd.core.int64 import TOO_LARGE, OutOfRange
from gpuherd.core.model import JobSpec
from gpuherd.core.retry_budget import idle_retry_delay
from gpuherd.core.states import FINISHED_STATES, JobState, OutcomeKind
from gpuherd.core.when import parse_begin, past_begin_hint
from gpuherd.device_hints import GpusHad, command_devices_hint, visible_devices_hint
from gpuherd.errors import HerdError
from gpuherd.program_hints import program_hints, program_word, quoted_home_hint
from gpuherd.script_files import (
    missing_script,
    missing_script_hints,
    not_executable,
    unknown_program,
)
from gpuherd.service import Service, Submitted
from gpuherd.service_reasons import configured_gpus
from gpuherd.wire import SubmitItem

routes = RouteTable(include_in_schema=False)


MORE_OPTIONS = (
    "ram",
    "retries",
    "retry_delay",
    "timeout",
    "max_log_size",
    "grace",
    "after",
    "after_any",
    "after_fail",
)
"""The fields under the form's "More options" (as the edit form takes them): a blank one
is not given, so the job gets what `gpuherd submit` gives without the option."""


@dataclass
class SubmitForm:
    """The submit page's fields, as typed (re-shown with the error when one is wrong)."""

    commands: str = ""
    name: str = ""
    gpus: str = "1"
    only_gpus: str = ""
    mem: str = ""
    priority: str = "0"
    cwd: str = field(default_factory=lambda: str(Path.home()))
    project: str = ""
    env: str = ""
    hold: bool = False
    begin: str = ""
    output: str = ""
    error: str = ""
    ram: str = ""
    retries: str = ""
    retry_delay: str = ""
    timeout: str = ""
    max_log_size: str = ""
    grace: str = ""
    after: str = ""
    after_any: str = ""
    after_fail: str = ""

    @classmethod
    def defaults(cls) -> SubmitForm:
        return cls()

    @classmethod
    def parse(cls, form: Form) -> SubmitForm:
        texts = [f.name for f in fields(cls) if f.name != "hold"]
        return cls(**{k: one(form, k) for k in texts}, hold=bool(one(form, "hold")))

    @property
    def more_given(self) -> bool:
        """Whether a field under "More options" holds text: the group is drawn open then, so
        a form shown again with an error in one of them shows that field (and a group that
        was open stays so)."""
        return any(getattr(self, name).strip() for name in MORE_OPTIONS)

    def items(self) -> list[SubmitItem]:
        commands = list(command_lines(self.commands.splitlines()))
        if not commands:
            raise HerdError("no command: write one command per line")
        # The fields the edit form has too are read as it reads them (form_fields.py).
        gpus = read_field("gpus", self.gpus.strip() or "1", SUBMIT_LABELS)
        try:  # (past 64 bits too: by its label, as the edit form's retries, not the API's line)
            priority = stored_whole(self.priority.strip() or "0")
        except ValueError as exc:
            raise HerdError(f"'{SUBMIT_LABELS['priority']}': {exc}") from None
        given = {
            name: read_field(name, text, SUBMIT_LABELS)
            for name in ("only_gpus", "mem", *MORE_OPTIONS)
            if (text := getattr(self, name).strip())
        }
        begin = self._begin()
        cwd = self.cwd.strip()
        if not os.path.isabs(cwd) or not os.path.isdir(cwd):  # said for a form, not the CLI
            raise HerdError(
                f"'working directory': '{cwd}' is not a folder here: give the absolute path of "
                "an existing folder on the daemon's machine"
            )
        env = {k: v for k, v in os.environ.items() if k != "GPUHERD_TOKEN"}
        base: dict[str, Any] = dict(
            cwd=cwd,
            env=env,
            env_overrides=_env_pairs(self.env),
            name=self.name.strip() or None,
            gpus=gpus,
            priority=priority,
            project=self.project.strip() or None,
            hold=self.hold,
            begin=begin,
            # Checked by the daemon, from the working directory, as `submit --output` is.
            output=self.output.strip() or None,
            error=self.error.strip() or None,
            **given,  # the same for every job of the form, as `submit --file` gives them
        )
        return [SubmitItem(command=c, **base) for c in commands]

    def _begin(self) -> float | None:
        if not self.begin.strip():
            return None
        if self.hold:
            raise HerdError(
                "tick 'submit held' or give a begin time, not both: a begin time keeps the "
                "jobs held until then"
            )
        try:
            return parse_begin(self.begin, time.time(), "time")
        except ValueError as exc:  # in the edit form's words (form_fields.read_field)
            raise HerdError(f"'{SUBMIT_LABELS['begin']}': {exc}") from None


def _env_pairs(text: str) -> dict[str, str]:
    """The form's `NAME=VALUE` lines, each checked as the CLI's --env is (check_variable)."""
    pairs: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        key, sep, value = line.strip().partition("=")
        if not sep:
            raise HerdError(f"'environment changes': line '{line.strip()}': use NAME=VALUE")
        try:
            check_variable(key, value)
        except ValueError as exc:  # (not the line: a value may be 128 KiB)
            raise HerdError(f"'environment changes': {exc}") from None
        pairs[key] = value
    return pairs


def submit_page(
    request: Request, form: SubmitForm, error: str | None = None, status: int = 200
) -> HTMLResponse:
    """The submit page: the form as typed, the error if any, and, while the daemon drains,
    the warning the CLI gives (jobs submitted now start after the next daemon start)."""
    draining = views.stopping(service_of(request))
    return scheduler_banner.page(
        request,
        "submit.html",
        http_status=status,
        path="/submit",
        form=form,
        error=error,
        draining=draining,
    )


@routes.post("/submit", response_class=HTMLResponse, response_model=None)
async def submit(request: Request) -> Response:
    form = SubmitForm.parse(await read_form(request))
    try:
        items = form.items()
        fill = await job_commits.note_commits(items)  # (its working directory's git commit)
        submitted = job_commits.submit(service_of(request), items, fill)
    except HerdError as exc:  # the daemon's checks name the CLI's options: the form's boxes
        return submit_page(request, form, in_form_words(str(exc), SUBMIT_LABELS), exc.status)
    except OverflowError as exc:  # a number SQLite cannot store: the form is shown again
        said = str(exc) if isinstance(exc, OutOfRange) else f"a number {TOO_LARGE}"
        return submit_page(request, form, said, 400)
    # As ranges ("5-20004"): a list of 20,000 ids made a URL the browser's request failed on.
    url = f"/jobs?submitted={format_ids(submitted.ids)}"
    if submitted.cancelled:  # the jobs page warns of them (cancelled_warnings)
        url += f"&cancelled={format_ids(sorted(submitted.cancelled))}"
    found = _ProgramHints()  # (one form: one folder and environment for all its lines)
    missing = [
        i for i, item in zip(submitted.ids, items, strict=True) if _runs_missing(item, found)
    ]
    if missing:
        url += f"&missing={format_ids(missing)}"  # the jobs page warns (missing_script_warnings)
    if items and items[0].begin is not None and items[0].begin < time.time() - 1:
        url += f"&begun={items[0].begin:.0f}"  # a begin already past: past_begin_notes
    # The jobs page says them (submission_notes), as the CLI prints them.
    noted = [
        i
        for i, item in zip(submitted.ids, items, strict=True)
        if (submitted.notes and _may_note(item)) or _devices_hints(item)
    ]
    if noted:
        url += f"&noted={format_ids(noted)}"
    return RedirectResponse(url, status_code=303)


def _may_note(item: SubmitItem) -> bool:
    """Whether the job gives what a submission's notes are of (Submitted.notes): an
    --only-gpus, which may name a GPU not there, or a --retry-delay, which may do nothing."""
    return bool(item.only_gpus) or bool(item.retry_delay)


def _devices_hints(spec: SubmitItem | JobSpec, had: GpusHad | None = None) -> list[str]:
    """What `gpuherd submit` warns of a CUDA_VISIBLE_DEVICES the job sets, in its command or
    its 'environment changes' (device_hints.py, as cli/submit_hints.py asks), the fix in the
    form's words (`'only on GPUs' 3`). The form said nothing: a command that set it ran on a
    GPU another job held. Not of the daemon's own environment, which the form's user did
    not set (as an edit's warnings leave it out)."""
    gpus, only = spec.gpus, spec.only_gpus or ()
    hints = [
        visible_devices_hint(
            {}, spec.env_overrides or {}, gpus, only, had, set_with=f"'{SUBMIT_LABELS['env']}'"
        ),
        command_devices_hint(spec.command, gpus, only, had=had),
    ]
    return [in_form_words(hint, SUBMIT_LABELS) for hint in hints if hint is not None]


def _runs_missing(item: SubmitItem | JobSpec, found: _ProgramHints) -> bool:
    """Whether the job runs a script that is not there from its folder, or a program its
    shell will not find (script_files.py), also as written (`job.sh` of its folder:
    program_hints.py)."""
    env = {**(item.env or {}), **(item.env_overrides or {})}
    return any(
        check(item.command, item.cwd, env) is not None
        for check in (missing_script, unknown_program, not_executable)
    ) or bool(found.of(item.command, item.cwd, env))


class _ProgramHints:
    """program_hints.program_hints of a form's lines, in the form's words (`write ./job.sh in
    'commands'`: the program alone, so lines alike share one warning), judged once per
    program word, on which alone they depend here: a form's lines share a folder and an
    environment (20,000 lines of one script: one look for it, not 20,000)."""

    def __init__(self) -> None:
        self.said: dict[str, list[str]] = {}
        """The hints of each program word met."""
        self.unsure: dict[str, None] = {}
        """Those of lines too unclear to judge by their word: a quoted `~` program's (its fix
        the program alone, so lines alike share it), each once, in the order met."""

    def of(self, command: str, cwd: str, env: Mapping[str, str]) -> list[str]:
        word = program_word(command, env)
        if word is None:  # (a quoted `~` makes its words unsure, the line's failure not)
            hint = quoted_home_hint(command, cwd, env, "dashboard")
            if hint is None:
                return []
            self.unsure[hint] = None
            return [hint]
        if word not in self.said:
            self.said[word] = program_hints(command, cwd, env, "dashboard")
        return self.said[word]

    def hints(self) -> list[str]:
        return [*(hint for hints in self.said.values() for hint in hints), *self.unsure]


def missing_script_warnings(service: Service, submitted: Sequence[int], named: str) -> list[str]:
    """The warnings `gpuherd submit` prints of a script its jobs run that is not there, or a
    program their shell will not find as written (the fix in the form's words), for
    the jobs page the form leads to: of the jobs `named` (its `missing=`, which the form's
    check found) that are of `submitted`. Said again from the queue, as cancelled_warnings
    is: a link typed by hand shows no text of its own, and a file made since is warned of
    no more."""
    try:
        named_ids = set(parse_job_ids(named)) & set(submitted) if named else set()
    except ValueError:  # typed by hand: no warning
        return []
    jobs = service.store.get_jobs(sorted(submitted)) if named_ids else {}
    if not (named_jobs := [jobs[i].spec for i in sorted(named_ids) if i in jobs]):
        return []
    spec = named_jobs[0]  # one form's jobs share a folder and environment: said of its jobs
    commands = [jobs[i].spec.command for i in sorted(jobs) if jobs[i].spec.cwd == spec.cwd]
    env = {**spec.env, **spec.env_overrides}
    on_ray = not service.engine.executor.user_files  # (its jobs run on a cluster's nodes)
    found = _ProgramHints()
    for command in commands:
        found.of(command, spec.cwd, env)
    programs = found.hints()
    # (as `submit` says them: a program not found as written before a script not there)
    return [*programs, *missing_script_hints(commands, spec.cwd, env, on_ray=lambda: on_ray)]


def past_begin_notes(submitted: Sequence[int], begun: str) -> list[str]:
    """What `gpuherd submit --begin 2020-01-01` warns of, for the jobs page the form leads
    to: the jobs may start now, which a typo'd year or day did not mean (the form took it
    without a word). From its `begun=` (epoch seconds), of the jobs submitted."""
    try:
        at = float(begun) if begun and submitted else None
    except ValueError:  # typed by hand: no warning
        return []
    if at is not None and not math.isfinite(at):  # (`begun=-inf`: no moment)
        return []
    said = past_begin_hint(at, time.time(), len(submitted)) if at is not None else None
    return [said.replace("--begin", f"'{SUBMIT_LABELS['begin']}'")] if said else []


def submission_notes(service: Service, submitted: Sequence[int], noted: str) -> list[str]:
    """The notes `gpuherd submit` prints as warnings (Submitted.notes), for the jobs page the
    form leads to: a CUDA_VISIBLE_DEVICES the jobs set (_devices_hints), an --only-gpus that
    names a GPU not there, a --retry-delay that does nothing (never retried), of the jobs
    `noted` (its `noted=`) that are of `submitted`. Said
    again from their specs, as missing_script_warnings is: a link typed by hand warns of
    nothing not so, and a GPU added since is warned of no more. (The page said none of them:
    `--only-gpus 0,5` on GPUs 0-3 went unseen, a typo the CLI warns of.)"""
    try:
        ids = sorted(set(parse_job_ids(noted)) & set(submitted)) if noted else []
    except ValueError:  # typed by hand: no warning
        return []
    jobs = service.store.get_jobs(ids) if ids else {}
    specs = [(job_id, jobs[job_id].spec) for job_id in ids if job_id in jobs]
    had = functools.cache(lambda: configured_gpus(service.engine))  # (asked once, if at all)
    # (each once, as `submit` prints them: 1,000 lines that set it warn once)
    notes = list(dict.fromkeys(hint for _, spec in specs for hint in _devices_hints(spec, had)))
    notes += service.unknown_gpus_named(specs)
    if idle := idle_retry_delay(specs):
        notes.append(idle)
    return notes


def cancelled_warnings(service: Service, submitted: Sequence[int], named: str) -> list[str]:
    """The warnings `gpuherd submit` prints of the jobs it cancelled at once, as a job they
    wait for already ended otherwise than they wait for, for the jobs page the form leads
    to: of the jobs `named` (its `cancelled=`) that are of `submitted` and were cancelled so.
    The job they waited for is read from the queue, not the URL: a link typed by hand makes
    no warning of a job that was not cancelled so. (Its notes: submission_notes.)"""
    try:
        ids = sorted(set(parse_job_ids(named)) & set(submitted)) if named else []
    except ValueError:  # typed by hand: no warning, as a bad `submitted=` gives no banner
        return []
    cancelled: dict[int, tuple[int, JobState]] = {}
    for job in service.store.get_jobs(ids).values():
        if job.state is not JobState.CANCELLED or job.outcome is None:
            continue
        if job.outcome.kind is not OutcomeKind.DEPENDENCY_FAILED:
            continue
        # The first that ended so, as engine_endings.fail_orphaned_waiters names it.
        unmet = ((d, JobState(s)) for d, s, _ in service.store.unmet_deps(job.id))
        if ended := [(d, s) for d, s in unmet if s in FINISHED_STATES]:
            cancelled[job.id] = ended[0]
    return Submitted.told(service.store, list(submitted), cancelled).warnings()
