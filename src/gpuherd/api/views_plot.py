"""Charts drawn on the server as inline SVG (no JavaScript chart library): the geometry here,
the markup in templates (`_plot.html`, `_sparkline.html`), the colours in charts.css.

- `scatter`: a metric against a parameter, one point per finished sweep point. A numeric
  parameter gets a linear axis, or a log one when every value is positive and they span at
  least two decades; any other parameter is categorical, its values evenly spaced in the
  order the sweep first lists them.
- `sparkline`: a GPU's utilisation and memory over the last minutes, from the `history`
  readings of GET /api/v1/gpus (`[time, utilisation %, memory used bytes]`, values may be
  null: a gap in the line).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

WIDTH, HEIGHT = 640, 300
LEFT, RIGHT, TOP, BOTTOM = 64, 20, 16, 44
LOG_DECADES = 2.0
"""A positive numeric parameter spanning at least this many decades gets a log axis."""
FINISHED = frozenset({"succeeded", "done", "failed", "killed", "cancelled", "lost"})
GOOD = frozenset({"succeeded", "done"})
COLOURS = 8
"""Points are coloured by a parameter with at most this many values (charts.css c0-c7)."""
LINKED = 200
"""A plot of at most this many dots draws each as its own link with its tooltip; a bigger one
draws them as one path per colour, a marker at each of its vertices, and static/plot.js finds
the dot under the pointer (1,500 dots as links were 6,000 elements: half a sweep page's load
time)."""


def number(value: Any) -> float | None:
    """A finite number from a metric or parameter value (text such as "1e-3" too), or None."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        result = float(value)
    except (ValueError, OverflowError):  # OverflowError: an int past 1.8e308 (JSON allows it)
        return None
    return result if math.isfinite(result) else None


def not_plotted(value: Any) -> str | None:
    """Why a finished point's metric `value` gets no dot, in the caption's words, or None
    when it is a number (number())."""
    if value is None:
        return "missing"
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return "not a number"  # true, a list, an object: as the table shows them
    if number(value) is not None:
        return None
    try:
        float(value)
    except ValueError:
        return "text"  # "n/a"
    except OverflowError:
        return "too large"  # an int of 310 digits or more: no float holds it
    return "NaN or infinite"  # (float "nan", "inf" and "-Infinity" too)


def label(value: float) -> str:
    """A tick label: short, without float noise (0.30000000000000004 is 0.3)."""
    if value == 0:
        return "0"
    text = f"{value:.4g}"
    return text.replace("e-0", "e-").replace("e+0", "e").replace("e+", "e")


@dataclass(frozen=True)
class Tick:
    at: float
    """Pixel position along the axis."""
    text: str


@dataclass
class Axis:
    kind: str
    """linear, log or category."""
    name: str
    ticks: list[Tick] = field(default_factory=list)


@dataclass(frozen=True)
class Dot:
    x: float
    y: float
    job_id: int | None
    ok: bool
    series: int = 0
    """Which colour: the index of the point's value of the colour-by parameter."""
    value: str = ""
    """The metric's value, as its tooltip says it."""
    around: tuple[str, str] = ("", "")
    """The tooltip's words before the value and after it, up to the job: the same for every
    dot of one x, colour and state."""

    @property
    def title(self) -> str:
        """ "lr = 1e-4, acc = 0.91, opt = adam (succeeded, job 12)"."""
        before, after = self.around
        return before + self.value + after + (f", job {self.job_id})" if self.job_id else ")")


@dataclass
class Scatter:
    x: Axis
    y: Axis
    dots: list[Dot]
    colour_by: str = ""
    legend: list[str] = field(default_factory=list)
    """The colour-by parameter's values, in the order of their colours."""
    finished: int = 0
    """The sweep's finished points, those with no dot (`left_out`) too."""
    left_out: dict[str, int] = field(default_factory=dict)
    """Finished points without a dot, by why (not_plotted): their metric is text, NaN, too
    large for a float or missing, or they have no value of the x parameter."""
    left: int = LEFT
    top: int = TOP
    right: int = WIDTH - RIGHT
    bottom: int = HEIGHT - BOTTOM
    width: int = WIDTH
    height: int = HEIGHT
    radius: int = 5
    """Of a dot."""

    @property
    def counted(self) -> str:
        """The caption's count: "36 finished points", or of a plot with points left out
        "27 of 36 finished points have a number for val_acc; 9 not plotted (text)" (it said
        "27 finished points" of 36 that all succeeded, 9 of them writing "n/a")."""
        shown, finished = len(self.dots), max(self.finished, len(self.dots))
        if shown == finished:
            return f"{shown:,} finished point{'s' * (shown != 1)}"
        why = ", ".join(
            reason if len(self.left_out) == 1 else f"{count:,} {reason}"
            for reason, count in self.left_out.items()
        )
        have = "has" if shown == 1 else "have"
        return (
            f"{shown:,} of {finished:,} finished points {have} a number for {self.y.name}; "
            f"{finished - shown:,} not plotted ({why})"
        )

    @property
    def linked(self) -> bool:
        """Each dot its own element (a link with its tooltip); else `paths()` and `data()`."""
        return len(self.dots) <= LINKED

    def _groups(self) -> dict[str, list[Dot]]:
        """The dots by their look (colour; failed), in the order drawn: failed ones on top."""
        groups: dict[str, list[Dot]] = {}
        for dot in sorted(self.dots, key=lambda d: d.ok, reverse=True):
            groups.setdefault(f"c{dot.series}" + ("" if dot.ok else " bad"), []).append(dot)
        return groups

    def paths(self) -> list[tuple[str, str]]:
        """(classes, path data) of each group of dots: a vertex at each dot, where the group's
        marker, a circle, is drawn (`_plot.html`). (A circle of two arcs per dot was four
        times the bytes, 426 KB for 10,000 dots, and twice the time to draw.)"""
        return [
            (look, "M" + " ".join(f"{d.x:g} {d.y:g}" for d in dots))
            for look, dots in self._groups().items()
        ]

    def data(self) -> dict[str, list[Any]]:
        """What plot.js needs for the dot under the pointer: `dots`, each [kind, y, job, the
        metric's value] in the order drawn (the last of dots on one spot is the one seen),
        and `kinds`, each [x, the tooltip's words before the value, after it] (Dot.title).
        The dots of one x, colour and state share a kind: a tooltip whole per dot was 786 KB
        of the 1.3 MB page of a sweep of 10,000 points."""
        kinds: dict[tuple[float, str, str], int] = {}
        dots = [
            [kinds.setdefault((d.x, *d.around), len(kinds)), d.y, d.job_id, d.value]
            for group in self._groups().values()
            for d in group
        ]
        return {"kinds": [list(kind) for kind in kinds], "dots": dots}


class _Scale:
    """Maps data values to pixels between `lo_px` and `hi_px` (inset a little at both ends)."""

    def __init__(self, lo: float, hi: float, lo_px: float, hi_px: float, log: bool) -> None:
        self.log = log
        self.lo, self.hi = (math.log10(lo), math.log10(hi)) if log else (lo, hi)
        inset = (hi_px - lo_px) * 0.04
        self.lo_px, self.hi_px = lo_px + inset, hi_px - inset

    def __call__(self, value: float) -> float:
        v = math.log10(value) if self.log else value
        share = 0.5 if self.hi == self.lo else (v - self.lo) / (self.hi - self.lo)
        return round(self.lo_px + share * (self.hi_px - self.lo_px), 1)


def nice_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """About `count` round values (1, 2 or 5 times a power of ten) covering [lo, hi]."""
    if hi == lo:
        return [lo]
    raw = (hi - lo) / count
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    first = math.ceil(lo / step - 1e-9)
    values = []
    k = first
    while k * step <= hi + step * 1e-9:
        values.append(round(k * step, 12))
        k += 1
    return values


def _numeric_axis(
    name: str, values: Sequence[float], lo_px: float, hi_px: float, allow_log: bool
) -> tuple[Axis, _Scale]:
    lo, hi = min(values), max(values)
    log = allow_log and lo > 0 and math.log10(hi / lo) >= LOG_DECADES
    if log:
        scale = _Scale(lo, hi, lo_px, hi_px, log=True)
        first, last = math.floor(math.log10(lo) + 1e-9), math.ceil(math.log10(hi) - 1e-9)
        marks = [10.0**k for k in range(first, last + 1) if lo <= 10.0**k * (1 + 1e-9)]
        marks = [m for m in marks if m <= hi * (1 + 1e-9)] or [lo, hi]
        return Axis("log", name, [Tick(scale(m), label(m)) for m in marks]), scale
    if lo == hi:
        pad = abs(lo) * 0.1 or 1.0
        lo, hi = lo - pad, hi + pad
    scale = _Scale(lo, hi, lo_px, hi_px, log=False)
    ticks = [Tick(scale(m), label(m)) for m in nice_ticks(lo, hi)]
    return Axis("linear", name, ticks), scale


def scatter(
    rows: Iterable[Mapping[str, Any]], param: str, metric: str, colour_by: str = ""
) -> Scatter | None:
    """The finished points of a sweep table with a numeric `metric`, placed by `param` and
    coloured by the value of `colour_by` (at most COLOURS values; else one colour); None
    when there is nothing to draw."""
    rows = sorted(rows, key=lambda r: (r.get("index") is None, r.get("index") or 0))
    xs_all = [r["params"].get(param) for r in rows if param in r["params"]]
    finished = [r for r in rows if r.get("state") in FINISHED]
    why = [
        not_plotted(r["metrics"].get(metric)) if param in r["params"] else f"no {param}"
        for r in finished
    ]
    shown = [r for r, reason in zip(finished, why, strict=True) if reason is None]
    if not shown:
        return None
    # Most first: the caption says why the dots are fewer than the finished points.
    left_out = dict(Counter(reason for reason in why if reason is not None).most_common())
    numeric = all(number(v) is not None for v in xs_all)
    left, right = LEFT, WIDTH - RIGHT
    top, bottom = TOP, HEIGHT - BOTTOM
    y_values = [number(r["metrics"][metric]) or 0.0 for r in shown]
    y_axis, y_scale = _numeric_axis(metric, y_values, bottom, top, allow_log=False)
    if numeric:
        x_values = [number(v) or 0.0 for v in xs_all]
        x_axis, x_scale = _numeric_axis(param, x_values, left, right, allow_log=True)

        def place(value: Any) -> float:
            return x_scale(number(value) or 0.0)

    else:
        categories = list(dict.fromkeys(str(v) for v in xs_all))
        step = (right - left) / len(categories)
        at = {c: round(left + step * (i + 0.5), 1) for i, c in enumerate(categories)}
        x_axis = Axis("category", param, [Tick(at[c], c) for c in categories])

        def place(value: Any) -> float:
            return at[str(value)]

    legend = list(dict.fromkeys(str(r["params"].get(colour_by, "")) for r in rows))
    if not colour_by or colour_by == param or len(legend) > COLOURS:
        colour_by, legend = "", []
    dots = []
    for row, y in zip(shown, y_values, strict=True):
        x_value = row["params"][param]
        after, series = "", 0
        if colour_by:
            value = str(row["params"].get(colour_by, ""))
            after, series = f", {colour_by} = {value}", legend.index(value)
        around = (f"{param} = {x_value}, {metric} = ", f"{after} ({row.get('state')}")
        ok = row.get("state") in GOOD
        job = row.get("job_id")
        dots.append(Dot(place(x_value), y_scale(y), job, ok, series, label(y), around))
    return Scatter(x_axis, y_axis, dots, colour_by, legend, len(finished), left_out)


# ---- sparklines ------------------------------------------------------------------------------

SPARK_W, SPARK_H = 240, 36
SPARK_MIN, SPARK_MAX = 60.0, 600.0
"""The span shown: the history there is, at least one minute and at most ten."""


@dataclass
class Spark:
    util: list[str]
    """Polyline `points` attributes, one per unbroken run of readings."""
    mem: list[str]
    minutes: int
    util_now: int | None
    mem_now: int | None
    """Percent of the GPU's memory in use at the last reading."""
    width: int = SPARK_W
    height: int = SPARK_H


def _runs(points: Sequence[tuple[float, float | None]]) -> list[str]:
    """Polyline point lists split where a value is missing; a lone reading is a short dash."""
    runs: list[list[tuple[float, float]]] = [[]]
    for x, y in points:
        if y is None:
            if runs[-1]:
                runs.append([])
            continue
        runs[-1].append((x, y))
    out = []
    for run in runs:
        if len(run) == 1:
            x, y = run[0]
            run = [(max(0.0, x - 2), y), (x, y)]
        if run:
            out.append(" ".join(f"{x:.1f},{y:.1f}" for x, y in run))
    return out


def sparkline(
    history: Sequence[Sequence[Any]],
    memory_total: int | None,
    now: float,
    reading: tuple[Any, Any],
) -> Spark | None:
    """The last minutes of a GPU's readings, or None before the first reading. `reading`:
    its utilisation and memory used now, which the legend says: a GPU lost since its last
    sample has none (it said that sample's `util 35%`, of a GPU the probe no longer saw)."""
    samples = [s for s in history if len(s) >= 3 and number(s[0]) is not None]
    if not samples:
        return None
    oldest = float(samples[0][0])
    span = min(SPARK_MAX, max(SPARK_MIN, math.ceil((now - oldest) / 60.0) * 60.0))
    samples = [s for s in samples if now - float(s[0]) <= span]
    if not samples:
        return None

    def x(t: float) -> float:
        return SPARK_W * (1 - min(span, max(0.0, now - t)) / span)

    def y(share: float | None) -> float | None:
        if share is None:
            return None
        return 1 + (SPARK_H - 2) * (1 - min(1.0, max(0.0, share)))

    util_share = [(number(s[1]) or 0.0) / 100 if s[1] is not None else None for s in samples]
    util = _runs([(x(float(s[0])), y(u)) for s, u in zip(samples, util_share, strict=True)])
    mem: list[str] = []
    mem_now = None
    if memory_total:
        shares = [
            (number(s[2]) or 0.0) / memory_total if s[2] is not None else None for s in samples
        ]
        mem = _runs([(x(float(s[0])), y(m)) for s, m in zip(samples, shares, strict=True)])
        used = number(reading[1])
        mem_now = None if used is None else round(100 * used / memory_total)
    util_now = number(reading[0])
    return Spark(util, mem, int(span // 60), None if util_now is None else round(util_now), mem_now)
