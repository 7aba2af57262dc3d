"""What `gpuherd sweep` prints: a submission in words, `sweep status` as a table or CSV, and
`sweep ls`.

Tables are plain text (cli/plain.py), never markup: parameter values, metric names and
values, sweep names and folders come from users and their programs, and are printed as they
are (`[/]` stays `[/]`), with escape sequences dropped.
"""

from __future__ import annotations

import os
import shlex
from typing import Any

from gpuherd.cli import plain, render
from gpuherd.cli.interrupted_request import goes_on
from gpuherd.core.metrics_unread import unread_line
from gpuherd.core.sweep_names import sweep_option, value_text
from gpuherd.core.sweep_values import metric_text
from gpuherd.core.units import format_duration, format_size, plural
from gpuherd.sweep_sort import Columns
from gpuherd.typed_name import typed_name

_POINT_STYLE = {"done": "green", "missing": "dim"}
"""Styles of the states only a point has (no job of it in the database); others as in ls."""


def summary(answer: dict[str, Any]) -> str:
    """What a submission did, in words."""
    ids = answer["ids"]
    points = plural(answer["points"], "point")
    lines = [f"sweep {answer['name']}: {points} in {answer['results_dir']}"]
    jobs = f"submitted {plural(len(ids), 'job')}"
    if ids:
        jobs += f" ({render.id_ranges(ids)})"
    parts = [f"{answer['new']:,} new", f"{answer['rerun_failed']:,} failed rerun"]
    if answer.get("rerun_done"):
        parts.append(f"{answer['rerun_done']:,} done rerun (--force)")
    parts += [
        f"{answer['skipped_done']:,} done skipped",
        f"{answer['skipped_active']:,} already queued or running skipped",
    ]
    lines.append(f"{jobs}: {', '.join(parts)}")
    if cap := answer.get("max_parallel"):  # given now, or kept from an earlier submission
        lines.append(
            f"at most {cap:,} of its points run at once (--max-parallel; kept until a"
            " submission gives another)"
        )
    if answer.get("seed_chosen"):
        seed = answer["seed"]
        lines.append(f"seed {seed} (chosen; recorded for this sweep; --seed {seed} repeats it)")
    lines.append(f"results: {status_command(answer['name'])}")
    return "\n".join(lines)


def status_command(name: str) -> str:
    """`gpuherd sweep status NAME` as a shell runs it: `--` before a name that starts with -."""
    return f"{typed_name()} sweep status {'-- ' * name.startswith('-')}{shlex.quote(name)}"


def jobless_note(table: dict[str, Any]) -> str:
    """What `status -q` says of the points it listed with no job to print (their jobs removed
    by `clean`, or never run): `retry $(... -q)` of nothing said only "no job ids given",
    and those points' way to run again, the sweep submitted again, went unsaid."""
    jobless = sum(1 for row in table["rows"] if not row["job_id"])
    if not jobless:
        return ""
    points = "point has" if jobless == 1 else "points have"
    return (
        f"{typed_name()}: note: {jobless:,} {points} no job in the queue (removed by `clean`,"
        " or never run), so no id: submit the sweep again (the same `sweep` command, or"
        " file) to rerun those not done"
    )


def interrupted(name: str) -> str:
    """What a Ctrl-C while the daemon submits a sweep leaves: the daemon goes on with what it
    was sent, every point or none (a bare "interrupted" read as a submission called off)."""
    waiting = f"$({typed_name()} ls -q {sweep_option(name)} --state queued,held)"
    return goes_on(
        f"sweep {name} may be submitted",
        "a sweep",
        [
            f"{status_command(name)} shows its points",
            f"{typed_name()} kill {waiting} cancels those waiting",
        ],
    )


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return format(value, ".4g")
    return metric_text(value)


def _param(params: dict[str, Any], key: str) -> str:
    """A parameter as its folder name and command show it (1.0 stays 1.0)."""
    return value_text(params[key]) if key in params else ""


def status_table(table: dict[str, Any], term: plain.Terminal | None = None) -> None:
    """Every point: folder, varying parameters, state, job, run time, peak memory, metrics;
    then, apart, the sweep's runs outside its current grid."""
    term = term or plain.Terminal()
    rows, outside = table["rows"], table.get("outside") or []
    lines = _point_table(table, rows, term) if rows else []  # (--state kept none: no header)
    counts = ", ".join(f"{n:,} {s}" for s, n in sorted(table["counts"].items()))
    total = sum(table["counts"].values())
    where, points = table["results_dir"], plural(total, "point")
    lines.append(plain.clean(f"sweep {table['name']}: {points} ({counts}); {where}"))
    if shown := _shown(len(rows), table.get("matched", len(rows)), total):
        lines.append(shown)
    if table.get("results_gone"):  # (its jobs still say succeeded; its SUCCESS markers went)
        lines.append(
            plain.clean(
                f"the results folder {where} is gone (moved or deleted?): its points' results"
                " and markers went with it, so submitting the sweep again runs them all again"
            )
        )
    if said := unread_line(rows, "--json gives each its metrics_error"):
        lines.append(plain.clean(said))
    lines += _other_commands(table["name"], rows)
    lines += [plain.clean(line) for line in table.get("warnings", [])]  # (none: older daemon)
    if outside:
        matched = table.get("outside_matched", len(outside))
        states = ", ".join(f"{n:,} {s}" for s, n in sorted(_counts(outside).items()))
        if len(outside) < matched:  # --limit: the states counted are the rows shown
            states = f"the first {len(outside):,} shown: {states}"
        lines.append(f"{plural(matched, 'run')} {outside_words(table)} (not counted): {states}")
        lines += _point_table(table, outside, term)
    term.write(lines)


def outside_words(table: dict[str, Any]) -> str:
    """What the runs outside the sweep's points are: of points not drawn by --samples (its
    points are the ones drawn, though the grid holds the others), or not in the grid."""
    drawn = table.get("samples") is not None
    return "not drawn by --samples" if drawn else "not in the current grid"


def _other_commands(name: str, rows: list[dict[str, Any]]) -> list[str]:
    """Lines for the points of another command than the sweep's now: nothing in the columns
    says so. Those still waiting have no results yet, and no submission changes them (not
    --force either): cancelled, they run the new command at the next (as its warning says)."""
    ran: list[dict[str, Any]] = []
    waiting: list[dict[str, Any]] = []
    for row in rows:  # (one pass: `row not in waiting` compared rows, 8 s for 20,000)
        if row.get("other_command"):
            (waiting if row["state"] in ("queued", "held") else ran).append(row)
    lines = []
    if ran:
        one = len(ran) == 1
        lines.append(
            f"{plural(len(ran), 'point')} ran another command than the sweep's now"
            f" ({_first(ran)}): {'its' if one else 'their'} results are shown; submitting the"
            f" sweep again with --force runs {'it' if one else 'them'} again"
        )
    if waiting:
        one = len(waiting) == 1
        lines.append(
            f"{plural(len(waiting), 'point')} waiting to run (queued or held) will run another"
            f" command than the sweep's now ({_first(waiting)}): cancel {'it' if one else 'them'}"
            f" (gpuherd kill $(gpuherd ls -q {sweep_option(name)} --state queued,held)), then"
            " submit the sweep again to run the new command"
        )
    return [plain.clean(line) for line in lines]


def _first(rows: list[dict[str, Any]]) -> str:
    """The first row's other command, on one line, and `, ...` when there are more."""
    return str(rows[0]["other_command"]).replace("\n", " ") + ", ..." * (len(rows) > 1)


def _shown(shown: int, matched: int, total: int) -> str:
    """What --state and --limit left out of the table, in words ("" when nothing)."""
    if matched < total and shown < matched:
        return f"the first {shown:,} of the {matched:,} points in the states asked shown (--limit)"
    if matched < total:
        return f"{shown:,} of {total:,} points shown: those in the states asked (--state)"
    if shown < total:
        return f"the first {shown:,} of {total:,} points shown (--limit)"
    return ""


def _counts(rows: list[dict[str, Any]]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for row in rows:
        counts[row["state"]] = counts.get(row["state"], 0) + 1
    return counts


def _point_table(
    table: dict[str, Any], rows: list[dict[str, Any]], term: plain.Terminal
) -> list[str]:
    varying, metrics = table["varying"], table["metric_keys"]
    peaks = any(row.get("peak_mem") for row in rows)
    # A parameter or metric named as a column of the table's own (`state`, `seconds`) is
    # told apart, as --sort takes its header (`--sort "seconds (metric)"`): `--sort seconds`
    # is the TIME column's, where it went by the metric.
    columns = Columns(varying, metrics, ())
    params = [columns.label("param", k) for k in varying]
    headers = ["FOLDER", *params, "STATE", "JOB", "TIME", *(["PEAK MEM"] * peaks)]
    headers += _metric_labels(metrics, headers, columns=columns)
    cells: list[list[plain.Cell]] = []
    for row in rows:
        state = row["state"]
        seconds = row["seconds"]
        cells.append(
            [
                row["folder"],
                *(_param(row["params"], k) for k in varying),
                (state, _POINT_STYLE.get(state) or render.STATE_STYLE.get(state, "")),
                str(row["job_id"] or ""),
                format_duration(seconds) if seconds is not None else "",
                *([format_size(row["peak_mem"]) if row.get("peak_mem") else ""] * peaks),
                *(_cell(row["metrics"].get(k)) for k in metrics),
            ]
        )
    # Too wide for the terminal: cut the folder first (its parameters have their own columns),
    # then the parameters, then the metrics; state, job and times stay whole. Still too wide
    # with each cut to its least, the last metrics are left out, and said: rows of 84
    # columns wrapped in a window of 60.
    first_metric = len(headers) - len(metrics)
    shrink = [0, *range(1, 1 + len(varying)), *range(first_metric, len(headers))]
    least = plain.least_widths(headers, cells, shrink)
    kept = len(headers)
    while kept > first_metric and sum(least[:kept]) + len(plain.GAP) * (kept - 1) > term.width:
        kept -= 1
    lines = plain.table(
        term, headers[:kept], [row[:kept] for row in cells], shrink=[i for i in shrink if i < kept]
    )
    if left := len(headers) - kept:
        lines.append(
            plain.clean(
                f"{plural(left, 'metric')} not shown, for the window's width"
                f" ({', '.join(metrics[-left:])}): --csv or --json gives every one"
            )
        )
    return lines


def status_csv(table: dict[str, Any]) -> None:
    varying, metrics = table["varying"], table["metric_keys"]
    writer = plain.csv_writer()
    # A parameter named like a column of the point (`-p state a b`) is told apart as the
    # metrics are: two `state` headers and a script's csv.DictReader kept only the last.
    params = _metric_labels(varying, _POINT_CSV, "param")
    headers = [_POINT_CSV[0], *params, *_POINT_CSV[1:]]
    writer.writerow(headers + _metric_labels(metrics, headers))
    for row in table["rows"]:
        writer.writerow(
            [
                row["folder"],
                *(_param(row["params"], k) for k in varying),
                row["state"],
                row["job_id"] or "",
                "" if row["seconds"] is None else round(row["seconds"], 3),
                *(_csv_metric(row["metrics"].get(k)) for k in metrics),
            ]
        )


def sweep_list(sweeps: list[dict[str, Any]], term: plain.Terminal | None = None) -> None:
    """The sweeps: name, points, points by state, results folder."""
    term = term or plain.Terminal()
    if not sweeps:
        term.write([f"no sweeps yet: {typed_name()} sweep TEMPLATE -p NAME VALUES... submits one"])
        return
    rows: list[list[plain.Cell]] = []
    for item in sweeps:
        states = ", ".join(f"{n:,} {s}" for s, n in sorted(item["counts"].items()))
        outside = sum((item.get("outside") or {}).values())
        if outside:
            drawn = item.get("samples") is not None
            states += f" (+{outside:,} {'not drawn by --samples' if drawn else 'not in the grid'})"
        rows.append([item["name"], f"{item['points']:,}", states, item["results_dir"]])
    # Too wide: cut the results folder first, then the states, then the name.
    term.write(plain.table(term, ("NAME", "POINTS", "STATES", "RESULTS"), rows, shrink=(3, 2, 0)))


def _csv_metric(value: Any) -> Any:
    """Numbers as they are (full precision), anything else as the table shows it."""
    is_number = isinstance(value, int | float) and not isinstance(value, bool)
    return value if is_number else metric_text(value)


_POINT_CSV = ["folder", "state", "job_id", "seconds"]
"""`sweep status --csv`'s own columns (the parameters go after the folder)."""


def _metric_labels(
    metrics: list[str], taken: list[str], kind: str = "metric", columns: Columns | None = None
) -> list[str]:
    """Metric column names; one named like another column (a parameter whose metric differs
    from it, `seconds`...) is told apart as `NAME (metric)` (a parameter's, `NAME (param)`);
    with `columns`, also one whose name --sort takes for another column (`time`)."""
    names = {name.casefold() for name in taken}

    def clash(k: str) -> bool:
        return k.casefold() in names or (columns is not None and columns.label(kind, k) != k)

    return [f"{k} ({kind})" if clash(k) else k for k in metrics]


def kept(results_dir: str) -> str:
    """What became of the results folder: `sweep rm` leaves it, but one moved or deleted
    before the removal is not there to keep (it said `results in ... kept` all the same)."""
    if os.path.isdir(results_dir):
        return f"results in {results_dir} kept"
    return f"its results folder {results_dir} was gone already (moved or deleted?)"
