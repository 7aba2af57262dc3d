"""The dashboard's submit page (POST /submit): the form as typed, checked as the CLI checks
a submission, shown again with the error when something is wrong."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from gpuherd.api import views
from gpuherd.api.form_words import SUBMIT_LABELS, in_form_words
from gpuherd.api.forms import Form, one, read_form, service_of
from gpuherd.core.commands import command_lines
from gpuherd.core.env_vars import check_variable
from gpuherd.core.idspec import format_ids, parse_gpu_indices
from gpuherd.core.int64 import TOO_LARGE, OutOfRange, fits
from gpuherd.core.units import parse_memory
from gpuherd.core.when import parse_begin
from gpuherd.errors import HerdError
from gpuherd.wire import SubmitItem

router = APIRouter(include_in_schema=False)


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

    @classmethod
    def defaults(cls) -> SubmitForm:
        return cls()

    @classmethod
    def parse(cls, form: Form) -> SubmitForm:
        values = {
            k: one(form, k)
            for k in (
                "commands",
                "name",
                "gpus",
                "only_gpus",
                "mem",
                "priority",
                "cwd",
                "project",
                "env",
                "begin",
                "output",
                "error",
            )
        }
        return cls(**values, hold=bool(one(form, "hold")))

    def items(self) -> list[SubmitItem]:
        commands = list(command_lines(self.commands.splitlines()))
        if not commands:
            raise HerdError("no command: write one command per line")
        gpus = _whole(SUBMIT_LABELS["gpus"], self.gpus or "1")
        priority = fits("priority", _whole(SUBMIT_LABELS["priority"], self.priority or "0"))
        try:
            mem = parse_memory(self.mem) if self.mem.strip() else None
        except ValueError as exc:
            raise HerdError(f"{SUBMIT_LABELS['mem']}: {exc}") from None
        try:
            only_gpus = parse_gpu_indices(self.only_gpus) if self.only_gpus.strip() else []
        except ValueError as exc:
            raise HerdError(f"only on GPUs: {exc}") from None
        begin = self._begin()
        cwd = self.cwd.strip()
        if not os.path.isabs(cwd) or not os.path.isdir(cwd):  # said for a form, not the CLI
            raise HerdError(
                f"working directory '{cwd}' is not a folder here: give the absolute path of "
                "an existing folder on the daemon's machine"
            )
        env = {k: v for k, v in os.environ.items() if k != "GPUHERD_TOKEN"}
        base: dict[str, Any] = dict(
            cwd=cwd,
            env=env,
            env_overrides=_env_pairs(self.env),
            name=self.name.strip() or None,
            gpus=gpus,
            only_gpus=only_gpus,
            mem=mem,
            priority=priority,
            project=self.project.strip() or None,
            hold=self.hold,
            begin=begin,
            # Checked by the daemon, from the working directory, as `submit --output` is.
            output=self.output.strip() or None,
            error=self.error.strip() or None,
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
            return parse_begin(self.begin, time.time(), "begin time")
        except ValueError as exc:
            raise HerdError(str(exc)) from None


def _whole(label: str, text: str) -> int:
    """A box's whole number, or the error naming that box (it said "GPUs and priority must
    be whole numbers", whichever one was wrong)."""
    try:
        return int(text)
    except ValueError:
        raise HerdError(f"{label}: {text.strip()!r} is not a whole number") from None


def _env_pairs(text: str) -> dict[str, str]:
    """The form's `NAME=VALUE` lines, each checked as the CLI's --env is (check_variable)."""
    pairs: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        key, sep, value = line.strip().partition("=")
        if not sep:
            raise HerdError(f"environment line '{line.strip()}': use NAME=VALUE")
        try:
            check_variable(key, value)
        except ValueError as exc:  # (not the line: a value may be 128 KiB)
            raise HerdError(f"environment changes: {exc}") from None
        pairs[key] = value
    return pairs


def submit_page(
    request: Request, form: SubmitForm, error: str | None = None, status: int = 200
) -> HTMLResponse:
    """The submit page: the form as typed, the error if any, and, while the daemon drains,
    the warning the CLI gives (jobs submitted now start after the next daemon start)."""
    draining = views.stopping(service_of(request))
    return views.render(
        "submit.html",
        http_status=status,
        path="/submit",
        form=form,
        error=error,
        draining=draining,
    )


@router.post("/submit", response_class=HTMLResponse, response_model=None)
async def submit(request: Request) -> Response:
    form = SubmitForm.parse(await read_form(request))
    try:
        ids = service_of(request).submit(form.items())
    except HerdError as exc:  # the daemon's checks name the CLI's options: the form's boxes
        return submit_page(request, form, in_form_words(str(exc), SUBMIT_LABELS), exc.status)
    except OverflowError as exc:  # a number SQLite cannot store: the form is shown again
        said = str(exc) if isinstance(exc, OutOfRange) else f"a number {TOO_LARGE}"
        return submit_page(request, form, said, 400)
    # As ranges ("5-20004"): a list of 20,000 ids made a URL the browser's request failed on.
    return RedirectResponse(f"/jobs?submitted={format_ids(ids)}", status_code=303)
