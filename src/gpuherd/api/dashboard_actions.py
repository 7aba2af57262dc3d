"""The dashboard's buttons and forms (POST): each parses a form, calls one Service verb, and
answers a one-line message (htmx) or a redirect back (a plain form post).

Forms are read by api/forms.py; the submit page is dashboard_submit.py. Over TCP these
requests passed the gate's token and same-origin checks.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from typing import Any

from fastapi import Request
from fastapi.responses import RedirectResponse, Response
from starlette.datastructures import QueryParams

from gpuherd.api import views
from gpuherd.api.buttons import older_runs
from gpuherd.api.form_fields import FIELD_READERS, read_field
from gpuherd.api.form_words import (
    EDIT_LABELS,
    GPU_LABELS,
    edited_in_form_words,
    in_form_words,
)
from gpuherd.api.forms import Form, one, read_form, service_of
from gpuherd.api.id_params import JobId
from gpuherd.api.routes import RouteTable
from gpuherd.api.views_jobs import latest_ids
from gpuherd.core.edit import CLEARABLE
from gpuherd.core.idspec import JOBS_THERE_ARE, MAX_GPU_INDEX, format_ids, summarize
from gpuherd.core.int64 import fits, holds
from gpuherd.core.model import DeviceState
from gpuherd.core.states import JobState
from gpuherd.edit_warnings import EditedJob, edit_warnings
from gpuherd.errors import HerdError, InvalidValue
from gpuherd.service import Service
from gpuherd.service_jobs import VERBS
from gpuherd.wire import ActionResult

routes = RouteTable(include_in_schema=False)
EVERY_JOB = 2**62
"""A LIMIT past any queue's size (SQLite's LIMIT is a 64-bit integer)."""


def _answer(
    request: Request,
    form: Form,
    messages: list[tuple[bool, str]],
    field: str | None = None,
    gone: str | None = None,
) -> Response:
    """htmx: the messages as a fragment, and, when something was done, a `refresh` event for
    the page's live parts (nothing changed after a refusal: a refresh would only wipe the
    form the user is correcting). A plain form post: back to the page it came from. `field`:
    the form's box a refusal is about (an edit's: connection.js says it there too). `gone`:
    the page to go to instead, the one the form came from being no more (_removed_page)."""
    if gone is not None:  # (htmx: the browser loads it, as after a plain form's redirect)
        if request.headers.get("hx-request"):
            return Response(status_code=204, headers={"hx-redirect": gone})
        return RedirectResponse(gone, status_code=303)
    if request.headers.get("hx-request"):
        # After-Swap: htmx sends it to the body when the button that asked is gone (a live
        # refresh replaced it meanwhile); a plain HX-Trigger went nowhere then.
        done = any(ok for ok, _ in messages)
        headers = {"hx-trigger-after-swap": "refresh"} if done else {}
        return views.render("_flash.html", messages=messages, field=field, headers=headers)
    return RedirectResponse(views.safe_next(one(form, "next"), "/"), status_code=303)


def _results(results: Sequence[ActionResult]) -> list[tuple[bool, str]]:
    """The lines summarize gives the CLI, ids that name no job without the CLI's hint (its
    `gpuherd ls --all`): "no job 7", the page being the list of the jobs there are."""
    hint = f": {JOBS_THERE_ARE}"
    left = {r.id for r in results if r.left}
    lines = summarize(((r.id, r.ok, r.message) for r in results), left=left)
    return [(ok, line.removesuffix(hint)) for ok, line in lines]


# ---- the queue and jobs --------------------------------------------------------------------


@routes.post("/ui/queue/{action}")
async def queue(request: Request, action: str) -> Response:
    form = await read_form(request)
    if action not in ("pause", "resume"):
        return _answer(request, form, [(False, f"unknown queue action '{action}'")])
    message = service_of(request).pause_queue(action == "pause")
    return _answer(request, form, [(True, message)])


def _one_by_one(ids: Sequence[int], do: Callable[[int], str]) -> list[ActionResult]:
    """`do` on each job (a verb of one job: priority, move), a refusal as its result."""
    results = []
    for job_id in ids:
        try:
            results.append(ActionResult(job_id, True, do(job_id)))
        except HerdError as exc:  # NotFound too, which _results words as the other buttons
            results.append(ActionResult(job_id, False, str(exc)))
    return results


def _priority(service: Service, ids: Sequence[int], step: int) -> list[ActionResult]:
    def bump(job_id: int) -> str:
        priority = int(service.show(job_id)["priority"]) + step
        if not holds(priority):  # (the store's OverflowError was a 422 "too large" in JSON)
            end = "highest" if step > 0 else "lowest"
            raise HerdError(f"job {job_id}: already at the {end} priority, {priority - step}")
        return service.set_priority(job_id, priority)

    return _one_by_one(ids, bump)


def _move(service: Service, ids: Sequence[int], before: int | None) -> list[ActionResult]:
    """`front` (before None) or `before` job `before`, as `gpuherd move`. Several jobs keep
    their order: to the front the last goes first, so the first named ends up first."""
    order = ids if before is not None else ids[::-1]
    done = {r.id: r for r in _one_by_one(order, lambda i: service.move(i, before is None, before))}
    return [done[job_id] for job_id in ids]


def _before(form: Form) -> int:
    """The job typed in "Move before job [N]" ("12", or "#12" as the pages write it)."""
    text = one(form, "before").strip().removeprefix("#").strip()
    if not text:
        raise HerdError("move before which job? type its number")
    if not (text.isascii() and text.isdigit()):
        raise HerdError(f"'{text}' is not a job number: type the number of a queued job")
    return fits("before", int(text))


PRIORITY_STEPS = {"prio-up": 1, "prio-down": -1}
MOVES = ("front", "before")


@routes.post("/ui/jobs/act")
async def act(request: Request) -> Response:
    """`action` on the jobs in `ids` (several fields, or lists like 3-7,9); `before` names
    the job that action `before` moves them ahead of."""
    form = await read_form(request)
    service = service_of(request)
    action = one(form, "action")
    gone = None
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
            results = await service.act(action, ids)
            messages = _results(results)
            if action == "rm":
                gone = _removed_page(form, [r.id for r in results if r.ok])
    except (HerdError, ValueError) as exc:
        messages = [(False, str(exc))]
    return _answer(request, form, messages, gone=gone)


def _removed_page(form: Form, removed: Sequence[int]) -> str | None:
    """`/jobs?removed=N` for a job removed from its own page (the form's `next`), which says
    so there: the page went on showing the job, its buttons and its downloads, which answered
    `no job N`, under a red `no job N` from its head drawn again. None for another page."""
    own = re.fullmatch(r"/jobs/(\d+)", one(form, "next").partition("?")[0])
    if own is None or int(own[1]) not in removed:
        return None
    return f"/jobs?removed={format_ids(removed)}"


@routes.post("/ui/jobs/retry-failed")
async def retry_failed(request: Request) -> Response:
    form = await read_form(request)
    service = service_of(request)
    # A filtered jobs page (a sweep's, a project's) sends its filter: its failed jobs alone,
    # on every page. Before, the button there retried every failed job, other sweeps' too.
    scope = views.JobFilter.from_query(QueryParams(one(form, "scope")))
    since, unread = scope.since_moment(time.time())
    if unread:  # never every failed job, for a window that names no moment
        return _answer(request, form, [(False, f"{unread}: no job retried")])
    where = (scope.project or None, scope.text, scope.sweep or None)
    # Each point's latest run alone: `retry` refuses an older run of a point run again since
    # (its folder is the newer job's), and a sweep submitted twice was asked about 856 jobs,
    # 428 retried and 428 refused, one line each. With ?latest=1&sweep=, the points' latest.
    ids = latest_ids(service, scope)
    failed_only = (JobState.FAILED.value,)
    found = service.page_jobs(failed_only, *where, 0, EVERY_JOB, since, True, ids)[1]
    older = 0 if scope.latest else service.page_jobs(failed_only, *where, 0, 0, since)[0]
    older = max(0, older - len(found))
    left = [(True, older_runs(older))] if older else []
    failed = sorted(job["id"] for job in found)  # (ascending, as `gpuherd retry` takes them)
    if not failed:
        these = " of this filter" if scope.active else ""
        return _answer(request, form, [(True, f"no failed job{these} to retry"), *left])
    results = service.retry(failed)
    done = sum(1 for r in results if r.ok)
    messages = [(True, f"{done:,} failed job{'s' * (done != 1)} queued again"), *left]
    messages += [m for m in _results(results) if not m[0]]
    return _answer(request, form, messages)


@routes.post("/ui/jobs/{job_id}/edit")
async def edit(request: Request, job_id: JobId) -> Response:
    """The job page's edit form: what a field said when the page was drawn comes back as
    `was.NAME`, and only fields whose text changed are sent (the page shows sizes and times
    rounded: "10.0 GiB" must not overwrite 10,000,000,000 bytes)."""
    form = await read_form(request)
    edited = [name for name in FIELD_READERS if _typed(form, name) != _typed(form, f"was.{name}")]
    field = None
    try:
        changes, clear = _edited_fields(form, edited)
        service = service_of(request)
        job = service.store.get_job(job_id)  # (as it was: the answer says what changed)
        changed: list[EditedJob] = []  # (what it changed: for the warnings)
        messages = _results(service.edit([job_id], changes, clear, changed))
        if job is not None and changed:  # its fields by the boxes' labels, as refusals are
            spec, fields, begun = changed[0].spec, changed[0].fields, "begin" in edited
            messages = [
                (ok, edited_in_form_words(m, job.spec, spec, fields, EDIT_LABELS, begun))
                for ok, m in messages
            ]
        messages += [(True, f"warning: {said}") for said in edit_warnings(service.engine, changed)]
    except FieldRefused as exc:
        messages, field = [(False, str(exc))], exc.field
    except HerdError as exc:
        messages = [(False, str(exc))]
    # The daemon's checks name a field by its option (`gpus (--gpus)`): here, by its box;
    # and the job, for the CLI's edit of many (`job 10: ...`): here it is the page's.
    own = f"job {job_id}: "
    messages = [
        (ok, in_form_words(m if ok else m.removeprefix(own), EDIT_LABELS)) for ok, m in messages
    ]
    refused = [m for ok, m in messages if not ok]
    if refused and field is None:
        field = refused_field(refused[0], edited)
    return _answer(request, form, messages, field)


class FieldRefused(HerdError):
    """A box's text that its field's reader refused (read_field), naming the box's field."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


def _typed(form: Form, name: str) -> str:
    return one(form, name).strip()


def _edited_fields(form: Form, edited: Sequence[str]) -> tuple[dict[str, Any], list[str]]:
    changes: dict[str, Any] = {}
    clear: list[str] = []
    for name in edited:
        text = _typed(form, name)
        if not text and name in CLEARABLE:
            clear.append(name)
            continue
        try:
            changes[name] = read_field(name, text, EDIT_LABELS)
        except HerdError as exc:
            raise FieldRefused(name, str(exc)) from None
    if not changes and not clear:
        raise HerdError("nothing changed: edit a field, then save")
    return changes, clear


def refused_field(message: str, edited: Sequence[str]) -> str | None:
    """The box an edit's refusal is about: the one box edited, or, of those edited, the one
    its words name by its label (`give fewer 'GPUs'`; the longest label named: `after any
    end of`, not `after`); None when it names none of them, or several."""
    if len(edited) == 1:
        return edited[0]
    labels = {name: EDIT_LABELS[name].lower() for name in edited}
    named = [
        n for n in edited if re.search(rf"(?<![\w-]){re.escape(labels[n])}(?![\w-])", message, re.I)
    ]
    # A label inside another one named (`after` in `after any end of`) is that one's.
    alone = [n for n in named if not any(o != n and labels[n] in labels[o] for o in named)]
    return alone[0] if len(alone) == 1 else None


# ---- GPUs ----------------------------------------------------------------------------------


@routes.post("/ui/gpus")
async def gpus(request: Request) -> Response:
    """`op` add (index, slots), remove, drain or enable (index)."""
    form = await read_form(request)
    service = service_of(request)
    op = one(form, "op")
    try:
        index = _gpu_index(one(form, "index"))
        if op == "add":
            slots = one(form, "slots").strip()  # empty: the slots it has (or had)
            message = service.gpu_add(index, _whole(slots, "slots") if slots else None)
        elif op == "remove":
            message = service.gpu_remove(index)
        elif op in ("drain", "enable"):
            state = DeviceState.DRAINING if op == "drain" else DeviceState.ENABLED
            message = service.gpu_state(index, state)
        else:
            raise HerdError(f"unknown GPU action '{op}': use add, remove, drain or enable")
        messages = [(True, message)]
    except HerdError as exc:
        messages = [(False, in_form_words(str(exc), GPU_LABELS))]
    return _answer(request, form, messages)


def _gpu_index(text: str) -> int:
    """The index box as a whole number; one past 64 bits refused as -1 is, naming the GPUs'
    limit (service_system.gpu_index). The daemon's check answered it as the API answers any
    number past 64 bits, `index N is too large (at most 2**63 - 1)`: a 422 the page showed
    nothing of (a console error), naming a limit that is not the GPUs'."""
    index = _whole(text, "index")
    if not holds(index):
        raise InvalidValue(f"GPU {index} is not a GPU index: use 0 to {MAX_GPU_INDEX}")
    return index


def _whole(text: str, label: str) -> int:
    """A box of the GPU form as a whole number, else refused naming the box and what was in
    it (`'slots': '2.5' is not a whole number`), as the submit form says it: both were "give
    the GPU index (and slots) as whole numbers", which said neither."""
    try:
        return int(text.strip())
    except ValueError:
        raise InvalidValue(f"'{label}': {text.strip()!r} is not a whole number") from None
