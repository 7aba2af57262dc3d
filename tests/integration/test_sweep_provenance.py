"""Results that another command made are said to be: a sweep whose template changed, two
sweeps sharing a results folder; and metrics.json files that cannot be read say why (real
daemon)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import Herd, wait_for

CHANGED = (
    "gpuherd: warning: 2 done points ran another command (echo v1 1, ...): their results are"
    " kept; --force runs them again"
)


def submit(herd: Herd, work: Path, *args: str) -> tuple[dict[str, Any], list[str]]:
    """The submission's JSON answer and its warning lines (stderr)."""
    proc = herd.cli("sweep", *args, "--gpus", "0", "--json", cwd=work)
    return json.loads(proc.stdout), proc.stderr.splitlines()


def done(herd: Herd, name: str, count: int) -> dict[str, Any]:
    def ended() -> dict[str, Any] | None:
        table = herd.json("sweep", "status", name)
        states = [row["state"] for row in table["rows"]]
        return table if states.count("succeeded") == count else None

    return dict(wait_for(ended, 30, f"{count} points of sweep {name} to succeed"))


def test_a_changed_command_is_said_not_taken_silently(
    shared_daemon: Herd, shared_work: Path
) -> None:
    daemon, work = shared_daemon, shared_work
    submit(daemon, work, "echo v1 {x}", "-p", "x", "1", "2", "--name", "c")
    done(daemon, "c", 2)
    answer, stderr = submit(
        daemon, work, "echo v2 --fixed-bug {x}", "-p", "x", "1", "2", "--name", "c"
    )
    assert (answer["new"], answer["skipped_done"], answer["ids"]) == (0, 2, [])
    assert stderr == [CHANGED]
    assert answer["warnings"] == [CHANGED.removeprefix("gpuherd: warning: ")]
    # The table says whose results these are, row by row and under the table.
    table = daemon.json("sweep", "status", "c")
    assert [row["other_command"] for row in table["rows"]] == ["echo v1 1", "echo v1 2"]
    text = daemon.cli("sweep", "status", "c").stdout.splitlines()
    assert text[-1] == (
        "2 points ran another command than the sweep's now (echo v1 1, ...): their results are"
        " shown; submitting the sweep again with --force runs them again"
    )
    forced, stderr = submit(
        daemon, work, "echo v2 --fixed-bug {x}", "-p", "x", "1", "2", "--name", "c", "--force"
    )
    assert forced["rerun_done"] == 2 and stderr == []
    table = done(daemon, "c", 2)
    assert [row["other_command"] for row in table["rows"]] == [None, None]
    assert "another command" not in daemon.cli("sweep", "status", "c").stdout


def test_two_sweeps_sharing_a_results_folder_say_so(shared_daemon: Herd, shared_work: Path) -> None:
    daemon, work = shared_daemon, shared_work
    shared = str(work / "shared")
    submit(daemon, work, "echo first {x}", "-p", "x", "1", "--name", "a", "--results-dir", shared)
    done(daemon, "a", 1)
    _, stderr = submit(
        daemon, work, "echo second {x}", "-p", "x", "1", "--name", "b", "--results-dir", shared
    )
    assert stderr == [
        "gpuherd: warning: 1 done point ran another command (echo first 1): its results are"
        " kept; --force runs it again",
        sharing("a", shared),
    ]
    assert daemon.json("sweep", "status", "b")["rows"][0]["other_command"] == "echo first 1"


def sharing(other: str, results_dir: str) -> str:
    return (
        f"gpuherd: warning: sweep {other!r} keeps its results in {results_dir} too: a point of"
        " the same values is one folder for both, done once (--force runs it again, the"
        " other's results moved to its previous-runs/); give another --results-dir to keep"
        " them apart"
    )


def test_a_sweep_moving_into_another_sweeps_results_folder_is_told(
    shared_daemon: Herd, shared_work: Path
) -> None:
    """A sweep file's `results_dir` is kept whatever --name says: a second name with the same
    command took the first sweep's done points over without a word (with --force, their
    results went to previous-runs/)."""
    daemon, work = shared_daemon, shared_work
    spec = work / "pinned.yaml"
    spec.write_text("command: echo {x}\nresults_dir: pinned\ngrid:\n  x: [1, 2]\n")
    submit(daemon, work, str(spec), "--name", "first")
    done(daemon, "first", 2)
    answer, stderr = submit(daemon, work, str(spec), "--name", "second", "--force")
    assert answer["rerun_done"] == 2
    assert stderr == [sharing("first", str(work / "pinned"))]
    done(daemon, "second", 2)  # (a point still running is no `skipped_done`: seen under load)
    again, stderr = submit(daemon, work, str(spec), "--name", "second")  # said once
    assert (again["skipped_done"], stderr) == (2, [])


def test_a_cut_off_metrics_file_says_where_it_stops(shared_daemon: Herd, shared_work: Path) -> None:
    daemon, work = shared_daemon, shared_work
    writes = {"cut": '{"acc": 0.3, ', "list": "[0.3]", "fine": '{"acc": 0.5}'}
    for kind, text in writes.items():
        (work / f"{kind}.json").write_text(text)
    template = "cp {kind}.json {run_dir}/metrics.json"
    submit(daemon, work, template, "-p", "kind", "cut", "list", "fine", "--name", "m")
    rows = {row["params"]["kind"]: row for row in done(daemon, "m", 3)["rows"]}
    folder = work / "results" / "m"
    assert rows["cut"]["metrics_error"] == (
        f"{folder}/kind=cut/metrics.json: not valid JSON: it stops mid-value at line 1, column"
        " 14 (cut off, or still being written?); write it whole: to a temporary file, then"
        " rename that to metrics.json"
    )
    assert rows["list"]["metrics_error"] == (
        f"{folder}/kind=list/metrics.json: valid JSON, but a list, not an object; write one"
        ' JSON object in it, {"name": value, ...}'
    )
    assert rows["fine"]["metrics"] == {"acc": 0.5} and "metrics_error" not in rows["fine"]
