"""A point's metrics.json that Python's JSON parser cannot take (lists nested 2,000 deep, a
number of 5,000 digits) is a point's `metrics_error`, as any unreadable metrics.json is: the
rest of the sweep is shown. Nested too deeply, it raised RecursionError through every reader
of the table: `sweep status`, `sweep wait`, `--json`, Python's results() and wait(), and
GET /api/v1/sweeps/NAME (500) all said `internal error` of the whole sweep; a long number's
error advised `sys.set_int_max_str_digits()`, which no user of the daemon can call (real
daemon)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import gpuherd
from conftest import Herd

WRITER = """import json, os, sys
kind, run_dir = sys.argv[1], sys.argv[2]
text = {
    "deep": '{"acc": ' + "[" * 2000 + "]" * 2000 + "}",
    "past": '{"acc": ' + "[" * 101 + "]" * 101 + "}",
    "digits": '{"acc": ' + "9" * 5000 + "}",
    "fine": '{"acc": 0.5}',
}[kind]
with open(os.path.join(run_dir, "metrics.json"), "w") as f:
    f.write(text)
"""


def test_metrics_past_what_python_parses_spoil_only_their_point(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    daemon = shared_daemon
    (tmp_path / "writer.py").write_text(WRITER)
    daemon.cli(
        "sweep", "python3 writer.py {kind} {run_dir}", "-p", "kind", "deep", "past", "digits",
        "fine", "--name", "past-parser", "--gpus", "0", "--results-dir", str(tmp_path / "out"),
        cwd=tmp_path,
    )  # fmt: skip
    waited = daemon.cli("sweep", "wait", "past-parser", "--timeout", "60s", check=False)
    assert waited.returncode == 0, waited.stdout + waited.stderr

    rows = {r["params"]["kind"]: r for r in daemon.json("sweep", "status", "past-parser")["rows"]}
    assert rows["fine"]["metrics"] == {"acc": 0.5} and "metrics_error" not in rows["fine"]
    too_deep = "lists and objects nested more than 100 levels inside each other; nest them less"
    for kind in ("deep", "past"):
        assert rows[kind]["metrics"] == {}
        assert rows[kind]["metrics_error"] == f"{tmp_path}/out/kind={kind}/metrics.json: {too_deep}"
    assert rows["digits"]["metrics"] == {}
    assert rows["digits"]["metrics_error"].endswith(
        "metrics.json: a number of more than 4300 digits: quote it to keep it as text"
    )

    table = daemon.cli("sweep", "status", "past-parser").stdout.splitlines()
    assert [line.split()[:3] for line in table[1:5]] == [
        ["kind=deep", "deep", "succeeded"],
        ["kind=past", "past", "succeeded"],
        ["kind=digits", "digits", "succeeded"],
        ["kind=fine", "fine", "succeeded"],
    ]
    assert table[-1].startswith("metrics not read for 3 points")
    assert "kind=deep/metrics.json: lists and objects nested" in table[-1]
    assert daemon.cli("sweep", "status", "past-parser", "--csv").stdout.count("\n") == 5

    status, _, body = daemon.request("GET", "/api/v1/sweeps/past-parser")
    assert status == 200, body
    assert len(json.loads(body)["rows"]) == 4
    sweep = gpuherd.connect(daemon.home, start=False).get_sweep("past-parser")
    assert sweep.wait() is True
    # The rows whose metrics were not read are said so, as `sweep status` says it (they were
    # {} without a word, to Python).
    with pytest.warns(UserWarning, match=r"^metrics not read for 3 points \(each row's "):
        rows = sweep.results()
    assert [r["metrics"] for r in rows] == [{}, {}, {}, {"acc": 0.5}]
