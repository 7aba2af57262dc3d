"""The dashboard's buttons and forms (POST): each parses a form, calls one Service verb, and
answers a one-line message (htmx) or a redirect back (a plain form post).

Forms arrive url-encoded and are parsed here with the standard library (no multipart
dependency). Over TCP these requests passed the gate's token and same-origin checks.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from gpuherd.api import views
from gpuherd.core.commands import command_lines
from gpuherd.core.edit import CLEARABLE
from gpuherd.core.idspec import format_ids, parse_gpu_indices, summarize
from gpuherd.core.model import DeviceState
from gpuherd.core.states import JobState
from gpuherd.core.units import parse_duration, parse_memory, plural
from gpuherd.core.when import parse_begin
from gpuherd.errors import HerdError, NotFound
from gpuherd.service import Service
from gpuherd.service_jobs import VERBS
from gpuherd.store_rows import LARGEST  # a priority past it was a raw 422 answer
from gpuherd.wire import ActionResult, SubmitItem

router = APIRouter(include_in_schema=False)
Form = dict[str, list[str]]


def _service(request: Request) -> Service:
    service: Service = request.app.state.service
    return service


async def _form(request: Request) -> Form:
    # At most limits.MAX_FORM_BYTES: CapsBody refuses a larger form before it is read whole.
    body = await request.body()
    return parse_qs(body.decode(errors="replace"), keep_blank_values=True)


def _one(form: Form, name: str, default: str = "") -> str:
    values = form.get(name)
    return values[-1] if values else default


def _answer(request: Request, form: Form, messages: list[tuple[bool, str]]) -> Response:
    """htmx: the messages as a fragment, and, when something was done, a `refresh` event for
    the page's live parts (nothing changed after a refusal: a refresh would only wipe the
    form the user is correcting). A plain form post: back to the page it came from."""
    if request.headers.get("hx-request"):
        # After-Swap: htmx sends it to the body when the button that asked is gone (a live
        # refresh replaced it meanwhile); a plain HX-Trigger went nowhere then.
        done = any(ok for ok, _ in messages)
        headers = {"hx-trigger-after-swap": "refresh"} if done else {}
        return views.render("_flash.html", messages=messages, headers=headers)
    return RedirectResponse(views.safe_next(_one(form, "next"), "/"), status_code=303)


def _results(results: Sequence[ActionResult]) -> list[tuple[bool, str]]:
    return summarize((r.id, r.ok, r.message) for r in results)


# ---- the queue and jobs --------------------------------------------------------------------


@router.post("/ui/queue/{action}")
async def queue(request: Request, action: str) -> Response:
    form = await _form(request)
    if action not in ("pause", "resume"):
        return _answer(request, form, [(False, f"unknown queue action '{action}'")])
    message = _service(request).pause_queue(action == "pause")
    return _answer(request, form, [(True, message)])


def _one_by_one(ids: Sequence[int], do: Callable[[int], str]) -> list[ActionResult]:
    """`do` on each job (a verb of one job: priority, move), a refusal as its result."""
    results = []
    for job_id in ids:
        try:
            results.append(ActionResult(job_id, True, do(job_id)))
        except NotFound as exc:  # said as the other buttons say it: the hint is the CLI's
            results.append(ActionResult(job_id, False, str(exc).partition(": `gpuherd")[0]))
        except HerdError as exc:
            results.append(ActionResult(job_id, False, str(exc)))
    return results


def _priority(service: Service, ids: Sequence[int], step: int) -> list[ActionResult]:
    def bump(job_id: int) -> str:
        return service.set_priority(job_id, int(service.show(job_id)["priority"]) + step)

    return _one_by_one(ids, bump)


def _move(service: Service, ids: Sequence[int], before: int | None) -> list[ActionResult]:
    """`front` (before None) or `before` job `before`, as `gpuherd move`. Several jobs keep
    their order: to the front the last goes first, so the first named ends up first."""
    order = ids if before is not None else ids[::-1]
    done = {r.id: r for r in _one_by_one(order, lambda i: service.move(i, before is None, before))}
    return [done[job_id] for job_id in ids]


def _before(form: Form) -> int:
    """The job typed in "Move before job [N]" ("12", or "#12" as the pages write it)."""
    text = _one(form, "before").strip().removeprefix("#").strip()
    if not text:
        raise HerdError("move before which job? type its number")
    if not (text.isascii() and text.isdigit()):
        raise HerdError(f"'{text}' is not a job number: type the number of a queued job")
    if int(text) > LARGEST:  # no such job; SQLite could not even look it up
        raise HerdError(f"no job {text}")
    return int(text)


PRIORITY_STEPS = {"prio-up": 1, "prio-down": -1}
MOVES = ("front", "before")


@router.post("/ui/jobs/act")
async def act(request: Request) -> Response:
    """`action` on the jobs in `ids` (several fields, or lists like 3-7,9); `before` names
    the job that action `before` moves them ahead of."""
    form = await _form(request)
    service = _service(request)
    action = _one(form, "action")
    try:
        ids = views.parse_id_list(form.get("ids", []))
        if action not in VERBS and action not in PRIORITY_STEPS and action not in MOVES:
            known = ", ".join([*VERBS, *PRIORITY_STEPS, *MOVES])
            raise HerdError(f"unknown action '{action}': use one of {known}")
        if not ids:
            raise HerdError("no job selected: tick the jobs to act on first")
        if action in PRIORITY_STEPS:
            messages = _results(_priority(service, ids, PRIORITY_STEPS[action]))
        elif action in MOVES:
            before = _before(form) if action == "before" else None
            messages = _results(_move(service, ids, before))
        else:
            messages = _results(await service.act(action, ids))
    except (HerdError, ValueError) as exc:
        messages = [(False, str(exc))]
    return _answer(request, form, messages)


@router.post("/ui/jobs/retry-failed")
async def retry_failed(request: Request) -> Response:
    form = await _form(request)
    service = _service(request)
    failed = [job["id"] for job in service.ls([JobState.FAILED.value], all_jobs=True)[0]]
    if not failed:
        return _answer(request, form, [(True, "no failed job to retry")])
    results = service.retry(failed)
    done = sum(1 for r in results if r.ok)
    messages = [(True, f"{plural(done, 'failed job')} queued again")]
    messages += [m for m in _results(results) if not m[0]]
    return _answer(request, form, messages)


@router.post("/ui/jobs/{job_id}/edit")
async def edit(request: Request, job_id: int) -> Response:
    """The job page's edit form: what a field said when the page was drawn comes back as
    `was.NAME`, and only fields whose text changed are sent (the page shows sizes and times
    rounded: "10.0 GiB" must not overwrite 10,000,000,000 bytes)."""
    form = await _form(request)
    try:
        changes, clear = _edited_fields(form)
        messages = _results(_service(request).edit([job_id], changes, clear))
    except HerdError as exc:
        messages = [(False, str(exc))]
    return _answer(request, form, messages)


def _whole(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"{text!r} is not a whole number") from None


EDIT_PARSERS: dict[str, Any] = {
    "command": lambda text: text.replace("\r\n", "\n"),
    "name": str,
    "gpus": _whole,
    "only_gpus": parse_gpu_indices,
    "mem": parse_memory,  # `10` is refused: bytes are never meant
    "ram": parse_memory,
    "retries": _whole,
    "retry_delay": parse_duration,
    "timeout": parse_duration,
    "project": str,
}


def _edited_fields(form: Form) -> tuple[dict[str, Any], list[str]]:
    changes: dict[str, Any] = {}
    clear: list[str] = []
    for name, parse in EDIT_PARSERS.items():
        text = _one(form, name).strip()
        if text == _one(form, f"was.{name}").strip():
            continue
        if not text and name in CLEARABLE:
            clear.append(name)
            continue
        try:
            changes[name] = parse(text)
        except ValueError as exc:
            raise HerdError(f"{name}: {exc}") from None
    if not changes and not clear:
        raise HerdError("nothing changed: edit a field, then save")
    return changes, clear


# ---- GPUs ----------------------------------------------------------------------------------


@router.post("/ui/gpus")
async def gpus(request: Request) -> Response:
    """`op` add (index, slots), remove, drain or enable (index)."""
    form = await _form(request)
    service = _service(request)
    op = _one(form, "op")
    try:
        index = int(_one(form, "index"))
        if op == "add":
            message = service.gpu_add(index, int(_one(form, "slots", "1") or 1))
        elif op == "remove":
            message = service.gpu_remove(index)
        elif op in ("drain", "enable"):
            state = DeviceState.DRAINING if op == "drain" else DeviceState.ENABLED
            message = service.gpu_state(index, state)
        else:
            raise HerdError(f"unknown GPU action '{op}': use add, remove, drain or enable")
        messages = [(True, message)]
    except ValueError:
        messages = [(False, "give the GPU index (and slots) as whole numbers")]
    except HerdError as exc:
        messages = [(False, str(exc))]
    return _answer(request, form, messages)


# ---- submit --------------------------------------------------------------------------------


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

    @classmethod
    def defaults(cls) -> SubmitForm:
        return cls()

    @classmethod
    def parse(cls, form: Form) -> SubmitForm:
        values = {
            k: _one(form, k)
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
            )
        }
        return cls(**values, hold=bool(_one(form, "hold")))

    def items(self) -> list[SubmitItem]:
        commands = list(command_lines(self.commands.splitlines()))
        if not commands:
            raise HerdError("no command: write one command per line")
        try:
            gpus, priority = int(self.gpus or "1"), int(self.priority or "0")
        except ValueError:
            raise HerdError("GPUs and priority must be whole numbers") from None
        if not -LARGEST - 1 <= priority <= LARGEST:
            raise HerdError(f"priority {priority} is too large: at most {LARGEST} either way")
        try:
            mem = parse_memory(self.mem) if self.mem.strip() else None
        except ValueError as exc:
            raise HerdError(f"memory: {exc}") from None
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


def _env_pairs(text: str) -> dict[str, str]:
    pairs: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        key, sep, value = line.strip().partition("=")
        if not sep or not key.replace("_", "a").isalnum() or key[0].isdigit():
            raise HerdError(f"environment line '{line.strip()}': use NAME=VALUE")
        pairs[key] = value
    return pairs


def submit_page(
    request: Request, form: SubmitForm, error: str | None = None, status: int = 200
) -> HTMLResponse:
    """The submit page: the form as typed, the error if any, and, while the daemon drains,
    the warning the CLI gives (jobs submitted now start after the next daemon start)."""
    draining = views.stopping(_service(request))
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
    form = SubmitForm.parse(await _form(request))
    try:
        ids = _service(request).submit(form.items())
    except HerdError as exc:
        return submit_page(request, form, str(exc), exc.status)
    except OverflowError:  # a number SQLite cannot store; the form is shown again
        return submit_page(request, form, f"a number is too large (at most {LARGEST})", 400)
    # As ranges ("5-20004"): a list of 20,000 ids made a URL the browser's request failed on.
    return RedirectResponse(f"/jobs?submitted={format_ids(ids)}", status_code=303)
