"""Security extras: files are served only from inside a job's folder (`../`, encoded `../`,
symlinks planted in a job folder), reflected input is escaped in raw HTML, and jobs inherit no
secret of the daemon's (no token, no open descriptor).

(test_auth.py covers the token gate and the token in jobs' environments;
test_dashboard_pages.py the escaping of names, commands and logs on the main pages;
test_sweeps.py and test_sweep_inputs.py sweep values reaching the program as one argument.)
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, urlencode

import pytest

from conftest import Herd, UnixConnection, wait_for

SECRET = "TOP-SECRET-0f9c3b: must never be served"
PASSWD = "root:x:0:"
EVIL = "<script>alert(1)</script>"
ESCAPED = "&lt;script&gt;alert(1)&lt;/script&gt;"


@dataclass
class Answer:
    status: int
    headers: http.client.HTTPMessage
    body: str


@dataclass
class Site:
    herd: Herd
    port: int
    token: str
    secret: Path
    plain: int  # a job with its own logs
    planted: int  # a job that replaced its logs by symlinks to the secret
    moved: int  # a job whose attempt folder the test replaced by a symlink to elsewhere
    evil: int  # a running job named EVIL

    def tcp(self, method: str, path: str, body: str | None = None, **headers: str) -> Answer:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=15)
        try:
            conn.request(method, path, body=body, headers={**self.auth, **headers})
            response = conn.getresponse()
            return Answer(
                response.status, response.headers, response.read().decode(errors="replace")
            )
        finally:
            conn.close()

    def unix(self, method: str, path: str, body: str | None = None, **headers: str) -> Answer:
        conn = UnixConnection(self.herd.client.socket_path, timeout=15)
        try:
            conn.request(method, path, body=body, headers=headers)
            response = conn.getresponse()
            return Answer(
                response.status, response.headers, response.read().decode(errors="replace")
            )
        finally:
            conn.close()

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"token {self.token}"}


def state_of(herd: Herd, job_id: int) -> str:
    return next(j["state"] for j in herd.client.get("/jobs", all=True)["jobs"] if j["id"] == job_id)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    root = tmp_path_factory.mktemp("files")
    herd = Herd(root / "home")
    secret = root / "outside" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text(SECRET + "\n")
    try:
        herd.start("--fake-gpus", "2", "--listen", "127.0.0.1:0")
        url = herd.cli("ui", "--url").stdout.strip()
        port = int(url.split(":")[2].split("/")[0])
        token = (herd.home / "ui_token").read_text().strip()
        plain = herd.submit("--gpus", "0", "echo own-output; echo own-error >&2")
        link = f"ln -sf {secret}"
        planted = herd.submit(
            "--gpus",
            "0",
            f'echo own-output; {link} "$GPUHERD_ATTEMPT_DIR/stdout.log"; '
            f'echo own-error >&2; {link} "$GPUHERD_ATTEMPT_DIR/stderr.log"; exit 1',
        )
        moved = herd.submit("--gpus", "0", "echo own-output; echo own-error >&2; exit 1")
        for job_id in (plain, moved):  # by the listing: it reads no log
            wait_for(lambda j=job_id: state_of(herd, j) in ("succeeded", "failed"), what="jobs")
        with contextlib.suppress(AssertionError):  # test_a_job_with_planted_links_... checks it
            wait_for(lambda: state_of(herd, planted) in ("succeeded", "failed"), 15, "job")
        # the moved job's attempt folder becomes a symlink to a folder outside every job
        elsewhere = root / "outside" / "attempt"
        elsewhere.mkdir()
        for name in ("stdout.log", "stderr.log"):
            (elsewhere / name).write_text(SECRET + "\n")
        folder = herd.home / "jobs" / str(moved) / "attempt-1"
        shutil.rmtree(folder)
        folder.symlink_to(elsewhere, target_is_directory=True)
        go = root / "go"
        evil = herd.submit(
            "--name",
            EVIL,
            "--project",
            EVIL,
            f"echo '{EVIL}'; while [ ! -e {go} ]; do sleep 0.05; done",
        )
        herd.wait_state(evil, "running")
        yield Site(herd, port, token, secret, plain, planted, moved, evil)
        go.touch()
    finally:
        herd.cleanup()


# ---- symlinks planted in a job's folder ---------------------------------------------------------


def read_api_log(site: Site, job: int, stream: str) -> str:
    return site.tcp("GET", f"/api/v1/jobs/{job}/log?stream={stream}").body


def read_follow(site: Site, job: int, stream: str) -> str:
    return site.tcp("GET", f"/api/v1/jobs/{job}/log/follow?stream={stream}").body


def read_cli_log(site: Site, job: int, stream: str) -> str:
    args = ["log", str(job)] + (["--stderr"] if stream == "stderr" else [])
    done = site.herd.cli(*args, check=False)
    return done.stdout + done.stderr


def read_show(site: Site, job: int, stream: str) -> str:
    done = site.herd.cli("show", "--json", str(job), check=False)
    return done.stdout + done.stderr


def read_page(site: Site, job: int, stream: str) -> str:
    return site.tcp("GET", f"/jobs/{job}").body


def read_page_stream(site: Site, job: int, stream: str) -> str:
    return site.tcp("GET", f"/ui/jobs/{job}/stream?attempt=1").body


READERS = {
    "api log": read_api_log,
    "api log follow": read_follow,
    "cli log": read_cli_log,
    "show stderr_tail": read_show,
    "job page": read_page,
    "job page stream": read_page_stream,
}


def test_a_job_with_planted_links_can_still_be_shown(site: Site) -> None:
    """Refusing the link must neither hide the job nor keep it from ending: its state and
    attempts stay visible, its exit is recorded."""
    for job_id in (site.planted, site.moved):
        shown = site.herd.json("show", str(job_id))
        assert (shown["state"], shown["exit_code"]) == ("failed", 1)
        assert SECRET not in json.dumps(shown)


def test_own_logs_are_served(site: Site) -> None:
    """The control: without a planted link every reader shows the job's own output."""
    assert read_api_log(site, site.plain, "stdout") == "own-output\n"
    assert read_api_log(site, site.plain, "stderr") == "own-error\n"
    assert "own-output" in read_follow(site, site.plain, "stdout")
    assert read_cli_log(site, site.plain, "stdout") == "own-output\n"
    assert "own-output" in read_page(site, site.plain, "stdout")
    assert "own-error" in read_page_stream(site, site.plain, "stderr")


@pytest.mark.parametrize("reader", sorted(READERS))
@pytest.mark.parametrize("stream", ["stdout", "stderr"])
def test_a_log_replaced_by_a_symlink_is_not_followed(site: Site, reader: str, stream: str) -> None:
    seen = READERS[reader](site, site.planted, stream)
    assert SECRET not in seen, f"{reader} served the file outside the job folder"


@pytest.mark.parametrize("reader", sorted(READERS))
def test_an_attempt_folder_replaced_by_a_symlink_is_not_followed(site: Site, reader: str) -> None:
    seen = READERS[reader](site, site.moved, "stderr") + READERS[reader](site, site.moved, "stdout")
    assert SECRET not in seen, f"{reader} served a file outside the job folder"


# ---- ../ in every form ---------------------------------------------------------------------------

TRAVERSALS = [
    "/api/v1/jobs/{job}/log/../../../../../../../../etc/passwd",
    "/api/v1/jobs/{job}/log/..%2f..%2f..%2f..%2f..%2f..%2fetc%2fpasswd",
    "/api/v1/jobs/..%2f..%2f..%2f..%2fetc%2fpasswd/log",
    "/api/v1/jobs/%2e%2e%2f%2e%2e%2f%2e%2e%2fetc%2fpasswd/log",
    "/api/v1/jobs/{job}/log?stream=../../../../../../etc/passwd",
    "/api/v1/jobs/{job}/log?stream=..%2f..%2f..%2f..%2f..%2f..%2fetc%2fpasswd",
    "/api/v1/jobs/{job}/log?stream=%2e%2e%2f%2e%2e%2f%2e%2e%2f%2e%2e%2f%2e%2e%2fetc%2fpasswd",
    "/api/v1/jobs/{job}/log?stream=/etc/passwd",
    "/api/v1/jobs/{job}/log?stream={secret}",
    "/api/v1/jobs/{job}/log?stream=stdout/../../../../../../../etc/passwd",
    "/api/v1/jobs/{job}/log?attempt=../../../etc/passwd",
    "/api/v1/jobs/{job}/log?attempt=-1",
    "/api/v1/jobs/{job}/log/follow?stream=../../../../../../etc/passwd",
    "/api/v1/jobs/{job}/log/follow?stream={secret}",
    "/api/v1/sweeps/..%2f..%2f..%2fetc%2fpasswd",
    "/static/../../../../../../etc/passwd",
    "/static/%2e%2e/%2e%2e/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
    "/static/..%2f..%2f..%2f..%2f..%2f..%2fetc%2fpasswd",
    "/static/%2e%2e%2f%2e%2e%2f%2e%2e%2f%2e%2e%2f%2e%2e%2fetc%2fpasswd",
    "/static/..%5c..%5c..%5cetc%5cpasswd",
    "/static//etc/passwd",
    "/static/%2fetc%2fpasswd",
    "/static/..%252f..%252fetc%252fpasswd",
    "/jobs/{job}/../../../../etc/passwd",
    "/jobs/{job}?attempt=../../../etc/passwd",
    "/ui/jobs/{job}/stream?attempt=../../../etc",
    "/ui/jobs/{job}/stream?resume=1:0:0&attempt=-5",
]


@pytest.mark.parametrize("transport", ["tcp", "unix"])
@pytest.mark.parametrize("path", TRAVERSALS)
def test_path_traversal_in_a_url_reaches_no_file_outside(
    site: Site, path: str, transport: str
) -> None:
    target = path.format(job=site.plain, secret=quote(str(site.secret), safe=""))
    answer = getattr(site, transport)("GET", target)
    assert answer.status < 500, (answer.status, answer.body[:300])
    assert PASSWD not in answer.body and SECRET not in answer.body, answer.body[:300]
    if target.startswith(("/api/", "/static/")):
        assert 400 <= answer.status < 500, (answer.status, answer.body[:300])


def test_logs_are_plain_text_never_html(site: Site) -> None:
    answer = site.tcp("GET", f"/api/v1/jobs/{site.evil}/log")
    assert answer.body == f"{EVIL}\n"  # served as it is, but as text:
    assert answer.headers["content-type"].startswith("text/plain")
    assert answer.headers["x-content-type-options"] == "nosniff"


# ---- reflected input in raw HTML ---------------------------------------------------------------


REFLECTED = [
    "/sweeps/" + quote(EVIL, safe=""),
    "/jobs?" + urlencode({"q": EVIL}),  # the search box
    "/jobs?" + urlencode({"project": EVIL}),
    "/jobs?" + urlencode({"state": EVIL}),
    "/jobs?" + urlencode({"page": EVIL}),
    "/ui/jobs?" + urlencode({"q": EVIL, "state": "running"}),
    "/jobs/999?" + urlencode({"attempt": EVIL}),
    "/jobs?" + urlencode({"submitted": EVIL}),
    "/" + quote(EVIL, safe=""),
]


@pytest.mark.parametrize("path", REFLECTED)
def test_reflected_input_is_escaped(site: Site, path: str) -> None:
    answer = site.unix("GET", path)
    assert answer.status < 500, (answer.status, answer.body[:300])
    assert EVIL not in answer.body, answer.body
    assert "<script>alert" not in answer.body


def test_a_running_job_with_a_script_name_is_escaped_on_every_page(site: Site) -> None:
    for path in ("/", "/ui/overview", "/gpus", "/ui/gpus", "/jobs", f"/jobs/{site.evil}"):
        answer = site.unix("GET", path)
        assert answer.status == 200, path
        assert EVIL not in answer.body, path
        assert ESCAPED in answer.body or f"#{site.evil}" in answer.body, path


def test_the_submit_form_echoes_bad_input_escaped(site: Site) -> None:
    form = urlencode({"commands": EVIL, "gpus": EVIL, "name": EVIL, "cwd": EVIL, "env": EVIL})
    answer = site.unix(
        "POST", "/submit", form, **{"Content-Type": "application/x-www-form-urlencoded"}
    )
    assert 400 <= answer.status < 500, (answer.status, answer.body[:300])
    assert EVIL not in answer.body
    assert ESCAPED in answer.body  # the form came back, with the input as text
    assert all(j["name"] != EVIL or j["id"] == site.evil for j in site.herd.ls_all())


# ---- no secret of the daemon's reaches a job ----------------------------------------------------

FDS = """
import json, os
fds = {}
for fd in os.listdir("/proc/self/fd"):
    try:
        fds[fd] = os.readlink("/proc/self/fd/" + fd)
    except OSError:  # the descriptor listdir itself used, closed by now
        pass
print(json.dumps({"uid": os.getuid(), "env": sorted(os.environ), "fds": fds}))
"""


def test_jobs_inherit_no_descriptor_and_no_token_of_the_daemon(site: Site) -> None:
    job_id = site.herd.submit("--gpus", "0", "--", "python3", "-c", FDS)
    assert site.herd.wait_state(job_id, "succeeded", "failed")["state"] == "succeeded"
    seen = json.loads(site.herd.cli("log", str(job_id)).stdout)
    daemon_uid = os.stat(f"/proc/{site.herd.pid}").st_uid
    assert seen["uid"] == daemon_uid  # the daemon's user, no other
    assert "GPUHERD_TOKEN" not in seen["env"]
    fds = {int(fd): target for fd, target in seen["fds"].items()}
    extra = {fd: t for fd, t in fds.items() if fd > 2 and not t.startswith("/proc/")}
    assert extra == {}, f"descriptors inherited from the daemon: {extra}"
    assert fds[1].endswith("stdout.log") and fds[2].endswith("stderr.log")
    assert site.token not in site.herd.cli("log", str(job_id)).stdout
    wait_for(lambda: site.herd.is_up(), what="the daemon")


# ---- named pipes planted in a job's folder ----------------------------------------------------


def test_named_pipes_planted_in_a_job_folder_never_hold_the_daemon(daemon: Herd) -> None:
    """Opening a FIFO waits for its other end: a job that made its log, its marker or the
    daemon's temporary job.json one must not freeze the daemon (and so the whole queue)."""
    job_id = daemon.submit(
        "--gpus",
        "0",
        'echo out; cd "$GPUHERD_ATTEMPT_DIR"; rm stdout.log; mkfifo stdout.log attempt.json.tmp; '
        'cd "$GPUHERD_JOB_DIR"; mkfifo SUCCESS FAILURE job.json.tmp',
    )
    daemon.wait_state(job_id, "succeeded")
    for args in (["log", str(job_id)], ["log", "-f", str(job_id)], ["log", "-n", "3", str(job_id)]):
        answer = daemon.cli(*args, check=False, timeout=30)
        assert answer.returncode == 1 and "stdout.log is not a plain file" in answer.stderr
    assert daemon.cli("log", "--stderr", str(job_id)).stdout == ""
    after = daemon.submit("--gpus", "0", "echo next")
    daemon.wait_state(after, "succeeded")
    assert daemon.cli("log", str(after)).stdout == "next\n"
