"""Six small gaps a user met: when a running job's --timeout stops it (`show`), what
`ls --json/--csv --limit` left out (stderr), `sweep status --json`'s paths, a relative
`folder` over HTTP, `log -f` of a log deleted under the job, `gpus --json`'s `job_id`."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import time
from pathlib import Path

from conftest import Herd, UnixConnection, read_line, wait_for


def test_show_says_when_a_running_jobs_timeout_stops_it(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    go = tmp_path / "go"
    job = shared_daemon.submit("--timeout", "2h", f"while [ ! -e {go} ]; do sleep 0.02; done")
    view = shared_daemon.wait_state(job, "running")
    detail = shared_daemon.json("show", str(job))
    assert detail["timeout_at"] == view["started_at"] + 7200
    line = next(
        x for x in shared_daemon.cli("show", str(job)).stdout.splitlines() if "timeout" in x
    )
    stops = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(detail["timeout_at"]))
    assert re.fullmatch(rf"timeout +2h \(stops at {stops}, in (1h59m|2h00m)\)", line), line
    shared_daemon.cli("pause", str(job))  # a paused job's timeout stands still: no due time
    assert shared_daemon.json("show", str(job))["timeout_at"] is None
    shared_daemon.cli("resume", str(job))
    go.touch()
    ended = shared_daemon.wait_state(job, "succeeded")
    assert ended["timeout_at"] is None
    assert re.search(r"timeout +2h\n", shared_daemon.cli("show", str(job)).stdout)


def test_ls_json_and_csv_say_on_stderr_how_many_the_limit_left_out(
    shared_daemon: Herd,
) -> None:
    ids = shared_daemon.submit_lines(["true"] * 4, "--project", "h3-limit", "--hold")
    for form in ("--json", "--csv"):
        cut = shared_daemon.cli("ls", form, "--limit", "1", "--project", "h3-limit")
        rows = (
            json.loads(cut.stdout)
            if form == "--json"
            else list(csv.DictReader(io.StringIO(cut.stdout)))
        )
        assert len(rows) == 1
        assert cut.stderr == "gpuherd: 3 more jobs not shown (--limit 4 shows them)\n"
        whole = shared_daemon.cli("ls", form, "--limit", "4", "--project", "h3-limit")
        assert whole.stderr == ""  # nothing left out: nothing said
    counted = shared_daemon.cli("ls", "--json", "--all", "--limit", "2", "--project", "h3-limit")
    assert counted.stderr == "gpuherd: 2 more jobs not shown (--limit 4 shows them)\n"
    table = shared_daemon.cli("ls", "--limit", "1", "--project", "h3-limit")
    assert table.stderr == ""  # the table says it in its own last line, not twice
    shared_daemon.cli("kill", *map(str, ids))


def test_sweep_status_json_gives_each_points_folder_and_logs_as_ls(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    shared_daemon.cli(
        "sweep", "echo {x}", "-p", "x", "1", "2", "--name", "h3-paths",
        "--results-dir", str(out), "--gpus", "0",
    )  # fmt: skip
    rows = wait_for(
        lambda: (
            (t := shared_daemon.json("sweep", "status", "h3-paths"))["counts"] == {"succeeded": 2}
            and t["rows"]
        ),
        what="the sweep's points to be done",
    )
    listed = {j["id"]: j for j in shared_daemon.json("ls", "--sweep", "h3-paths")}
    for row in rows:
        job = listed[row["job_id"]]
        assert (row["job_dir"], row["log_files"]) == (job["job_dir"], job["log_files"])
        assert Path(row["log_files"]["stdout"]).read_text() == f"{row['params']['x']}\n"


def post(herd: Herd, body: object) -> tuple[int, dict[str, str]]:
    conn = UnixConnection(herd.client.socket_path, timeout=15)
    try:
        headers = {"Content-Type": "application/json"}
        conn.request("POST", "/api/v1/jobs", json.dumps(body).encode(), headers)
        response = conn.getresponse()
        return response.status, json.loads(response.read())
    finally:
        conn.close()


def test_a_relative_folder_over_http_is_refused(shared_daemon: Herd, tmp_path: Path) -> None:
    item = {"command": "true", "cwd": str(tmp_path), "folder": "runs/x"}
    status, answer = post(shared_daemon, {"jobs": [item]})
    assert (status, answer) == (
        422,
        {
            "error": "folder runs/x is relative: give an absolute path (a request has no "
            "working directory to take it from)"
        },
    )
    status, answer = post(shared_daemon, {"jobs": [{**item, "folder": str(tmp_path / "x")}]})
    assert status == 200, answer
    job = shared_daemon.wait_state(answer["ids"][0], "succeeded")
    assert job["job_dir"] == str(tmp_path / "x")


def deleted_log_job(herd: Herd, tmp_path: Path) -> tuple[int, Path, Path, Path]:
    """A running job that prints `first`, `after` once the file `deleted` is, and `last` once
    `go` is: (its id, its stdout log, deleted, go). (Also test_held_log_follow.py's.)"""
    deleted, go = tmp_path / "deleted", tmp_path / "go"
    job = herd.submit(
        f"echo first; while [ ! -e {deleted} ]; do sleep 0.02; done; echo after; "
        f"while [ ! -e {go} ]; do sleep 0.02; done; echo last"
    )
    log = Path(herd.wait_state(job, "running")["log_files"]["stdout"])
    return job, log, deleted, go


def test_log_follow_reads_on_a_log_deleted_under_the_job_and_says_so(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    job, log, deleted, go = deleted_log_job(shared_daemon, tmp_path)
    follow = shared_daemon.popen("log", "-f", str(job))
    try:
        assert follow.stdout is not None
        buffer = bytearray()
        assert read_line(follow.stdout.fileno(), buffer) == b"first"
        log.unlink()
        deleted.touch()
        assert read_line(follow.stdout.fileno(), buffer) == b"after"  # as tail -f: read on
        go.touch()
        out, err = follow.communicate(timeout=30)  # it ends with the job
    finally:
        follow.kill()
    assert (bytes(buffer) + out).decode() == "last\n"
    assert err.decode() == (
        f"gpuherd: job {job}: its log {log} was deleted; following what the job still writes "
        "to it, as tail -f does, until it ends (then that text is gone)\n"
    )
    assert follow.returncode == 0


def test_gpus_json_names_a_runs_job_job_id(shared_daemon: Herd, tmp_path: Path) -> None:
    go = tmp_path / "go"
    job = shared_daemon.running_until(go)
    (gpu,) = shared_daemon.job(job)["gpus"]
    gpus = shared_daemon.json("gpus")["gpus"]
    runs = next(g for g in gpus if g["index"] == gpu)["runs"]
    assert runs == [{"job": job, "job_id": job, "attempt": 1}]
    go.touch()
    shared_daemon.wait_state(job, "succeeded")
    assert os.path.exists(go)
