"""What the dashboard's pages show, read through Service, and how it is rendered (Jinja2).

Templates autoescape everything (a job named `<script>` is text), and text from users shows
its bidi controls (`|visible`: "rtl", U+202E, "evil" must not read "rtllive"); pages carry a
strict Content-Security-Policy: scripts only from /static, no inline script, no framing.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from starlette.datastructures import QueryParams
from starlette.responses import HTMLResponse

from gpuherd import __version__
from gpuherd.api import assets, buttons, view_cells, views_plot, views_sweeps
from gpuherd.api.askers_zone import shown_offset
from gpuherd.cli.plain import show_bidi
from gpuherd.cli.render import requested_text
from gpuherd.core.commands import flat_command
from gpuherd.core.gpu_foreign import foreign_processes, not_listed
from gpuherd.core.gpu_reserved import reserved
from gpuherd.core.gpu_slots import slot_use
from gpuherd.core.idspec import format_ids, parse_ids
from gpuherd.core.int64 import fits
from gpuherd.core.run_time import run_time_text
from gpuherd.core.states import (
    ACTIVE_STATES,
    JobState,
    in_start_order,
)
from gpuherd.core.units import format_duration, format_size
from gpuherd.core.when import parse_since
from gpuherd.listing import LIVE_JOBS
from gpuherd.service import Service

if TYPE_CHECKING:
    from jinja2 import Environment

    from gpuherd.api.views_jobs import JobPage

HERE = Path(__file__).parent
TEMPLATES = HERE / "templates"
PAGE_SIZE = 50
STATE_ORDER = [s.value for s in JobState]
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
)
PAGE_HEADERS = {"content-security-policy": CSP, "cache-control": "no-store"}

NAV = [
    ("/", "Overview"),
    ("/jobs", "Jobs"),
    ("/submit", "Submit"),
    ("/gpus", "GPUs"),
    ("/sweeps", "Sweeps"),
]


TITLE_MAX = 1000
"""Characters of a command in the tooltip of a cell that cuts it with "…" (a command may be
megabytes: each row of a page would carry it twice)."""


def _runtime(job: dict[str, Any], paused_too: bool = False) -> str:
    return run_time_text(job, time.time(), paused_too)


def _outcome(job: dict[str, Any]) -> str:
    """Exit status of a finished job or attempt: 'exit 0', 'signal 9', 'timeout'."""
    kind = job.get("outcome")
    if not kind:
        return ""
    if kind == "exit":
        return f"exit {job.get('exit_code')}"
    if kind == "signal":
        return f"signal {job.get('signal')}"
    return str(kind)


def _percent(used: int | None, total: int | None) -> int:
    if not total or used is None:
        return 0
    return max(0, min(100, round(100 * used / total)))


SOURCES = {path.name: path.read_text() for path in TEMPLATES.glob("*.html")}
"""The templates as this daemon read them at start: a gpuherd upgraded in place while it runs
must not render its new templates with this version's code."""


@functools.cache
def environment() -> Environment:
    """jinja2's environment, made for the first page: most daemons never serve one, and
    importing jinja2 was ~5% of a daemon's start-up CPU (benchmarks/daemon_start.py)."""
    from jinja2 import DictLoader, Environment, StrictUndefined

    env = Environment(
        loader=DictLoader(SOURCES),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=StrictUndefined,
    )
    # |tojson without blanks: a big sweep plot's data-dots (plot.js) is 1,500 lists.
    env.policies["json.dumps_kwargs"] = {"separators": (",", ":")}
    env.filters.update(
        when=view_cells.when,
        when_cell=view_cells.when_cell,
        runtime=_runtime,
        outcome=_outcome,
        breakable=view_cells.breakable,
        outcome_cell=view_cells.outcome_cell,
        size=lambda n: format_size(n) if n is not None else "-",
        ids=lambda ids: format_ids(ids) if ids else "-",
        percent=_percent,
        thousands=view_cells.thousands,
        live_pid=view_cells.live_pid,
        duration=format_duration,
        flat=flat_command,
        metric=views_sweeps.metric_text,
        # a job page's "asked for", in `gpuherd show`'s words, its sizes kept whole
        requested=lambda job: view_cells.sizes_whole(requested_text(job)),
    )
    env.globals.update(
        version=__version__,
        static=assets.url,
        shown_offset=shown_offset,  # (zone.js: the page's times in the browser's zone)
        nav=NAV,
        SHORT_OUTCOMES=view_cells.SHORT_OUTCOMES,
        state_order=STATE_ORDER,
        jobs_link=views_sweeps.jobs_link,
        job_states=views_sweeps.JOB_STATES,
        sparkline=_sparkline,
        slot_use=slot_use,
        foreign_processes=foreign_processes,  # who holds a GPU, as `gpuherd gpus` says
        not_listed=not_listed,
        missing_gpus=view_cells.missing_gpus,  # lost GPUs, drained ones said, as `gpuherd gpus`
        reserved=reserved,  # GPUs kept for a job, one line per job, as `gpuherd gpus` says
        FOREIGN_SHOWN=3,  # a GPU's foreign processes listed; the rest in a tooltip
        # `gpuherd gpus`' HELD: why a GPU that looks half empty takes no more --mem jobs.
        held_means="what gpuherd's jobs on it hold: each its --mem or its measured use, the larger",
        job_actions=buttons.job_actions,
        row_actions=buttons.row_actions,
        bulk_actions=buttons.BULK_ACTIONS,
        TITLE_MAX=TITLE_MAX,
        time_windows=TIME_WINDOWS,
    )
    env.filters.update(visible=show_bidi)
    return env


def _sparkline(gpu: dict[str, Any]) -> views_plot.Spark | None:
    """The sparkline of a GPU of GET /api/v1/gpus (its `history` readings)."""
    reading = gpu.get("utilization"), gpu.get("memory_used")  # now: none of a lost GPU
    return views_plot.sparkline(
        gpu.get("history") or [], gpu.get("memory_total"), time.time(), reading
    )


def render(
    name: str, /, *, http_status: int = 200, headers: dict[str, str] | None = None, **context: Any
) -> HTMLResponse:
    html = environment().get_template(name).render(**context)
    return HTMLResponse(html, http_status, headers={**PAGE_HEADERS, **(headers or {})})


# ---- the jobs table ------------------------------------------------------------------------


TIME_WINDOWS = [("", "any time"), ("1h", "last hour"), ("24h", "last day"), ("7d", "last week")]
"""The jobs page's time-window choices: `since=` as `ls --since` takes it, kept as typed in
the URL, so a link kept (or the live refresh) shows the last hour as of then, not a moment
frozen at the first click. A `since=` typed by hand (`yesterday`, `2026-11-20`) works too."""


@dataclass(frozen=True)
class JobFilter:
    """The jobs page's query: states, project, sweep, text search, time window, page number."""

    states: tuple[str, ...] = ()
    project: str = ""
    sweep: str = ""
    text: str = ""
    since: str = ""
    page: int = 1
    latest: bool = False
    """`?latest=1`: each sweep point's latest job alone, as `gpuherd sweep status` counts the
    points (views_jobs.latest_ids): the links of a sweep's counts. An older run of a point run
    again since is left out; `retry` refuses it (the point's folder is the newer job's)."""
    unknown_states: tuple[str, ...] = ()
    """`?state=` values that name no state: ignored, and the page says so (a mistyped link,
    `state=runing`, listed every job as if filtered)."""
    bad_page: str = ""
    """A `?page=` that is no page number (`abc`, `0`): page 1 is shown, and the page says so
    (it was shown silently, as if asked for)."""

    @classmethod
    def from_query(cls, params: QueryParams) -> JobFilter:
        asked = dict.fromkeys(s.strip().lower() for s in params.getlist("state") if s.strip())
        states = tuple(s for s in asked if s in STATE_ORDER)
        typed = params.get("page", "").strip()
        try:  # (any number: past the last, the pager names it and links to the last)
            page = int(typed or "1")
        except ValueError:
            page = 0
        bad_page = typed if page < 1 else ""  # `page=abc`, `page=0`: page 1, said (page_error)
        return cls(
            states=states,
            project=params.get("project", "").strip(),
            sweep=params.get("sweep", "").strip(),
            text=params.get("q", "").strip(),
            since=params.get("since", "").strip(),
            page=max(1, page),
            latest=params.get("latest", "").strip().lower() in ("1", "on", "true", "yes"),
            unknown_states=tuple(s for s in asked if s not in STATE_ORDER),
            bad_page=bad_page,
        )

    def state_error(self) -> str | None:
        """Why some `?state=` values were ignored, in one line (as a time window's)."""
        if not self.unknown_states:
            return None
        words = ", ".join(repr(s) for s in self.unknown_states)
        plural = "s" if len(self.unknown_states) > 1 else ""
        shown = f"{', '.join(self.states)} jobs" if self.states else "jobs of any state"
        known = ", ".join(STATE_ORDER)  # (the HTTP API's words: api/jobs.py)
        return f"unknown state{plural} {words}: use one of {known}; showing {shown}"

    def page_error(self) -> str | None:
        """Why `?page=` was not read, in one line (as an unknown state's)."""
        if not self.bad_page:
            return None
        return f"page {self.bad_page!r} is no page number: use 1 or more; showing page 1"

    @property
    def active(self) -> bool:
        return bool(
            self.states or self.project or self.sweep or self.text or self.since or self.latest
        )

    def since_moment(self, now: float) -> tuple[float | None, str | None]:
        """(epoch seconds of the window's start, None for any time; why `since` names no
        moment, in one line: the page then shows any time and says so)."""
        if not self.since:
            return None, None
        try:
            return parse_since(self.since, now, "time window"), None
        except ValueError as exc:
            return None, str(exc)

    @property
    def start_order(self) -> bool:
        """Waiting states alone: the jobs are listed in the order they are to start (`move`
        and `priority` show), not newest first."""
        return in_start_order(self.states)

    def query(self, **changes: Any) -> str:
        """The query string of this filter with `changes` applied (for links)."""
        f = replace(self, **changes)
        pairs: list[tuple[str, Any]] = [("state", s) for s in f.states]
        named = (("project", f.project), ("sweep", f.sweep), ("q", f.text), ("since", f.since))
        pairs += [(k, v) for k, v in named if v]
        if f.latest:
            pairs.append(("latest", 1))
        if f.page > 1:
            pairs.append(("page", f.page))
        return urlencode(pairs)


def sweep_names(service: Service) -> list[str]:
    """The sweeps' names for the jobs page's sweep filter (names only: no table is built)."""
    return [row.name for row in service.store.list_sweeps()]


SWEEPS_NAMED = 5
"""The sweeps a `?sweep=` of no sweep names as the ones there are (the rest: /sweeps); and
the projects a `?project=` no job has (views_projects)."""


def none_named(kind: str, name: str, names: Sequence[str]) -> str:
    """What the jobs page says of a filter (`kind`: sweep, project) naming none there is, one
    wording for both: `no sweep 'nope': the sweeps are lr-grid, seeds`, the first
    SWEEPS_NAMED of `names` (more: `, …`), `no project 'nope': the only project is vision`,
    or `no project 'nope': there are no projects yet`."""
    if not names:
        return f"no {kind} {name!r}: there are no {kind}s yet"
    if len(names) == 1:
        return f"no {kind} {name!r}: the only {kind} is {names[0]}"
    listed = ", ".join(names[:SWEEPS_NAMED]) + (", …" if len(names) > SWEEPS_NAMED else "")
    return f"no {kind} {name!r}: the {kind}s are {listed}"


def sweep_error(page: JobPage, sweeps: Sequence[str]) -> str | None:
    """Why a `?sweep=` page lists no job when no sweep has that name: it said `No job
    matches this filter`, as if the sweep were there and empty. (A sweep removed whose jobs
    are kept still lists them: nothing is said then.)"""
    name = page.filter.sweep
    if not name or page.total or name in sweeps:
        return None
    return none_named("sweep", name, sweeps)


# ---- the overview --------------------------------------------------------------------------


def overview(service: Service, pid: int, socket_path: str) -> dict[str, Any]:
    status = service.status(pid, socket_path)
    gpus = service.gpus()
    live, _ = service.ls(LIVE_JOBS)
    counts: dict[str, int] = status["counts"]
    recent = service.page_jobs(limit=8)[1]
    return {
        "status": status,
        "gpus": gpus,
        "live": {job["id"]: job for job in live},
        "counts": [(s, counts.get(s, 0)) for s in STATE_ORDER],
        "active": sum(counts.get(s.value, 0) for s in ACTIVE_STATES),
        "recent": recent,
        "stopping": stopping(service),
    }


def stopping(service: Service) -> str | None:
    """How the daemon stops (`drain`, `kill`, `leave`), None while it serves: the overview
    then offers no pause or resume (dispatch never resumes in a stopping daemon)."""
    if service.stop_mode is not None:
        return service.stop_mode
    return "drain" if service.engine.stopping else None


def safe_next(target: str | None, default: str = "/") -> str:
    """A local path to go back to after a form post (never another site)."""
    if not target or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return default
    return target


def parse_id_list(values: Sequence[str]) -> list[int]:
    """The job ids of a form's `ids` fields (a ticked row each, or lists like 3-7,9);
    ValueError for a mistyped one. One past 64 bits is OutOfRange before any job is acted on:
    prio + raised the first job's priority, then the next one's id failed in SQLite."""
    words = [v for v in values if v.strip()]
    ids = parse_ids(words) if words else []
    if ids:
        fits("ids", ids[-1])
    return ids
