"""A daemon killed (SIGKILL) while a Python API call waits for its answer: the call raises
gpuherd's own sentence, saying the daemon went away and what to do, with the socket's error
kept as its __cause__. It said Python's words: `lost the connection to the daemon:
ConnectionResetError(104, 'Connection reset by peer')`, or `... the answer stopped in the
middle`, with nothing to do.

Each call is killed in flight at the same point: once its request is on the socket. The
daemon is stopped (SIGSTOP) first, so it has not read the request when it dies, and the
kernel resets the connection (ECONNRESET), the chaos test's case; `read_first` lets it read
the request (a wait's long poll it holds), so its death closes the connection instead.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import psutil
import pytest

import gpuherd
from conftest import Herd, wait_dead, wait_for, wait_for_long_poll
from gpuherd import client as client_module
from gpuherd import client_http
from gpuherd.errors import DaemonError, HerdError, LostConnection

WENT = (
    "lost the connection to the daemon: it went away before it answered in full (a stop, "
    "a restart or a crash)"
)
ASK_AGAIN = WENT + "; start it again if none runs (`gpuherd daemon start`), then ask again"
MAYBE_DONE = (
    WENT + "; it may have been done before the daemon went: `gpuherd ls --all` shows the "
    "queue as it is (after `gpuherd daemon start`)"
)
GONE = (
    "the daemon went away while this waited for jobs, and none came back for {home}: start it "
    "again (`gpuherd daemon start`, or gpuherd.connect()): jobs go on meanwhile, and the next "
    "daemon re-attaches to them. Then wait again"
)


@contextmanager
def killed_once_sent(
    daemon: Herd, monkeypatch: pytest.MonkeyPatch, path: str, read_first: bool = False
) -> Iterator[threading.Event]:
    """The daemon is SIGKILLed (by its pid) once a request to `path` (its query left out) is
    on its socket; the event is set once it is dead. `read_first`: it is given the time to
    read the request first (it is killed from another thread, once the request is sent)."""
    process = psutil.Process(daemon.pid)
    real_send = client_http.send
    sent, dead = threading.Event(), threading.Event()

    def send(
        sock: client_http.Sender, method: str, asked: str, payload: bytes | None, home: Path
    ) -> None:
        if sent.is_set() or asked.split("?")[0] != path:
            real_send(sock, method, asked, payload, home)
            return
        if not read_first:
            process.send_signal(signal.SIGSTOP)
        real_send(sock, method, asked, payload, home)
        sent.set()
        if not read_first:
            kill()

    def kill() -> None:
        process.send_signal(signal.SIGKILL)
        wait_dead(process)
        dead.set()

    killer = threading.Thread(target=lambda: sent.wait(30) and read_first and kill())
    monkeypatch.setattr(client_http, "send", send)  # (a request's, send_and_answer's)
    monkeypatch.setattr(client_module, "send", send)  # (a download's and a stream's)
    killer.start()
    try:
        yield dead
    finally:
        sent.set()
        killer.join(30)
    assert dead.is_set(), "the daemon was not killed: the call sent nothing to it"


def assert_lost(error: BaseException, said: str) -> None:
    """`error` says `said`, one line, and keeps the socket's own error as its cause."""
    assert str(error) == said
    cause = error.__cause__
    while isinstance(cause, HerdError):  # (a wait's line is caused by the lost connection)
        cause = cause.__cause__
    assert isinstance(cause, OSError | client_http.BadResponse), repr(error.__cause__)


@pytest.fixture
def herd_api(daemon: Herd, monkeypatch: pytest.MonkeyPatch) -> gpuherd.Herd:
    monkeypatch.setattr(client_module, "RESTART_GRACE", 1.0)  # none comes back: said soon
    return gpuherd.connect(daemon.home, start=False)


def test_a_submit_cut_off_says_it_may_have_been_done(
    daemon: Herd, herd_api: gpuherd.Herd, monkeypatch: pytest.MonkeyPatch
) -> None:
    with (
        killed_once_sent(daemon, monkeypatch, "/jobs"),
        pytest.raises(LostConnection) as caught,
    ):
        herd_api.submit("true", gpus=0)
    assert_lost(caught.value, MAYBE_DONE)
    assert isinstance(caught.value.__cause__, ConnectionResetError)  # the chaos test's case


@pytest.mark.parametrize("read_first", [False, True], ids=["unread", "read"])
def test_a_wait_cut_off_says_to_start_a_daemon(
    daemon: Herd, herd_api: gpuherd.Herd, monkeypatch: pytest.MonkeyPatch, read_first: bool
) -> None:
    job = herd_api.submit("sleep 60", gpus=0)
    with (
        killed_once_sent(daemon, monkeypatch, "/jobs/wait", read_first),
        pytest.raises(DaemonError) as caught,
    ):
        job.wait()
    assert_lost(caught.value, GONE.format(home=daemon.home))
    assert isinstance(caught.value.__cause__, LostConnection)


def test_a_wait_whose_time_runs_out_meanwhile_says_to_ask_again(
    daemon: Herd, herd_api: gpuherd.Herd, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(client_module, "RESTART_GRACE", 60.0)  # the wait's own time ends first
    job = herd_api.submit("sleep 60", gpus=0)
    with (
        killed_once_sent(daemon, monkeypatch, "/jobs/wait"),
        pytest.raises(LostConnection) as caught,
    ):
        job.wait(timeout=3)
    assert_lost(caught.value, ASK_AGAIN)


def test_as_completed_cut_off_says_to_start_a_daemon(
    daemon: Herd, herd_api: gpuherd.Herd, monkeypatch: pytest.MonkeyPatch
) -> None:
    job = herd_api.submit("sleep 60", gpus=0)
    with (
        killed_once_sent(daemon, monkeypatch, "/jobs/wait"),
        pytest.raises(DaemonError) as caught,
    ):
        next(gpuherd.as_completed([job]))
    assert_lost(caught.value, GONE.format(home=daemon.home))


@pytest.mark.parametrize(
    ("path", "call"),
    [
        ("/jobs", lambda herd, job: herd.jobs()),
        ("/jobs/{id}", lambda herd, job: job.info()),
        ("/sweeps", lambda herd, job: herd.sweeps()),
    ],
    ids=["jobs", "info", "sweeps"],
)
def test_a_read_cut_off_says_to_ask_again(
    daemon: Herd,
    herd_api: gpuherd.Herd,
    monkeypatch: pytest.MonkeyPatch,
    path: str,
    call: Callable[[gpuherd.Herd, gpuherd.Job], object],
) -> None:
    job = herd_api.submit("true", gpus=0)
    asked = path.format(id=job.id)
    with killed_once_sent(daemon, monkeypatch, asked), pytest.raises(LostConnection) as caught:
        call(herd_api, job)
    assert_lost(caught.value, ASK_AGAIN)


def test_a_log_read_cut_off_says_to_ask_again(
    daemon: Herd, herd_api: gpuherd.Herd, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`job.logs()` asks the job's state after a refusal, but not after a lost connection:
    the daemon is gone by then, and it raised NotRunning, which no `except LostConnection`
    caught, and which said nothing of the connection lost."""
    job = herd_api.submit("echo hi", gpus=0)
    assert job.wait(timeout=30) == "succeeded"
    with (
        killed_once_sent(daemon, monkeypatch, f"/jobs/{job.id}/log"),
        pytest.raises(LostConnection) as caught,
    ):
        job.logs()
    assert_lost(caught.value, ASK_AGAIN)


def test_a_follow_cut_off_says_to_start_a_daemon(
    daemon: Herd, herd_api: gpuherd.Herd, monkeypatch: pytest.MonkeyPatch
) -> None:
    job = herd_api.submit("echo one; sleep 60", gpus=0)
    wait_for(lambda: "one" in job.logs(), what="the job's first line")
    texts = job.follow()
    with (
        killed_once_sent(daemon, monkeypatch, f"/jobs/{job.id}/log/follow"),
        pytest.raises(DaemonError) as caught,
    ):
        list(texts)
    assert_lost(
        caught.value,
        f"stopped following job {job.id}'s log: the daemon went away, and no daemon came back "
        "within 1 s: start it again (`gpuherd daemon start`), then "
        "`job.follow()` follows on",  # (was the CLI's `gpuherd log -f 7`)
    )


def test_a_program_whose_wait_loses_its_daemon(daemon: Herd) -> None:
    """As the chaos test saw it: a Python program waits for a job, and its daemon is killed
    (by its pid) while the program holds its long poll."""
    job_id = daemon.submit("--gpus", "0", "--", "sleep 60")
    program = (
        "import gpuherd, gpuherd.client\n"
        "gpuherd.client.RESTART_GRACE = 1.0\n"
        f"gpuherd.connect({str(daemon.home)!r}, start=False).job({job_id}).wait()\n"
    )
    waiting = subprocess.Popen(
        [sys.executable, "-c", program], env=daemon.env, stderr=subprocess.PIPE, text=True
    )
    try:
        wait_for_long_poll(psutil.Process(waiting.pid))
        daemon.kill9()
        _, err = waiting.communicate(timeout=60)
    finally:
        waiting.kill()
    *_, last = err.splitlines()
    assert last == "gpuherd.errors.DaemonError: " + GONE.format(home=daemon.home), err
    assert "LostConnection: " + WENT in err  # the cause, shown above it
