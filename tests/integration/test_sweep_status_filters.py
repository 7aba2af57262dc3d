"""`sweep status --state` and `--limit`: the points asked for out of a large sweep (the best
five, the failed ones), the counts still the whole sweep's (real daemon; the CLI, the HTTP API
and the Python API)."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

import pytest

from conftest import Herd, wait_for
from gpuherd.errors import HerdError
from gpuherd.pyapi import connect

# python3 p.py RUN_DIR X: metrics.json {"acc": X/10}; fails when X is a multiple of 3.
POINT = (
    "import json, os, sys\n"
    "run_dir, x = sys.argv[1], int(sys.argv[2])\n"
    "os.makedirs(run_dir, exist_ok=True)\n"
    "json.dump({'acc': x / 10}, open(os.path.join(run_dir, 'metrics.json'), 'w'))\n"
    "sys.exit(1 if x % 3 == 0 else 0)\n"
)
XS = [str(x) for x in range(1, 11)]  # 3, 6, 9 fail


@pytest.fixture(scope="module")
def ended_sweep(module_daemon: Herd) -> Herd:
    """Sweep `f` of the module's daemon, its ten points ended (7 succeeded, 3 failed)."""
    work = module_daemon.home.parent / "filters"
    work.mkdir()
    (work / "p.py").write_text(POINT)
    module_daemon.cli(
        "sweep", "python3 p.py {run_dir} {x}", "-p", "x", *XS, "--name", "f", "--gpus", "0",
        cwd=work,
    )  # fmt: skip

    def ended() -> bool:
        table = status_json(module_daemon)
        return sum(table["counts"].get(s, 0) for s in ("succeeded", "failed")) == len(XS)

    wait_for(ended, 30, "the sweep's points to end")
    return module_daemon


def status_json(herd: Herd, *args: str) -> dict[str, Any]:
    return dict(json.loads(herd.cli("sweep", "status", "f", *args, "--json").stdout))


def xs(table: dict[str, Any]) -> list[int]:
    return [int(row["params"]["x"]) for row in table["rows"]]


def test_limit_shows_the_first_points_after_sorting_and_says_so(ended_sweep: Herd) -> None:
    table = status_json(ended_sweep, "--sort", "-acc", "--limit", "3")
    assert xs(table) == [10, 9, 8]
    assert table["counts"] == {"succeeded": 7, "failed": 3}  # the whole sweep's
    assert table["matched"] == 10

    out = ended_sweep.cli("sweep", "status", "f", "--sort", "-acc", "--limit", "3").stdout
    lines = out.splitlines()
    assert [line.split()[0] for line in lines[1:4]] == ["x=10", "x=9", "x=8"]
    assert lines[4].startswith("sweep f: 10 points (3 failed, 7 succeeded); ")
    assert lines[5] == "the first 3 of 10 points shown (--limit)"
    assert len(lines) == 6


def test_state_keeps_the_points_in_those_states(ended_sweep: Herd) -> None:
    table = status_json(ended_sweep, "--state", "failed")
    assert xs(table) == [3, 6, 9]
    assert table["matched"] == 3
    assert table["counts"] == {"succeeded": 7, "failed": 3}
    both = status_json(ended_sweep, "--state", "failed", "--state", "succeeded")
    assert xs(both) == list(range(1, 11))

    out = ended_sweep.cli("sweep", "status", "f", "--state", "failed", "--limit", "2").stdout
    assert [line.split()[0] for line in out.splitlines()[1:3]] == ["x=3", "x=6"]
    assert out.splitlines()[-1] == (
        "the first 2 of the 3 points in the states asked shown (--limit)"
    )
    assert "3 of 10 points shown: those in the states asked (--state)" in (
        ended_sweep.cli("sweep", "status", "f", "--state", "failed").stdout
    )
    rows = csv.DictReader(
        io.StringIO(ended_sweep.cli("sweep", "status", "f", "--state", "failed", "--csv").stdout)
    )
    assert [r["x"] for r in rows] == ["3", "6", "9"]


def test_without_them_the_table_is_whole_and_says_nothing_more(ended_sweep: Herd) -> None:
    lines = ended_sweep.cli("sweep", "status", "f").stdout.splitlines()
    assert len(lines) == 12  # header, ten points, the sweep's line
    assert lines[-1].startswith("sweep f: 10 points")


def test_an_unknown_state_or_a_limit_below_one_is_one_line(ended_sweep: Herd) -> None:
    bad = ended_sweep.cli("sweep", "status", "f", "--state", "faild", check=False)
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr.strip().splitlines() == [
        "gpuherd: error: --state: 'faild' is not a choice: use one of queued, held, running, "
        "paused, succeeded, failed, killed, cancelled, lost, done, missing (see gpuherd sweep "
        "status --help)"
    ]
    # The HTTP API says it in the daemon's words (422, as every bad query value).
    with pytest.raises(HerdError, match=r"^unknown state 'faild': use one of queued, "):
        ended_sweep.client.get("/sweeps/f", state=["faild"])
    zero = ended_sweep.cli("sweep", "status", "f", "--limit", "0", check=False)
    assert zero.returncode == 2 and "--limit" in zero.stderr and "Traceback" not in zero.stderr


def test_the_http_and_python_apis_take_them_too(ended_sweep: Herd) -> None:
    client = ended_sweep.client
    answer = client.get("/sweeps/f", sort="acc", state=["failed"], limit=1)
    assert xs(answer) == [3] and answer["matched"] == 3
    assert client.get("/sweeps/f", sort="acc", state=["FAILED"], limit=1) == answer  # any case
    sweep = connect(home=ended_sweep.home, start=False).get_sweep("f")
    best = sweep.results("-acc", limit=2)
    assert [int(r["params"]["x"]) for r in best] == [10, 9]
    assert [int(r["params"]["x"]) for r in sweep.results(state="failed")] == [3, 6, 9]
    assert [int(r["params"]["x"]) for r in sweep.results(state="Failed")] == [3, 6, 9]


def test_states_no_point_is_in_print_no_empty_table(ended_sweep: Herd) -> None:
    out = ended_sweep.cli("sweep", "status", "f", "--state", "running").stdout
    assert out.splitlines()[0].startswith("sweep f: 10 points (3 failed, 7 succeeded); ")
    assert out.splitlines()[1:] == ["0 of 10 points shown: those in the states asked (--state)"]


def test_sort_takes_the_tables_headers_as_printed(ended_sweep: Herd) -> None:
    """`--sort JOB` / `--sort -TIME`, copied from the table's header, were refused (exit 2:
    `cannot sort by 'JOB'`): the fields are job_id and seconds."""
    assert xs(status_json(ended_sweep, "--sort", "-JOB", "--limit", "3")) == [10, 9, 8]
    by_time = status_json(ended_sweep, "--sort", "-TIME")
    seconds = [row["seconds"] for row in by_time["rows"]]
    assert seconds == sorted(seconds, reverse=True)
    text = ended_sweep.cli("sweep", "status", "f", "--sort", "job", "--limit", "2")
    assert text.returncode == 0 and text.stdout.splitlines()[0].split()[:2] == ["FOLDER", "x"]
    assert [line.split()[0] for line in text.stdout.splitlines()[1:3]] == ["x=1", "x=2"]


def test_sort_puts_values_kept_as_text_among_the_numbers(module_daemon: Herd) -> None:
    """`-p lr $(seq 0.001 0.001 0.012)`: 0.010 is kept as typed (text), and sorted after
    0.012, among the text."""
    work = module_daemon.home.parent / "seq"
    work.mkdir()
    lrs = [f"{n / 1000:.3f}" for n in range(1, 13)]
    module_daemon.cli(
        "sweep", "true {lr}", "-p", "lr", *lrs, "--name", "seq", "--gpus", "0", "--hold",
        cwd=work,
    )  # fmt: skip
    for key, order in (("lr", lrs), ("-lr", lrs[::-1])):
        shown = module_daemon.cli("sweep", "status", "seq", "--sort", key, "--json").stdout
        table = json.loads(shown)
        assert [row["folder"] for row in table["rows"]] == [f"lr={lr}" for lr in order]
    module_daemon.cli("sweep", "rm", "seq")
