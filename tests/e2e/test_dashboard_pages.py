"""The dashboard's pages, fragments, forms and streams over HTTP (no browser needed).

Requests go over the daemon's Unix socket, which needs no token (test_auth.py covers TCP).
"""

from __future__ import annotations

import html
import http.client
import json
import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlencode

import pytest

from conftest import Herd, UnixConnection, wait_for

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
    conn = UnixConnection(herd.client.socket_path, timeout=30)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        response = conn.getresponse()
        return Answer(response.status, response.headers, response.read().decode())
    finally:
        conn.close()


def post(
    herd: Herd,
    path: str,
    htmx: bool = True,
    headers: dict[str, str] | None = None,
    **fields: str | list[str],
) -> Answer:
    sent = {**FORM, **({"HX-Request": "true"} if htmx else {}), **(headers or {})}
    return call(herd, "POST", path, urlencode(fields, doseq=True), sent)


def sse_events(
    herd: Herd, path: str, headers: dict[str, str], until: str
) -> list[tuple[str, str, str]]:
    """(event, id, data) of a stream, read until the event named `until`."""
    conn = UnixConnection(herd.client.socket_path, timeout=15)
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
    # The live fragment of a sweep page whose sweep is gone (`sweep rm`) says so: htmx swaps
    # a 200 in, while a 404 would leave the page showing the sweep.
    fragment = call(daemon, "GET", "/ui/sweeps/lr-grid")
    assert fragment.status == 200 and "No sweep named" in fragment.body
    # An id no job can have, past 64 bits, is no job either (it was "no such page").
    for missing_id in ("999", "99999999999999999999999", str(2**63)):
        missing = call(daemon, "GET", f"/jobs/{missing_id}")
        assert missing.status == 404 and "<html" in missing.body, missing_id
        assert f"no job {missing_id}: " in missing.body, missing_id
        fragment = call(daemon, "GET", f"/ui/jobs/{missing_id}")
        assert fragment.status == 404, missing_id
        assert json.loads(fragment.body)["error"].startswith(f"no job {missing_id}: ")
    # A page that is no page is an HTML page too, never the API's JSON.
    for path in ("/jobs/abc", "/nope", "/sweeps/a%2Fb"):
        answer = call(daemon, "GET", path)
        assert answer.status == 404 and "<html" in answer.body, (path, answer.body[:80])
        assert "no such page: " in answer.body or "No sweep" in answer.body, path
    # A job's page by another word than its number says what a job's page is.
    for word in ("abc", "%2312"):  # (`#12` copied whole from a page)
        answer = call(daemon, "GET", f"/jobs/{word}").body
        shown = repr(unquote(word)).replace("'", "&#39;")
        assert f"no such page: /jobs/{word}: {shown} is no job number (job 12" in answer
    # Nor is a number the API's paths do not take (api/id_params.py): `1_0` was job 10's page.
    for word in ("1_0", "1.0", "%2B1", "%D9%A3"):  # (+1, and an Arabic-Indic 3)
        answer = call(daemon, "GET", f"/jobs/{word}")
        shown = repr(unquote(word)).replace("'", "&#39;")
        assert answer.status == 404 and f"{shown} is no job number (job 12" in answer.body, word
    assert "is no job number" not in call(daemon, "GET", "/nope").body
    api = call(daemon, "GET", "/api/v1/jobs/abc")
    assert api.status == 422 and json.loads(api.body)["error"].startswith("invalid request")


def test_assets_are_served_from_the_package(shared_daemon: Herd) -> None:
    daemon = shared_daemon
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


def run_sweep(herd: Herd, cwd: Path, command: str, options: str) -> None:
    """`gpuherd sweep COMMAND OPTIONS...` submitted from `cwd` (results go to cwd/results)."""
    herd.cli("sweep", command, *options.split(), cwd=cwd)


def timed(herd: Herd, path: str) -> tuple[Answer, float]:
    """The answer to GET `path`, and the least time it took of REPS asks: the time one ask
    takes on a loaded machine is mostly how long it waited for a core (or a garbage
    collection), which the least of a few leaves out."""
    times = []
    for _ in range(REPS):
        started = time.monotonic()
        answer = call(herd, "GET", path)
        times.append(time.monotonic() - started)
        assert answer.status == 200, (path, answer.body[:500])
    return answer, min(times)


REPS = 3
CHEAPER = 5
"""How many times cheaper than reading every job a page of them must be: a page (one COUNT,
one LIMIT/OFFSET query, 50 views) of 10,504 jobs takes ~1/50 of the API's list of them all
(2 cores, unloaded); a page that read every job (and sliced it) takes about as long as it."""


def every_job_read(herd: Herd) -> float:
    """How long the daemon takes now to read every job (the API's list of them all): what a
    page of the jobs table must cost much less than, on this machine at this load (speed
    itself is benchmarks/' to measure)."""
    started = time.monotonic()
    answer = call(herd, "GET", "/api/v1/jobs?all=true")
    assert answer.status == 200 and answer.body.count('"id":') >= 10_504, answer.body[:500]
    return time.monotonic() - started


def test_the_jobs_table_pages_10000_jobs_without_reading_them_all(
    daemon: Herd, tmp_path: Path
) -> None:
    lines = [f"echo {i}" for i in range(10_500)]
    ids = daemon.submit_lines(lines, "--hold", "--gpus", "0")
    marker = daemon.submit("--hold", "--gpus", "0", "--name", "needle-job", "--", "true")
    run_sweep(daemon, tmp_path, "true {x}", "-p x 1 2 3 --hold --gpus 0 --name paged")
    first, first_time = timed(daemon, "/jobs")
    everything = every_job_read(daemon)
    assert first.body.count('<tr id="job-') == 50
    assert f'id="job-{marker + 3}"' in first.body  # newest first
    assert "1–50 of 10,504" in first.body  # counts of four digits and more are grouped
    assert first_time * CHEAPER < everything, f"first page {first_time:.3f}s, all {everything:.3f}s"
    assert '<option value="paged">paged</option>' in first.body  # the sweep filter
    # The held jobs alone: in the order they start, the last to start on the last page.
    last, deep_time = timed(daemon, "/ui/jobs?state=held&page=211")
    assert last.body.count('<tr id="job-') == 4 and f'id="job-{marker}"' in last.body
    assert "10,501–10,504 of 10,504, in the order they start" in last.body
    assert "later" not in last.body and "earlier" in last.body
    assert deep_time * CHEAPER < everything, f"last page {deep_time:.3f}s, all {everything:.3f}s"
    oldest = re.search(r'href="/jobs\?([^"]*)">oldest', first.body)
    assert oldest is not None and oldest.group(1) == "page=211"
    found, search_time = timed(daemon, "/ui/jobs?q=needle")
    assert found.body.count('<tr id="job-') == 1 and "needle-job" in found.body
    assert search_time * CHEAPER < everything, f"a search {search_time:.3f}s, all {everything:.3f}s"
    echo = call(daemon, "GET", "/ui/jobs?q=echo+10499").body
    assert echo.count('<tr id="job-') == 1 and f'id="job-{ids[10_499]}"' in echo
    by_id = call(daemon, "GET", f"/ui/jobs?q=%23{ids[7]}")
    assert by_id.body.count('<tr id="job-') == 1 and f'id="job-{ids[7]}"' in by_id.body
    id_first = call(daemon, "GET", f"/ui/jobs?q={ids[7]}")
    assert id_first.body.index('<tr id="job-') == id_first.body.index(f'<tr id="job-{ids[7]}"')
    literal = call(daemon, "GET", "/ui/jobs?q=%25").body  # % is text, not a wildcard
    assert "No job matches this filter." in literal
    swept = call(daemon, "GET", "/ui/jobs?sweep=paged").body
    assert swept.count('<tr id="job-') == 3 and "1–3 of 3" in swept
    both = call(daemon, "GET", f"/ui/jobs?sweep=paged&q=%23{marker + 2}").body
    assert both.count('<tr id="job-') == 1
    beyond = call(daemon, "GET", "/ui/jobs?page=9999").body
    assert "none on page 9,999" in beyond and "page=211" in beyond
    overview, overview_time = timed(daemon, "/")
    assert overview_time * CHEAPER < everything, (
        f"overview {overview_time:.3f}s, all {everything:.3f}s"
    )
    assert '<span class="n">10,504</span> <span class="pill state-held">' in overview.body
    grid = f"-p a {' '.join(map(str, range(40)))} -p b {' '.join(map(str, range(30)))}"
    run_sweep(daemon, tmp_path, "true {a} {b}", f"{grid} --hold --gpus 0 --name big")
    sweeps = call(daemon, "GET", "/sweeps").body
    assert "1,200 points" in sweeps and '<b class="n">1,200</b> queued' in sweeps  # (held too)
    assert 'aria-label="0 of 1,200 points done"' in sweeps and "<title>1,200 queued" in sweeps


def test_row_and_bulk_actions(shared_daemon: Herd) -> None:
    daemon = shared_daemon
    a = daemon.submit("--hold", "--gpus", "0", "--", "true")
    b = daemon.submit("--hold", "--gpus", "0", "--", "true")
    up = post(daemon, "/ui/jobs/act", action="prio-up", ids=str(a))
    assert up.status == 200 and f"job {a}: priority 1" in up.body
    assert up.headers["hx-trigger-after-swap"] == "refresh"  # the page's live parts
    assert daemon.job(a)["priority"] == 1
    post(daemon, "/ui/jobs/act", action="prio-down", ids=str(a))
    assert daemon.job(a)["priority"] == 0
    both = post(daemon, "/ui/jobs/act", action="release", ids=[str(a), str(b)])
    assert f"jobs {a}-{b}: queued" in both.body  # one line for the jobs with one answer
    for job_id in (a, b):
        daemon.wait_state(job_id, "succeeded")
    wrong = post(daemon, "/ui/jobs/act", action="pause", ids=str(a))
    assert 'class="flash error"' in wrong.body
    assert "hx-trigger-after-swap" not in wrong.headers  # nothing changed: nothing to refresh
    nothing = post(daemon, "/ui/jobs/act", action="kill")
    assert "no job selected" in nothing.body
    plain = post(daemon, "/ui/jobs/act", htmx=False, action="rm", ids=str(b), next="/jobs?q=x")
    assert plain.status == 303 and plain.headers["location"] == "/jobs?q=x"
    assert call(daemon, "GET", f"/api/v1/jobs/{b}").status == 404
    away = post(daemon, "/ui/jobs/act", htmx=False, action="rm", ids="999", next="//evil.example")
    assert away.headers["location"] == "/"


def test_a_number_past_64_bits_in_a_form_is_refused_by_name_before_anything_is_done(
    shared_daemon: Herd,
) -> None:
    """`ids=99999999999999999999` was answered "a number in the request is too large", which
    named no field, and prio + had already raised the first job's priority by then. Each form's
    number past 64 bits is refused as the CLI refuses it, with nothing done; the edit form's
    as its other mistakes, by the box's label (it was the API's JSON line, by field)."""
    daemon = shared_daemon
    job = daemon.submit("--hold", "--gpus", "0", "--", "true")
    huge = "99999999999999999999"

    def refused(answer: Answer, field: str) -> None:
        said = {"error": f"{field} {huge} is too large (at most 2**63 - 1)"}
        assert (answer.status, json.loads(answer.body)) == (422, said), answer.body

    for action in ("prio-up", "front", "hold", "rm"):
        refused(post(daemon, "/ui/jobs/act", action=action, ids=[str(job), huge]), "ids")
    refused(post(daemon, "/ui/jobs/act", action="before", ids=str(job), before=huge), "before")
    for field, label in (
        ("retries", "retries"),
        ("after", "after"),
        ("after_any", "after any end of"),
    ):
        edit = post(daemon, f"/ui/jobs/{job}/edit", name="x", **{field: huge})
        assert edit.status == 200, edit.body
        said = (
            f'"flash error" data-field="{field}">&#39;{label}&#39;: {huge} is too large '
            "(at most 2**63 - 1)<"
        )
        assert said in edit.body, edit.body
    shown = daemon.job(job)
    assert (shown["state"], shown["priority"], shown["name"]) == ("held", 0, None)
    assert "Traceback" not in (daemon.home / "daemon.log").read_text()


def test_the_edit_form_sends_only_what_changed(shared_daemon: Herd) -> None:
    daemon = shared_daemon
    job_id = daemon.submit("--hold", "--mem", "10000000000", "--timeout", "100s", "--", "true")
    page = call(daemon, "GET", f"/jobs/{job_id}").body
    shown = dict(re.findall(r'name="was\.(\w+)" value="([^"]*)"', page))
    assert shown["mem"] == "9.3 GiB" and shown["timeout"] == "1m40s"  # rounded for the eye
    path = f"/ui/jobs/{job_id}/edit"
    fields = dict(shown)
    was = {f"was.{name}": value for name, value in shown.items()}

    same = post(daemon, path, **fields, **was)
    assert "nothing changed" in same.body and 'class="flash error"' in same.body
    edited = post(
        daemon,
        path,
        **{**fields, "gpus": "2", "timeout": "", "name": "x", "retry_delay": "30s"},
        **was,
    )
    said = (
        "edited ('name' none -> x, 'GPUs' 1 -> 2, 'retry delay' none -> 30s,"
        " 'timeout' 1m40s -> none)"
    )
    assert f"job {job_id}: {said}" in html.unescape(edited.body)
    job = daemon.job(job_id)
    assert (job["gpus_requested"], job["timeout"], job["mem"]) == (2, None, 10_000_000_000)
    assert job["retry_delay"] == 30.0
    bad = post(daemon, path, **{**fields, "mem": "lots"}, **was)
    assert "&#39;memory per GPU&#39;: invalid size &#39;lots&#39;" in bad.body  # its box's label
    assert "Edit this job" in page
    ended = daemon.submit("--gpus", "0", "--", "true")
    daemon.wait_state(ended, "succeeded")
    assert "Edit this job" not in call(daemon, "GET", f"/jobs/{ended}").body


def test_retry_all_failed(daemon: Herd) -> None:
    failed = [daemon.submit("--gpus", "0", "--", "sh", "-c", "exit 3") for _ in range(2)]
    ok = daemon.submit("--gpus", "0", "--", "true")
    for job_id in failed:
        daemon.wait_state(job_id, "failed")
    daemon.wait_state(ok, "succeeded")
    answer = post(daemon, "/ui/jobs/retry-failed")
    assert "2 failed jobs queued again" in answer.body
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
    # The form's Slots left empty keeps a GPU's slots (it was 1: "GPU 3: 1 slot (was 2)").
    assert "GPU 3: 2 slots</div>" in post(daemon, "/ui/gpus", op="add", index="3", slots="").body
    # Each box named, with what was in it: both said "give the GPU index (and slots) as
    # whole numbers".
    bad = post(daemon, "/ui/gpus", op="drain", index="x").body
    assert "&#39;index&#39;: &#39;x&#39; is not a whole number</div>" in bad
    bad = post(daemon, "/ui/gpus", op="add", index="3", slots="2.5").body
    assert "&#39;slots&#39;: &#39;2.5&#39; is not a whole number</div>" in bad
    # Named by the form's box, not by `gpuherd gpus add`'s option ("slots (--slots) must").
    many = post(daemon, "/ui/gpus", op="add", index="3", slots="99999").body
    assert "&#39;slots&#39; must be 1 to 1024, got 99999</div>" in many


def test_the_submit_form(shared_daemon: Herd, tmp_path: Path) -> None:
    daemon = shared_daemon
    empty = post(daemon, "/submit", htmx=False, commands="  \n# nothing\n", name="keep-me")
    assert empty.status == 400 and "no command" in empty.body and 'value="keep-me"' in empty.body
    bad_mem = post(daemon, "/submit", htmx=False, commands="true", mem="lots", cwd=str(tmp_path))
    assert bad_mem.status == 400 and "memory" in bad_mem.body
    no_cwd = post(daemon, "/submit", htmx=False, commands="true", cwd=" ")
    assert (
        no_cwd.status == 400
        and "&#39;working directory&#39;: &#39;&#39; is not a folder" in no_cwd.body
    )
    assert "--cwd" not in no_cwd.body  # a form has no flags
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


def test_the_submit_form_checks_variables_as_the_cli_does(daemon: Herd, tmp_path: Path) -> None:
    fields = {"commands": "true", "cwd": str(tmp_path), "gpus": "0", "hold": "1"}
    rule = "is not an environment variable name: use letters, digits and _, not starting with a"
    for line in ("1A=x", "A-B=x", "=x"):
        bad = post(daemon, "/submit", htmx=False, env=f"SEED=1\n{line}", **fields)
        [said] = re.findall(r'id="submit-error">(.*?)</div>', bad.body)
        name = repr(line.partition("=")[0]).replace("'", "&#39;")  # as the page escapes it
        assert (
            bad.status == 400
            and said == f"&#39;environment changes&#39;: {name} {rule} digit (e.g. SEED)"
        )
    big = post(daemon, "/submit", htmx=False, env="BIG=" + "x" * 128 * 1024, **fields)
    [said] = re.findall(r'id="submit-error">(.*?)</div>', big.body)
    assert big.status == 400
    assert said == (
        "&#39;environment changes&#39;: &#39;BIG&#39; is 131,076 bytes with its name, over the "
        "128 KiB an environment variable may hold: put the value in a file and give its path"
    )
    assert daemon.ls_all() == []  # none of them submitted
    answer = post(daemon, "/submit", htmx=False, env="_A1=x\nB=" + "y" * 1000, **fields)
    assert answer.status == 303


def test_the_submit_form_takes_a_begin_time(shared_daemon: Herd, tmp_path: Path) -> None:
    daemon = shared_daemon
    fields = {"commands": "true", "cwd": str(tmp_path), "gpus": "0"}
    bad = post(daemon, "/submit", htmx=False, begin="tomorrow", **fields)
    assert bad.status == 400
    assert "&#39;begin&#39;: invalid time &#39;tomorrow&#39;: use now, +DURATION" in bad.body
    assert 'value="tomorrow"' in bad.body  # kept for correcting
    both = post(daemon, "/submit", htmx=False, begin="+1h", hold="1", **fields)
    [said] = re.findall(r'class="flash error"[^>]*>(.*?)</div>', both.body)
    assert both.status == 400 and "not both" in said and "--" not in said  # no flags in a form
    answer = post(daemon, "/submit", htmx=False, begin="+2h", **fields)
    assert answer.status == 303
    [job_id] = (int(i) for i in re.findall(r"\d+", answer.headers["location"]))
    job = daemon.job(job_id)
    assert job["state"] == "held" and job["reason"].startswith("held until ")
    assert job["begin"] == pytest.approx(time.time() + 7200, abs=60)
    # A begin already past starts the job now, as `submit --begin 2020-01-01` warns: the form
    # took it without a word.
    past = post(daemon, "/submit", htmx=False, begin="2020-01-01", **fields)
    assert past.status == 303 and "&begun=" in past.headers["location"]
    page = daemon.page(past.headers["location"])
    [said] = re.findall(r'class="flash warning submit-note">(.*?)</div>', page)
    assert html.unescape(said) == (
        "warning: 'begin' 2020-01-01 00:00 is already past: the job may start now"
    )
    assert "submit-note" not in daemon.page(answer.headers["location"])  # (+2h: nothing)


def test_the_log_stream_resumes_where_it_stopped(shared_daemon: Herd, tmp_path: Path) -> None:
    daemon = shared_daemon
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


def test_the_page_stream_says_change(shared_daemon: Herd) -> None:
    daemon = shared_daemon
    conn = UnixConnection(daemon.client.socket_path, timeout=15)
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


def test_every_page_gives_its_stream_the_mark_it_was_drawn_at(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    daemon = shared_daemon
    job = daemon.submit("--hold", "--", "true")
    run_sweep(daemon, tmp_path, "true {x}", "-p x 1 --hold --name marked")
    pages = {"/": "/ui/events", "/jobs": "/ui/events", "/gpus": "/ui/events"}
    pages |= {f"/jobs/{job}": f"/ui/jobs/{job}/stream", "/sweeps": "/ui/sweep-events"}
    pages["/sweeps/marked"] = "/ui/sweep-events/marked"
    for path, stream in pages.items():
        answer = call(daemon, "GET", path)
        urls = re.findall(r'sse-connect="([^"]*)"', answer.body)
        assert answer.status == 200 and len(urls) == 1, (path, answer.status, urls)
        mark = rf"{re.escape(stream)}\?([^\"]*&amp;)?since=\w+\.\d+(&amp;[^\"]*)?"
        assert re.fullmatch(mark, urls[0]), path


def test_a_page_stream_says_change_for_what_the_page_missed(daemon: Herd) -> None:
    [url] = re.findall(
        r'sse-connect="(/ui/events\?since=[\w.]+)"', call(daemon, "GET", "/jobs").body
    )
    daemon.submit("--hold", "--", "true")  # after the page was drawn, before it connects
    conn = UnixConnection(daemon.client.socket_path, timeout=15)
    try:
        conn.request("GET", url)
        response = conn.getresponse()
        assert response.readline() == b"retry: 2000\n"
        assert response.readline() == b"\n"
        assert response.readline() == b"event: change\n"
        assert response.readline() == b"data: 1\n"  # the change missed; no `connected`
    finally:
        conn.close()


def test_no_listener_unless_asked(shared_daemon: Herd) -> None:
    daemon = shared_daemon
    answer = daemon.client.get("/daemon/listen")
    assert answer == {
        "listening": False,
        "address": None,
        "url": None,
        "remote_url": None,
        "token_file": None,
    }


# ---- sweeps ---------------------------------------------------------------------------------

METRIC_CMD = (
    'python3 -c \'import json, os, sys; json.dump(dict(acc=float(sys.argv[1]), tag="t"),'
    ' open(os.path.join(sys.argv[2], "metrics.json"), "w"))\' {x} {run_dir}'
)


def sweep_done(herd: Herd, name: str, points: int) -> None:
    def done() -> bool:
        table = herd.client.get(f"/sweeps/{name}")
        return sum(1 for r in table["rows"] if r["state"] == "succeeded") == points

    # Its points run one after another on one GPU, each a Python start: a second each is
    # what a loaded CI machine gave (36 points took over 15 s there).
    wait_for(done, timeout=15.0 + points, what=f"sweep {name} to finish")


def metric_column(body: str, metric: str) -> list[str]:
    return re.findall(rf'data-metric="{metric}">([^<]*)<', body)


def test_the_sweep_pages(shared_daemon: Herd, tmp_path: Path) -> None:
    daemon = shared_daemon
    run_sweep(daemon, tmp_path, METRIC_CMD, "-p x 0.5 0.1 0.9 --gpus 0 --name acc-x")
    sweep_done(daemon, "acc-x", 3)
    listing = call(daemon, "GET", "/sweeps").body
    assert 'href="/sweeps/acc-x"' in listing and "3 points" in listing
    assert re.search(r'<b class="n">3</b> done', listing) and "100%" in listing
    page = call(daemon, "GET", "/sweeps/acc-x")
    assert page.status == 200
    assert page.body.count('<tr class="point') == 3
    assert metric_column(page.body, "acc") == ["0.5", "0.1", "0.9"]  # the grid's order
    assert metric_column(page.body, "tag") == ["t", "t", "t"]
    start = page.body.index('<svg class="plot"')
    plot = page.body[start : page.body.index("</svg>", start)]
    assert plot.count("<circle") == 3 and 'aria-label="acc against x"' in plot
    assert 'data-x-axis="linear"' in plot and "tag" not in plot  # text metrics are not plotted
    assert 'href="/jobs?sweep=acc-x"' in page.body
    ascending = call(daemon, "GET", "/sweeps/acc-x?sort=acc").body
    assert metric_column(ascending, "acc") == ["0.1", "0.5", "0.9"]
    assert 'href="/sweeps/acc-x?sort=-acc&amp;metric=acc&amp;param=x' in ascending  # click again
    descending = call(daemon, "GET", "/ui/sweeps/acc-x?sort=-acc").body
    assert metric_column(descending, "acc") == ["0.9", "0.5", "0.1"]
    assert "▼" in descending
    wrong = call(daemon, "GET", "/sweeps/acc-x?sort=nope&metric=nope&param=nope")
    assert wrong.status == 200 and "cannot sort by &#39;nope&#39;" in wrong.body
    assert 'aria-label="acc against x"' in wrong.body
    jobs = call(daemon, "GET", "/jobs?sweep=acc-x").body
    assert jobs.count('<tr id="job-') == 3 and '<option value="acc-x" selected>' in jobs
    assert call(daemon, "GET", "/ui/sweeps").status == 200


def test_a_sweep_page_plots_a_log_or_categorical_parameter(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    daemon = shared_daemon
    command = (
        "python3 -c 'import json, os, sys; a = sys.argv;"
        " json.dump(dict(loss=len(a[2]) * float(a[1])),"
        ' open(os.path.join(sys.argv[3], "metrics.json"), "w"))\' {lr} {opt} {run_dir}'
    )
    run_sweep(
        daemon, tmp_path, command, "-p lr 1e-4 1e-3 0.01 -p opt adam sgd --gpus 0 --name lr-opt"
    )
    sweep_done(daemon, "lr-opt", 6)
    page = call(daemon, "GET", "/sweeps/lr-opt").body
    assert 'data-x-axis="log"' in page and "lr (log scale)" in page  # 1e-4 is text, a number
    assert len(re.findall(r'<circle class="pt c[01]" cx="[\d.]+" cy="[\d.]+" r="5"', page)) == 6
    assert "opt: " in page  # coloured by opt, with a legend
    assert '<option value="opt" selected>opt</option>' in page
    by_opt = call(daemon, "GET", "/sweeps/lr-opt?param=opt&colour=-").body
    assert 'data-x-axis="category"' in by_opt and ">adam</text>" in by_opt
    assert by_opt.count('<circle class="pt c0"') == 6 and "opt: " not in by_opt


def test_the_sweep_stream_says_change_for_its_own_jobs(daemon: Herd, tmp_path: Path) -> None:
    run_sweep(daemon, tmp_path, "true {x}", "-p x 1 2 --hold --gpus 0 --name streamed")
    held = [job["id"] for job in daemon.ls_all() if job["state"] == "held"]
    conn = UnixConnection(daemon.client.socket_path, timeout=15)
    released = threading.Timer(0.5, daemon.cli, ("release", str(held[0])))
    try:
        conn.request("GET", "/ui/sweep-events/streamed")
        response = conn.getresponse()
        assert response.readline() == b"retry: 2000\n"
        assert response.readline() == b"\n"
        assert response.readline() == b"event: change\n"  # at once: fetch what you missed
        assert response.readline() == b"data: connected\n"
        assert response.readline() == b"\n"
        other = daemon.submit("--gpus", "0", "--", "true")
        daemon.wait_state(other, "succeeded")
        time.sleep(1.5)  # had the other job's changes made an event, it would be sent by now
        started = time.monotonic()
        released.start()
        assert response.readline() == b"event: change\n"
        assert time.monotonic() - started >= 0.5, "a job of no sweep changed the sweep's page"
    finally:
        released.cancel()
        if released.ident:
            released.join()
        conn.close()


def test_sweep_pages_escape_names_values_and_metrics(shared_daemon: Herd, tmp_path: Path) -> None:
    daemon = shared_daemon
    command = (
        'python3 -c \'import json, os, sys; json.dump(dict([("<i>k</i>", 1),'
        ' ("note", "<script>alert(1)</script>")]),'
        ' open(os.path.join(sys.argv[1], "metrics.json"), "w"))\' {run_dir} {x}'
    )
    run_sweep(daemon, tmp_path, command, "-p x <b> 2 --gpus 0 --name esc<aped>")
    sweep_done(daemon, "esc<aped>", 2)
    for path in ("/sweeps", "/ui/sweeps", "/sweeps/esc%3Caped%3E?param=x&metric=%3Ci%3Ek%3C/i%3E"):
        body = call(daemon, "GET", path).body
        assert "<script>alert" not in body and "<i>k" not in body and "<b>" not in body, path
        assert "esc&lt;aped&gt;" in body, path
    page = call(daemon, "GET", "/sweeps/esc%3Caped%3E?param=x&metric=%3Ci%3Ek%3C/i%3E").body
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "&lt;i&gt;k&lt;/i&gt;" in page
    assert 'aria-label="&lt;i&gt;k&lt;/i&gt; against x"' in page  # plotted, as text
    assert ">&lt;b&gt;</text>" in page  # a categorical tick


def test_the_forms_take_only_gpus(shared_daemon: Herd, tmp_path: Path) -> None:
    daemon = shared_daemon
    fields = {"commands": "true", "cwd": str(tmp_path), "hold": "1"}
    bad = post(daemon, "/submit", htmx=False, only_gpus="two", **fields)
    assert (
        bad.status == 400 and "&#39;only on GPUs&#39;: invalid GPU index &#39;two&#39;" in bad.body
    )
    answer = post(daemon, "/submit", htmx=False, only_gpus="3, 1", **fields)
    assert answer.status == 303
    [job_id] = (int(i) for i in re.findall(r"\d+", answer.headers["location"]))
    assert daemon.job(job_id)["only_gpus"] == [1, 3]
    page = call(daemon, "GET", f"/jobs/{job_id}").body
    assert "(asked for 1 GPU, of GPUs 1,3 only)" in page
    shown = dict(re.findall(r'name="was\.(\w+)" value="([^"]*)"', page))
    assert shown["only_gpus"] == "1,3"
    was = {f"was.{name}": value for name, value in shown.items()}
    path = f"/ui/jobs/{job_id}/edit"
    edited = post(daemon, path, **{**shown, "only_gpus": "2"}, **was)
    assert f"job {job_id}: edited (&#39;only on GPUs&#39; 1,3 -&gt; 2)" in edited.body
    cleared = post(daemon, path, **{**shown, "only_gpus": ""}, **{**was, "was.only_gpus": "2"})
    said = f"job {job_id}: edited ('only on GPUs' 2 -> any)"
    assert said in html.unescape(cleared.body)  # blank: unset
    assert daemon.job(job_id)["only_gpus"] == []


def test_many_commands_from_the_form_land_on_a_short_url(daemon: Herd, tmp_path: Path) -> None:
    # 20,000 ids, comma-separated, made a URL of 115 KB that chromium's request failed on.
    commands = "\n".join(f"echo {i}" for i in range(2000))
    answer = post(daemon, "/submit", htmx=False, commands=commands, cwd=str(tmp_path), hold="1")
    assert answer.status == 303
    location = answer.headers["location"]
    first, last = (int(i) for i in re.findall(r"\d+", location))
    assert location == f"/jobs?submitted={first}-{last}" and last - first == 1999
    page = call(daemon, "GET", location).body
    assert f'Submitted 2,000 jobs: <a href="/jobs/{first}">#{first}</a> … ' in page
    assert "Submitted job" not in call(daemon, "GET", "/jobs?submitted=x").body  # no banner


def test_priority_buttons_at_either_end_say_so_in_the_flash(shared_daemon: Herd) -> None:
    """prio - on a job at the lowest priority (-2**63) was the API's JSON line, 422, "a
    number in the request is too large", when it is the step that would go too low: it is
    the page's message, which says the job is there already (prio + at the highest too)."""
    daemon = shared_daemon
    job = daemon.submit("--hold", "--gpus", "0", "--", "true")
    for priority, action, end in (
        (-(2**63), "prio-down", "lowest"),
        (2**63 - 1, "prio-up", "highest"),
    ):
        daemon.cli("priority", str(job), str(priority))
        answer = post(daemon, "/ui/jobs/act", action=action, ids=str(job))
        said = f"job {job}: already at the {end} priority, {priority}"
        assert answer.status == 200 and 'class="flash error"' in answer.body, answer.body
        assert html.escape(said) in answer.body
        assert daemon.job(job)["priority"] == priority
