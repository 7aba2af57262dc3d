"""What the sweep pages show: each sweep's progress and estimated time to finish, and one
sweep's results table and plot. Read through the verbs GET /api/v1/sweeps[/{name}] answer
with (gpuherd.sweeps) and Service.page_jobs; nothing here keeps state of its own.

The estimate: the mean run time of the sweep's latest finished points (up to MEAN_OF of its
succeeded jobs) times the points still queued, plus what the running points have left of
that mean, divided by how many of its points run at once now (the GPUs they hold are named).
No estimate before a point has finished, or while none of the sweep's points runs.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from statistics import fmean
from typing import Any
from urllib.parse import urlencode

from starlette.datastructures import QueryParams

from gpuherd.api import views_plot
from gpuherd.core import sweep_values
from gpuherd.core.run_time import ran_for
from gpuherd.core.units import format_duration
from gpuherd.errors import HerdError, NotFound
from gpuherd.service import Service
from gpuherd.sweep_reads import sweep_listing, sweep_status
from gpuherd.sweep_sort import Columns

MEAN_OF = 200
"""The estimate averages the run times of at most this many of the latest finished points."""
PAGE_ROWS = 200
"""A sweep page's table lists this many points a page (sorted first, over all the points);
the plot shows them all. A table of 1,000 rows (the plot's 1,500 dots each a link, too) made
a sweep's page 678 KB and over a second to load."""
GROUPS: tuple[tuple[str, frozenset[str]], ...] = (
    ("done", frozenset({"succeeded", "done"})),
    ("failed", frozenset({"failed", "killed", "cancelled", "lost"})),
    ("running", frozenset({"running", "paused"})),
    ("queued", frozenset({"queued", "held"})),
    ("not run", frozenset({"missing"})),
)
JOB_STATES = {
    "done": ("succeeded",),
    "failed": ("failed", "killed", "cancelled", "lost"),
    "running": ("running", "paused"),
    "queued": ("queued", "held"),
}
"""The jobs page's state filter behind each count (a count links to the sweep's jobs)."""


def jobs_link(name: str, group: str | None = None) -> str:
    """/jobs filtered to the sweep; for a group of points, to the latest job of each of its
    points in one of the group's job states (`latest=1`), as the count it links from counts
    them: every job of the sweep in those states listed the older runs of points run again
    since too (6 failed jobs for 3 failed points), and *Retry all failed* asked about them."""
    states = JOB_STATES.get(group or "", ())
    latest = [("latest", "1")] if states else []
    return "/jobs?" + urlencode([*(("state", s) for s in states), ("sweep", name), *latest])


@dataclass(frozen=True)
class Segment:
    group: str
    count: int
    x: float
    width: float
    """Percent of the bar."""


@dataclass
class Progress:
    points: int
    counts: dict[str, int]
    segments: list[Segment]
    mean: float | None
    running: int
    gpus: list[int]
    eta: float | None
    how: str

    @property
    def done_percent(self) -> int:
        return round(100 * self.counts["done"] / self.points) if self.points else 0

    @property
    def finished(self) -> bool:
        return self.counts["running"] + self.counts["queued"] == 0

    @property
    def eta_text(self) -> str:
        return run_text(self.eta) if self.eta is not None else ""


def run_text(seconds: float) -> str:
    """A time of the estimate's sum with the digits it needs to add up: 3 significant ones,
    in ms under a second (`42.3ms`, `4.17s`, `41.2s`), as format_duration from a minute on
    (`3m05s`). Rounded to 0.1 s, a mean run of 0.042 s read `2,819 queued × 0.0s mean run
    ... ≈ 40.7s`, and one of 0.052 s `2,528 × 0.1s ÷ 3 ≈ 44.1s`, which gives 84 s."""
    if seconds < 0.9995:
        return f"{seconds * 1000:.3g}ms"
    if seconds < 9.995:
        return f"{seconds:.2f}s"
    return format_duration(seconds)


def group_counts(counts: dict[str, int]) -> dict[str, int]:
    """Point counts by state folded into done / failed / running / queued / not run."""
    grouped = {name: sum(counts.get(s, 0) for s in states) for name, states in GROUPS}
    known = {s for _, states in GROUPS for s in states}
    grouped["not run"] += sum(n for s, n in counts.items() if s not in known)
    return grouped


def progress(service: Service, name: str, counts: dict[str, int]) -> Progress:
    grouped = group_counts(counts)
    points = sum(grouped.values())
    segments, x = [], 0.0
    for group, n in grouped.items():
        if n and points:
            width = 100 * n / points
            segments.append(Segment(group, n, round(x, 3), round(width, 3)))
            x += width
    _, live = service.page_jobs(["running", "paused"], sweep=name, limit=10_000)
    _, done = service.page_jobs(["succeeded"], sweep=name, limit=MEAN_OF)
    now = time.time()
    # Run times without the time paused: a point paused overnight did not take a night.
    runs = [times[0] for j in done if j["ended_at"] and (times := ran_for(j, now))]
    mean = fmean(runs) if runs else None
    running = [j for j in live if j["state"] == "running"]
    gpus = sorted({g for j in running for g in j["gpus"]})
    queued = grouped["queued"]
    eta: float | None = None
    if not queued and not live:
        how = "nothing left to run"
    elif mean is None:
        how = "no estimate until a point has finished"
    elif not running:
        how = "no estimate while none of its points runs"
    else:
        left = sum(max(0.0, mean - times[0]) for j in live if (times := ran_for(j, now)))
        on = f" on GPU {', '.join(map(str, gpus))}" if gpus else ", on no GPU"
        of = f"{run_text(mean)} mean run (of {len(runs):,} finished point{_s(runs)})"
        eta = (queued * mean + left) / len(running)
        how = (
            f"{queued:,} queued × {of} + {run_text(left)} left of the running ones,"
            f" ÷ {len(running):,} running at once{on}"
        )
        if not queued and not left:
            eta = None
            how = f"any moment: its {len(live):,} running point{_s(live)} ran longer than the {of}"
    return Progress(points, grouped, segments, mean, len(running), gpus, eta, how)


def _s(items: list[Any]) -> str:
    return "" if len(items) == 1 else "s"


async def listing(service: Service) -> list[dict[str, Any]]:
    """Every sweep (GET /api/v1/sweeps, read off the loop: sweep_reads.py), newest first,
    with its progress."""
    sweeps = await sweep_listing(service)
    sweeps.sort(key=lambda s: s["updated_at"], reverse=True)
    return [{**s, "progress": progress(service, s["name"], s["counts"])} for s in sweeps]


# ---- one sweep --------------------------------------------------------------------------------


@dataclass(frozen=True)
class SweepQuery:
    """A sweep page's choices: the table's sort key and page, the plot's metric and
    parameter."""

    sort: str = ""
    metric: str = ""
    param: str = ""
    colour: str = ""
    """The parameter that colours the plot's points; "-" for none."""
    page: int = 1
    """The table's page (of PAGE_ROWS points), in the sorted order."""

    @classmethod
    def from_query(cls, params: QueryParams) -> SweepQuery:
        get = params.get
        try:
            page = max(1, int(get("page", "1")))  # past the last: sweep_page shows the last
        except ValueError:  # a URL typed by hand: the first page
            page = 1
        sort, metric, param, colour = (
            get(k, "").strip() for k in ("sort", "metric", "param", "colour")
        )
        return cls(sort, metric, param, colour, page)

    def query(self, **changes: Any) -> str:
        q = replace(self, **changes)
        return urlencode([(k, v) for k, v in vars(q).items() if v and (k, v) != ("page", 1)])

    def sort_link(self, key: str) -> str:
        """The query that sorts by `key`: ascending first, then descending, and back; from
        the first page (the best points of a sort are what a click on it asks for)."""
        return self.query(sort=f"-{key}" if self.sort == key else key, page=1)

    def sorted_by(self, key: str) -> str:
        return "asc" if self.sort == key else "desc" if self.sort == f"-{key}" else ""


@dataclass(frozen=True)
class Head:
    """A header of the sweep table: the sort key its link gives, its text."""

    key: str
    text: str
    kind: str = ""
    """"param" or "metric" (its cells' class); "" for a column of the table's own."""


OWN_HEADS = (Head("state", "State"), Head("job_id", "Job"), Head("seconds", "Run time"))
"""The table's own columns after the parameters (`#`, the point's index, comes first)."""


def heads(params: list[str], table: dict[str, Any]) -> list[Head]:
    """The table's headers, in its columns' order. A parameter or metric named as a column
    of the table's own (`state`, `seconds`, `index`, `job_id`), or starting with `-`, links to
    `?sort=metric:NAME` and is labelled `NAME (metric)` where its name names that column:
    the two `State` headers both linked `?sort=state` and sorted by the metric, and
    `?sort=-acc` of a metric `-acc` read as acc descending (sweep_sort.Columns)."""
    columns = Columns(table["varying"], table["metric_keys"], params)
    return [
        Head("index", "#"),
        *(Head(columns.sort_key("param", k), columns.label("param", k), "param") for k in params),
        *OWN_HEADS,
        *(
            Head(columns.sort_key("metric", m), columns.label("metric", m), "metric")
            for m in table["metric_keys"]
        ),
    ]


@dataclass
class SweepPage:
    table: dict[str, Any]
    query: SweepQuery
    progress: Progress
    params: list[str]
    metrics: list[str]
    """Metrics with a number in at least one row (the ones a plot can show)."""
    rows: list[dict[str, Any]]
    """The table's page of points."""
    total: int
    """Points in the table, on every page."""
    plot: views_plot.Scatter | None
    notes: list[str] = field(default_factory=list)
    heads: list[Head] = field(default_factory=list)

    @property
    def first(self) -> int:
        """The number, counted from 1 in the table's order, of the page's first point."""
        return (self.query.page - 1) * PAGE_ROWS + 1

    @property
    def last_page(self) -> int:
        return pages(self.total)


def pages(points: int) -> int:
    """The table's pages for `points` points (one, empty, for none)."""
    return max(1, -(-points // PAGE_ROWS))


async def sweep_page(service: Service, name: str, q: SweepQuery) -> SweepPage:
    """One sweep (GET /api/v1/sweeps/{name}?sort=, its table read off the loop:
    sweep_reads.py) with its progress, table and plot."""
    notes = []
    try:
        table = await sweep_status(service, name, q.sort or None)
    except NotFound:
        raise
    except HerdError as exc:  # an unknown sort key: say so, show the table unsorted
        notes.append(str(exc))
        table = await sweep_status(service, name)
        q = replace(q, sort="")
    rows: list[dict[str, Any]] = table["rows"]
    params = list(table["varying"]) or list(dict.fromkeys(k for r in rows for k in r["params"]))
    metrics = [
        k
        for k in table["metric_keys"]
        if any(views_plot.number(r["metrics"].get(k)) is not None for r in rows)
    ]
    metric = q.metric if q.metric in metrics else (metrics[0] if metrics else "")
    param = q.param if q.param in params else (params[0] if params else "")
    others = [k for k in params if k != param]
    # By default the first other parameter the plot can colour by: one of more values than
    # its colours (a seed of 10) was chosen, and the dots were all one colour, unsaid.
    values = {k: len({str(r["params"].get(k, "")) for r in rows}) for k in others}
    few = [k for k in others if values[k] <= views_plot.COLOURS]
    colour = q.colour if q.colour in others or q.colour == "-" else (few or ["-"])[0]
    q = replace(q, metric=metric, param=param, colour=colour)
    plot = None
    if metric and param:
        plot = views_plot.scatter(rows, param, metric, "" if colour == "-" else colour)
    if plot and colour != "-" and not plot.colour_by:
        notes.append(
            f"The plot is not coloured by {colour}: it has {values[colour]:,} values, "
            f"more than its {views_plot.COLOURS} colours."
        )
    outside = len(table.get("outside") or ())
    if outside:  # points a resubmission of a narrower grid (or other samples) left out
        drawn = table.get("samples") is not None
        notes.append(
            f"{outside:,} earlier run{'s' * (outside != 1)} of points "
            f"{'not drawn by --samples' if drawn else 'no longer in the grid'} "
            f"{'are' if outside != 1 else 'is'} not shown or counted (`gpuherd sweep status "
            f"{name}` lists them)."
        )
    # A page past the end (the grid narrowed since the link was made): the last page.
    q = replace(q, page=min(q.page, pages(len(rows))))
    start = (q.page - 1) * PAGE_ROWS
    return SweepPage(
        table=table,
        query=q,
        progress=progress(service, name, table["counts"]),
        params=params,
        metrics=metrics,
        rows=rows[start : start + PAGE_ROWS],
        total=len(rows),
        plot=plot,
        notes=notes,
        heads=heads(params, table),
    )


def metric_text(value: Any) -> str:
    """A metric in a table cell: numbers to 6 significant digits, the rest as the CLI's
    table shows it (text as it is, other values as JSON)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return sweep_values.metric_text(value)
    return str(value) if isinstance(value, int) else f"{value:.6g}"
