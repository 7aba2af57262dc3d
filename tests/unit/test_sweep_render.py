"""`sweep status` and `sweep ls` as people read them: plain text that prints data as it is.

Parameter values, metric names and values, sweep names and folders come from users and their
programs: brackets are never markup (`[/]` crashed the rich tables), escape sequences are
dropped and newlines shown as spaces.
"""

from __future__ import annotations

import io
from typing import Any

from gpuherd.cli import plain, sweep_render

NASTY = "[/] [red]x[/red] \x1b[31mred\x1b[0m\nnext"
SHOWN = "[/] [red]x[/red] red next"


def terminal(width: int = 200, styled: bool = False) -> plain.Terminal:
    term = plain.Terminal(io.StringIO())
    term.width, term.styled = width, styled
    return term


def output(term: plain.Terminal) -> list[str]:
    assert isinstance(term.stream, io.StringIO)
    return term.stream.getvalue().splitlines()


def point(
    folder: str, params: dict[str, Any], state: str = "succeeded", **extra: Any
) -> dict[str, Any]:
    return {
        "folder": folder,
        "params": params,
        "state": state,
        "job_id": extra.pop("job_id", 1),
        "seconds": extra.pop("seconds", 1.5),
        "metrics": extra.pop("metrics", {}),
        **extra,
    }


def table(rows: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {
        "name": "s",
        "results_dir": "/r/s",
        "varying": ["lr"],
        "metric_keys": [],
        "counts": {"succeeded": len(rows)},
        "rows": rows,
        **extra,
    }


def status(data: dict[str, Any], term: plain.Terminal | None = None) -> list[str]:
    term = term or terminal()
    sweep_render.status_table(data, term)
    return output(term)


def test_status_lines_up_as_the_rich_table_did() -> None:
    rows = [
        point("lr=0.1", {"lr": 0.1}, job_id=4, metrics={"acc": 0.91234567}),
        point("lr=1.0", {"lr": 1.0}, "missing", job_id=None, seconds=None),
    ]
    lines = status(table(rows, metric_keys=["acc"], counts={"succeeded": 1, "missing": 1}))
    assert lines == [
        "FOLDER  lr   STATE      JOB  TIME  acc",
        "lr=0.1  0.1  succeeded  4    1.5s  0.9123",
        "lr=1.0  1.0  missing",
        "sweep s: 2 points (1 missing, 1 succeeded); /r/s",
    ]


def test_a_metric_named_like_another_column_is_told_apart(capsys: Any) -> None:
    """metrics.json may hold `lr` (the rate a scheduler ended with) or `seconds`."""
    rows = [point("lr=0.1", {"lr": 0.1}, metrics={"lr": 0.001, "seconds": 9, "acc": 0.5})]
    data = table(rows, metric_keys=["lr", "seconds", "acc"])
    # (`seconds` too: `--sort seconds` is the TIME column's, as its header says)
    header = "FOLDER  lr   STATE      JOB  TIME  lr (metric)  seconds (metric)  acc"
    assert status(data)[0] == header
    sweep_render.status_csv(data)
    header, values = capsys.readouterr().out.splitlines()
    assert header == "folder,lr,state,job_id,seconds,lr (metric),seconds (metric),acc"
    assert values == "lr=0.1,0.1,succeeded,1,1.5,0.001,9,0.5"


def test_counts_have_thousands_separators_like_the_points() -> None:
    rows = [point(f"lr={i}", {"lr": i}) for i in range(1200)]
    assert status(table(rows, counts={"succeeded": 1200}))[-1] == (
        "sweep s: 1,200 points (1,200 succeeded); /r/s"
    )


def test_status_prints_brackets_and_escapes_literally() -> None:
    rows = [point("v=x", {"v": NASTY}, metrics={NASTY: NASTY, "[b]": "[/b]"})]
    data = table(rows, name="[b]x[/]", results_dir="/r/[/]\x1b[2J", varying=["v"])
    data["metric_keys"] = [NASTY, "[b]"]
    assert status(data) == [
        f"FOLDER  v{' ' * 26}STATE      JOB  TIME  {SHOWN}  [b]",
        f"v=x     {SHOWN}  succeeded  1    1.5s  {SHOWN}  [/b]",
        "sweep [b]x[/]: 1 point (1 succeeded); /r/[/]",
    ]


def test_status_styles_states_only_on_a_terminal() -> None:
    rows = [point("lr=0.1", {"lr": 0.1}, "done"), point("lr=0.2", {"lr": 0.2}, "failed")]
    plain_lines = status(table(rows))
    assert "\x1b" not in "".join(plain_lines)
    styled = status(table(rows), terminal(styled=True))
    assert "\x1b[32mdone\x1b[0m" in styled[1]
    assert "\x1b[31mfailed\x1b[0m" in styled[2]


def test_status_shows_peak_memory_only_when_a_point_has_one() -> None:
    rows = [point("lr=0.1", {"lr": 0.1}, peak_mem=3 * 2**30), point("lr=0.2", {"lr": 0.2})]
    lines = status(table(rows))
    assert lines[0].split() == ["FOLDER", "lr", "STATE", "JOB", "TIME", "PEAK", "MEM"]
    assert lines[1].endswith("1.5s  3.0 GiB")
    assert "PEAK" not in status(table(rows[1:]))[0]


def test_a_wide_status_cuts_the_folder_first_and_keeps_state_job_and_time() -> None:
    folder = "lr=0.1,data=" + "d" * 60
    rows = [point(folder, {"lr": 0.1}, metrics={"note": "n" * 30})]
    lines = status(table(rows, metric_keys=["note"]), terminal(width=70))
    assert plain.cells(lines[1]) == 70
    assert lines[1] == "lr=0.1,dat…  0.1  succeeded  1    1.5s  " + "n" * 30


def test_ls_prints_names_and_folders_literally() -> None:
    term = terminal()
    sweeps = [
        {"name": "[b]x", "points": 3, "counts": {"held": 3}, "results_dir": "/r/[/]"},
        {"name": "plain", "points": 2, "counts": {"succeeded": 2}, "results_dir": "/r/plain"},
    ]
    sweep_render.sweep_list(sweeps, term)
    assert output(term) == [
        "NAME   POINTS  STATES       RESULTS",
        "[b]x   3       3 held       /r/[/]",
        "plain  2       2 succeeded  /r/plain",
    ]


def test_ls_of_no_sweep_says_how_to_submit_one() -> None:
    term = terminal()
    sweep_render.sweep_list([], term)
    assert output(term) == ["no sweeps yet: gpuherd sweep TEMPLATE -p NAME VALUES... submits one"]


def test_summary_quotes_the_name_in_its_hint() -> None:
    answer = {
        "name": "a b",
        "points": 3,
        "results_dir": "/r/a b",
        "ids": [4, 5],
        "new": 2,
        "rerun_failed": 0,
        "skipped_done": 1,
        "skipped_active": 0,
    }
    assert sweep_render.summary(answer).splitlines() == [
        "sweep a b: 3 points in /r/a b",
        "submitted 2 jobs (4-5): 2 new, 0 failed rerun, 1 done skipped,"
        " 0 already queued or running skipped",
        "results: gpuherd sweep status 'a b'",
    ]


def test_status_says_why_a_point_has_no_metrics() -> None:
    rows = [
        point("lr=0.1", {"lr": 0.1}, metrics_error="/r/s/lr=0.1/metrics.json: not a JSON object"),
        point("lr=0.2", {"lr": 0.2}, metrics_error="/r/s/lr=0.2/metrics.json: 3.0 MiB, more"),
        point("lr=0.3", {"lr": 0.3}),
    ]
    lines = status(table(rows))
    # "(and 1 more)" said neither more what, nor where to find them.
    assert lines[-1] == (
        "metrics not read for 2 points (--json gives each its metrics_error); the first:"
        " /r/s/lr=0.1/metrics.json: not a JSON object"
    )
    assert status(table(rows[:1]))[-1] == (
        "metrics not read: /r/s/lr=0.1/metrics.json: not a JSON object"
    )
    assert "metrics not read" not in "".join(status(table(rows[2:])))


def test_counts_of_thousands_of_points_have_separators() -> None:
    answer = {
        "name": "big",
        "points": 5000,
        "results_dir": "/r/big",
        "ids": list(range(1, 4001)),
        "new": 4000,
        "rerun_failed": 0,
        "skipped_done": 1000,
        "skipped_active": 0,
    }
    assert sweep_render.summary(answer).splitlines()[:2] == [
        "sweep big: 5,000 points in /r/big",
        "submitted 4,000 jobs (1-4000): 4,000 new, 0 failed rerun, 1,000 done skipped,"
        " 0 already queued or running skipped",
    ]
    listed = {"name": "big", "points": 5000, "counts": {"succeeded": 5000}, "results_dir": "/r"}
    out = io.StringIO()
    sweep_render.sweep_list([listed], plain.Terminal(out))
    assert out.getvalue().splitlines()[1].split()[:3] == ["big", "5,000", "5,000"]


def test_metrics_that_do_not_fit_the_window_are_left_out_and_said() -> None:
    """`sweep status` in a window of 60 with four metrics printed rows of 84 columns, which
    wrapped: the last metrics are left out, named, and the rows fit."""
    metrics = {"accuracy": 0.1, "validation_loss": 1.1, "train_loss": 2.1, "epochs_done": 1}
    rows = [point(f"lr={lr}", {"lr": lr}, metrics=metrics) for lr in (0.1, 0.01)]
    term = terminal(width=60)
    sweep_render.status_table(table(rows, metric_keys=list(metrics)), term)
    lines = output(term)
    table_lines = lines[: len(rows) + 1]
    assert all(len(line) <= 60 for line in table_lines), table_lines
    assert table_lines[0].split()[-1] == "accuracy"
    assert lines[len(rows) + 1] == (
        "3 metrics not shown, for the window's width (validation_loss, train_loss, "
        "epochs_done): --csv or --json gives every one"
    )
    wide = terminal(width=200)  # all of them where they fit, and nothing said
    sweep_render.status_table(table(rows, metric_keys=list(metrics)), wide)
    assert output(wide)[0].split()[-4:] == list(metrics)
    assert not any("not shown" in line for line in output(wide))
