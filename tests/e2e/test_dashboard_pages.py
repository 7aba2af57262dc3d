"""The dashboard's pages, fragments, forms and streams over HTTP (no browser needed).

Requests go over the daemon's Unix socket, which needs no token (test_auth.py covers TCP).
"""

from __future__ import annotations

import http.client
import re
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlencode

from conftest import Herd, wait_for
from gpuherd.client import _UnixConnection

FORM = {"Content-Type": "application/x-www-form-urlencoded"}


@dataclass
class Answer:
    status: int
    headers: http.client.HTTPMessage
    body: str


def call(
    herd: Herd,
    method: str,
    path: str,
    body: str | None = None,
    headers: dict[str, str] | None = None,
) -> Answer:
    conn = _UnixConnection(herd.client.socket_path, timeout=30)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        response = conn.getresponse()
        return Answer(response.status, response.headers, response.read().decode())
    finally:
        conn.close()


def post(herd: Herd, path: str, htmx: bool = True, **fields: str | list[str]) -> Answer:
    headers = {**FORM, "HX-Request": "true"} if htmx else FORM
    return call(herd, "POST", path, urlencode(fields, doseq=True), headers)


def sse_events(
    herd: Herd, path: str, headers: dict[str, str], until: str
) -> list[tuple[str, str, str]]:
    """(event, id, data) of a stream, read until the event named `until`."""
    conn = _UnixConnection(herd.client.socket_path, timeout=15)
    events: list[tuple[str, str, str]] = []
    try:
        conn.request("GET", path, headers=headers)
        response = conn.getresponse()
        assert response.status == 200
        name, ident, data = "message", "", []
        while True:
            line = response.readline().decode()
            assert line, f"stream ended before '{until}': {events}"
            line = line.rstrip("\n")
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("id: "):
                ident = line[4:]
            elif line.startswith("data: "):
                data.append(line[6:])
            elif not line and data:
                events.append((name, ident, "\n".join(data)))
                if name == until:
                    return events
                name, ident, data = "message", "", []
    finally:
        conn.close()


def test_every_page_renders_on_first_load(daemon: Herd) -> None:
    job_id = daemon.submit("--gpus", "0", "--name", "first-load", "--", "echo", "hello")
    daemon.wait_state(job_id, "succeeded")
    for path, text in [
        ("/", "GPU 3"),
        ("/jobs", "first-load"),
        (f"/jobs/{job_id}", "hello"),
        ("/submit", "Commands"),
        ("/gpus", "Fake GPU"),
        ("/sweeps", "No sweeps yet"),
    ]:
        answer = call(daemon, "GET", path)
        assert answer.status == 200, (path, answer.body)
        assert text in answer.body, path
        assert "script-src 'self'" in answer.headers["content-security-policy"]
    gone = call(daemon, "GET", "/sweeps/lr-grid")
    assert gone.status == 404 and "No sweep named" in gone.body
    missing = call(daemon, "GET", "/jobs/999")
    assert missing.status == 404 and "no job 999" in missing.body and "<html" in missing.body


def test_assets_are_served_from_the_package(daemon: Herd) -> None:
    htmx = call(daemon, "GET", "/static/htmx.min.js")
    assert htmx.status == 200 and htmx.body.startswith("/*! htmx 2.0.11")
    sse = call(daemon, "GET", "/static/sse.min.js")
    assert sse.status == 200 and 'defineExtension("sse"' in sse.body
    assert call(daemon, "GET", "/static/dashboard.css").status == 200
    assert call(daemon, "GET", "/static/../views.py").status == 404


def test_names_commands_and_logs_are_escaped(daemon: Herd) -> None:
    evil = "<script>alert(1)</script>"
    job_id = daemon.submit(
        "--gpus", "0", "--name", evil, "--project", evil, "--", "echo", '<b onmouseover="x">'
    )
    daemon.wait_state(job_id, "succeeded")
    for path in ("/", "/ui/overview", "/jobs", "/ui/jobs", f"/jobs/{job_id}", f"/ui/jobs/{job_id}"):
        body = call(daemon, "GET", path).body
        assert "<script>alert" not in body, path
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body, path
    page = call(daemon, "GET", f"/jobs/{job_id}").body
    assert "&lt;b onmouseover=&#34;x&#34;&gt;" in page  # the log line, as text
    stream = sse_events(daemon, f"/ui/jobs/{job_id}/stream?attempt=1", {}, until="end")
    logged = "".join(data for name, _, data in stream if name == "stdout")
    assert logged == '&lt;b onmouseover="x"&gt;\n'


def test_the_jobs_table_pages_10000_jobs_quickly(daemon: Herd) -> None:
    lines = [f"echo {i}" for i in range(10_500)]
    ids = daemon.submit_lines(lines, "--hold", "--gpus", "0")
    marker = daemon.submit("--hold", "--gpus", "0", "--name", "needle-job", "--", "true")
    started = time.monotonic()
    first = call(daemon, "GET", "/jobs")
    first_time = time.monotonic() - started
    assert first.status == 200
    assert first.body.count('<tr id="job-') == 50
    assert f'id="job-{marker}"' in first.body  # newest first
    assert "1–50 of 10501" in first.body
    assert first_time < 2.0, f"the first page took {first_time:.2f}s"
    last = call(daemon, "GET", "/ui/jobs?state=held&page=211")
    assert last.body.count('<tr id="job-') == 1 and f'id="job-{ids[0]}"' in last.body
    assert "older" not in last.body and "newer" in last.body
    found = call(daemon, "GET", "/ui/jobs?q=needle")
    assert found.body.count('<tr id="job-') == 1 and "needle-job" in found.body
    by_id = call(daemon, "GET", f"/ui/jobs?q=%23{ids[7]}")
    assert by_id.body.count('<tr id="job-') == 1 and f'id="job-{ids[7]}"' in by_id.body
    id_first = call(daemon, "GET", f"/ui/jobs?q={ids[7]}")
    assert id_first.body.index('<tr id="job-') == id_first.body.index(f'<tr id="job-{ids[7]}"')
    started = time.monotonic()
    assert call(daemon, "GET", "/").status == 200
    assert time.monotonic() - started < 2.0


def test_row_and_bulk_actions(daemon: Herd) -> None:
    a = daemon.submit("--hold", "--gpus", "0", "--", "true")
    b = daemon.submit("--hold", "--gpus", "0", "--", "true")
    up = post(daemon, "/ui/jobs/act", action="prio-up", ids=str(a))
    assert up.status == 200 and f"job {a}: priority 1" in up.body
    assert up.headers["hx-trigger"] == "refresh"
    assert daemon.job(a)["priority"] == 1
    post(daemon, "/ui/jobs/act", action="prio-down", ids=str(a))
    assert daemon.job(a)["priority"] == 0
    both = post(daemon, "/ui/jobs/act", action="release", ids=[str(a), str(b)])
    assert f"job {a}: queued" in both.body and f"job {b}: queued" in both.body
    for job_id in (a, b):
        daemon.wait_state(job_id, "succeeded")
    wrong = post(daemon, "/ui/jobs/act", action="pause", ids=str(a))
    assert 'class="flash error"' in wrong.body
    nothing = post(daemon, "/ui/jobs/act", action="kill")
    assert "no job selected" in nothing.body
    plain = post(daemon, "/ui/jobs/act", htmx=False, action="rm", ids=str(b), next="/jobs?q=x")
    assert plain.status == 303 and plain.headers["location"] == "/jobs?q=x"
    assert call(daemon, "GET", f"/api/v1/jobs/{b}").status == 404
    away = post(daemon, "/ui/jobs/act", htmx=False, action="rm", ids="999", next="//evil.example")
    assert away.headers["location"] == "/"


def test_retry_all_failed(daemon: Herd) -> None:
    failed = [daemon.submit("--gpus", "0", "--", "sh", "-c", "exit 3") for _ in range(2)]
    ok = daemon.submit("--gpus", "0", "--", "true")
    for job_id in failed:
        daemon.wait_state(job_id, "failed")
    daemon.wait_state(ok, "succeeded")
    answer = post(daemon, "/ui/jobs/retry-failed")
    assert "2 failed job(s) queued again" in answer.body
    for job_id in failed:
        wait_for(lambda j=job_id: daemon.job(j)["attempt"] == 2, what=f"job {job_id} retried")
    assert daemon.job(ok)["attempt"] == 1


def test_gpu_actions(daemon: Herd) -> None:
    assert "draining" in post(daemon, "/ui/gpus", op="drain", index="1").body
    assert daemon.client.get("/gpus")["gpus"][1]["state"] == "draining"
    assert "enabled" in post(daemon, "/ui/gpus", op="enable", index="1").body
    assert "removed" in post(daemon, "/ui/gpus", op="remove", index="3").body
    assert [g["index"] for g in daemon.client.get("/gpus")["gpus"]] == [0, 1, 2]
    assert "added" in post(daemon, "/ui/gpus", op="add", index="3", slots="2").body
    assert daemon.client.get("/gpus")["gpus"][3]["slots"] == 2
    assert 'class="flash error"' in post(daemon, "/ui/gpus", op="drain", index="x").body


def test_the_submit_form(daemon: Herd, tmp_path: Path) -> None:
    empty = post(daemon, "/submit", htmx=False, commands="  \n# nothing\n", name="keep-me")
    assert empty.status == 400 and "no command" in empty.body and 'value="keep-me"' in empty.body
    bad_mem = post(daemon, "/submit", htmx=False, commands="true", mem="lots", cwd=str(tmp_path))
    assert bad_mem.status == 400 and "memory" in bad_mem.body
    answer = post(
        daemon,
        "/submit",
        htmx=False,
        commands="echo one\necho $SEED > seed.txt\n",
        name="pair",
        gpus="0",
        priority="3",
        cwd=str(tmp_path),
        env="SEED=42",
        hold="1",
    )
    assert answer.status == 303
    first, second = (int(i) for i in re.findall(r"\d+", answer.headers["location"]))
    job = daemon.job(second)
    assert job["state"] == "held" and job["name"] == "pair" and job["priority"] == 3
    assert job["env_overrides"] == {"SEED": "42"} and job["cwd"] == str(tmp_path)
    post(daemon, "/ui/jobs/act", action="release", ids=f"{first}-{second}")
    daemon.wait_state(second, "succeeded")
    assert (tmp_path / "seed.txt").read_text() == "42\n"


def test_the_log_stream_resumes_where_it_stopped(daemon: Herd, tmp_path: Path) -> None:
    flag = tmp_path / "go"
    script = f"echo one; echo oops >&2; while [ ! -e {flag} ]; do sleep 0.05; done; echo two"
    job_id = daemon.submit("--gpus", "0", "--", "sh", "-c", script)
    path = f"/ui/jobs/{job_id}/stream"
    first = sse_events(daemon, path, {}, until="stderr")
    names = [name for name, _, _ in first]
    assert names[:2] == ["state", "stdout"] and first[1][2] == "one\n"
    resume = first[-1][1]
    assert resume == "1:4:5"  # attempt 1, 4 bytes of stdout, 5 of stderr
    flag.touch()
    rest = sse_events(daemon, path, {"Last-Event-ID": resume}, until="end")
    text = [(name, data) for name, _, data in rest if name in ("stdout", "stderr")]
    assert text == [("stdout", "two\n")]  # nothing again, nothing lost
    again = sse_events(daemon, f"{path}?resume=1:0:5", {}, until="end")
    assert [d for n, _, d in again if n == "stdout"] == ["one\ntwo\n"]


def test_the_page_stream_says_change(daemon: Herd) -> None:
    conn = _UnixConnection(daemon.client.socket_path, timeout=15)
    try:
        conn.request("GET", "/ui/events")
        response = conn.getresponse()
        assert response.readline() == b"retry: 2000\n"
        assert response.readline() == b"\n"
        assert response.readline() == b"event: change\n"  # at once: fetch what you missed
        assert response.readline() == b"data: connected\n"
        assert response.readline() == b"\n"
        for _ in range(5):
            daemon.submit("--hold", "--", "true")
        assert response.readline() == b"event: change\n"
    finally:
        conn.close()


def test_no_listener_unless_asked(daemon: Herd) -> None:
    answer = daemon.client.get("/daemon/listen")
    assert answer == {
        "listening": False,
        "address": None,
        "url": None,
        "remote_url": None,
        "token_file": None,
    }
