"""What `gpuherd wait` says once the jobs it waited for have ended: a line per way they
ended (stderr), then how many succeeded (stdout). Of jobs, for `wait [IDS]`, `--project` and
`--name`; of points, for a whole sweep's (`wait --sweep NAME`, `sweep wait NAME`), which
judges every point of the sweep, each by its latest job or, with none left, by its folder."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import click

from gpuherd.cli.submit_wait import ending
from gpuherd.client_wait import Waited
from gpuherd.core.idspec import summarize
from gpuherd.core.sweep_verdict import ended_with, unsucceeded
from gpuherd.core.units import plural


def jobs_verdict(waited: Waited, quiet: bool) -> int:
    """Says how the jobs waited for that did not succeed ended and how many did (unless
    `quiet`); the exit status: 0 when all succeeded, else 1."""
    bad = {i: s for i, s in waited.states.items() if s != "succeeded"}
    _say(_ending_lines(bad, waited))
    if not quiet:
        click.echo(
            f"{len(waited.states) - len(bad):,} of {plural(len(waited.states), 'job')} succeeded"
        )
    return 1 if bad else 0


def points_verdict(points: list[dict[str, Any]], waited: Waited, quiet: bool) -> int:
    """The same of a sweep's `points` (its `sweep status` rows, read once their jobs ended),
    counted as points: `1 of 2 points succeeded`. It said `jobs`, counting points (a held one,
    one whose job was removed), and a job of the sweep outside its grid (a later submission
    narrowed it) too, where `Sweep.wait()` does not: it is waited for, as it writes to the
    sweep's folder, but it is no point of the sweep (`sweep status` counts it apart)."""
    failed = unsucceeded(points)
    bad = {row["job_id"]: row["state"] for row in failed if row["job_id"]}
    _say([*_ending_lines(bad, waited), *_jobless_lines(row for row in failed if not row["job_id"])])
    if not quiet:
        click.echo(f"{len(points) - len(failed):,} of {plural(len(points), 'point')} succeeded")
    return 1 if failed else 0


def _say(lines: list[str]) -> None:
    # On stderr with -q too, as `submit -q --wait` does: a failure is not chatter, and a
    # script's log should say which job failed and how.
    for line in lines:
        click.echo(line, err=True)


def _ending_lines(bad: Mapping[int, str], waited: Waited) -> list[str]:
    """`job 16: failed (exit 7)` as `submit --wait` says it; `jobs 3,5-9: killed`: one line
    per ending (an older daemon tells the state alone; so is a point's job whose state is no
    longer the one its ending was read in: retried since, say)."""
    endings = (
        (i, True, ending({**_ending_in(waited, i, state), "state": state}))
        for i, state in sorted(bad.items())
    )
    return [line for _, line in summarize(endings)]


def _ending_in(waited: Waited, job_id: int, state: str) -> Mapping[str, Any]:
    told = waited.endings.get(job_id, {})
    return told if told.get("state", state) == state else {}


_JOBLESS = {
    "failed": "no job left; {} FAILURE",
    "missing": "no job, and {} neither SUCCESS nor FAILURE",
}
"""Why a point with no job left (`gpuherd rm`, `clean`) did not succeed: its folder's markers
(sweep_files.marker; one with SUCCESS is `done`, a success). Not one judged by the end of a
run herd.db does not know (its row's `unknown_run`): _unknown_why."""
_FOLDERS_NAMED = 10


def _jobless_lines(rows: Iterable[Mapping[str, Any]]) -> list[str]:
    """`point lr=0.1: failed (no job left; its folder holds FAILURE)`: a line per state (and
    per exit of runs herd.db does not know) for the points of a whole sweep's wait that have
    no job and did not succeed, as the jobs' endings share one (the first _FOLDERS_NAMED
    points named)."""
    groups: dict[tuple[str, str | None], list[Mapping[str, Any]]] = {}
    for row in rows:
        ran = row.get("unknown_run")
        groups.setdefault((row["state"], ran and ended_with(ran)), []).append(row)
    lines = []
    for (state, _), group in groups.items():
        one = len(group) == 1
        more = len(group) - _FOLDERS_NAMED
        named = [row["folder"] for row in group[:_FOLDERS_NAMED]]
        which = ", ".join(named) + (f" and {more:,} more" if more > 0 else "")
        if "unknown_run" in group[0]:
            why = _unknown_why(group)
        else:
            holds = "its folder holds" if one else "their folders hold"
            why = _JOBLESS.get(state, "no job left").format(holds)
        lines.append(f"{'point' if one else 'points'} {which}: {state} ({why})")
    return lines


def _unknown_why(group: list[Mapping[str, Any]]) -> str:
    """`job 4 attempt 1, a run herd.db does not know …, ended in its folder with exit 1`:
    what judged points that no job of herd.db ran, all ended alike. It said their folders
    held FAILURE, which they do not (no daemon watched those runs to write a marker)."""
    ran = group[0]["unknown_run"]
    how = ended_with(ran)
    if len(group) == 1:
        return (
            f"no job in herd.db; job {ran['job_id']} attempt {ran['attempt']}, a run it does not"
            f" know (restored from an older backup?), ended in its folder with {how}"
        )
    return (
        "no job in herd.db; runs it does not know (restored from an older backup?) ended in"
        f" their folders with {how}"
    )
