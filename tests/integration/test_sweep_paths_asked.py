"""A sweep's points' `job_dir` and `log_files` are read only when asked (`paths=true`: what
`sweep status --json` and the Python API's status() send): the table and CSV, which show no
paths, do not wait for a read of every point's job."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import gpuherd
from conftest import Herd, UnixConnection, wait_for


def get(herd: Herd, path: str) -> tuple[int, Any]:
    conn = UnixConnection(herd.client.socket_path, timeout=15)
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        return response.status, json.loads(response.read())
    finally:
        conn.close()


def test_a_sweeps_paths_come_only_when_asked(shared_daemon: Herd, tmp_path: Path) -> None:
    shared_daemon.cli(
        "sweep", "echo {x}", "-p", "x", "1", "2", "--name", "r2-paths",
        "--results-dir", str(tmp_path / "out"), "--gpus", "0",
    )  # fmt: skip
    wait_for(
        lambda: shared_daemon.json("sweep", "status", "r2-paths")["counts"] == {"succeeded": 2},
        what="the sweep's points to be done",
    )
    status, plain = get(shared_daemon, "/api/v1/sweeps/r2-paths")
    assert status == 200
    assert all("job_dir" not in row and "log_files" not in row for row in plain["rows"])
    status, asked = get(shared_daemon, "/api/v1/sweeps/r2-paths?paths=true")
    assert status == 200, asked
    listed = {j["id"]: j for j in shared_daemon.json("ls", "--sweep", "r2-paths")}
    for row in asked["rows"]:
        job = listed[row["job_id"]]
        assert (row["job_dir"], row["log_files"]) == (job["job_dir"], job["log_files"])
    cli = shared_daemon.json("sweep", "status", "r2-paths")  # --json asks for them
    assert [row["log_files"] for row in cli["rows"]] == [r["log_files"] for r in asked["rows"]]
    herd = gpuherd.connect(home=shared_daemon.home)
    sweep = herd.get_sweep("r2-paths")
    assert [row["job_dir"] for row in sweep.status()["rows"]] == [
        row["job_dir"] for row in asked["rows"]
    ]
    assert sweep.wait(timeout=10)  # (asks for no paths)
