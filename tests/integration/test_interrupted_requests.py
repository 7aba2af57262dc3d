"""Ctrl-C once a `submit --file` or a verb on many jobs (`rm`) has gone to the daemon, which
carries out what it was sent whole: a bare `gpuherd: interrupted` read as the request called
off, where every job had been queued (submitting the file again queued each twice) or removed.
The line now says it may be done, and where to look.

The daemon is held (SIGSTOP) while the command sends its request and waits for the answer
(a connection held open), so the Ctrl-C comes once the request is sent, before its answer;
let go, the daemon carries it out."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator

import psutil
import pytest

from conftest import Herd, communicated, wait_for, wait_for_long_poll

JOBS = 50  # (a request that fits in the socket's buffer: sent whole while the daemon is held)


@pytest.fixture
def held(daemon: Herd) -> Iterator[int]:
    """The daemon stopped (SIGSTOP) for the test's request, let go (SIGCONT) at the end."""
    pid = daemon.pid
    os.kill(pid, signal.SIGSTOP)
    try:
        yield pid
    finally:
        os.kill(pid, signal.SIGCONT)


def interrupted_once_sent(daemon: Herd, held: int, *args: str) -> str:
    """Run `gpuherd ARGS`, interrupt it (Ctrl-C) once it waits for the daemon's answer, let the
    daemon go on; its stderr (exit 130)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "gpuherd", *args],
        env=daemon.env,
        cwd=daemon.home.parent,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for_long_poll(psutil.Process(proc.pid), held=1.0)  # sent: waits for the answer
        proc.send_signal(signal.SIGINT)
        out, err = communicated(proc)
    finally:
        proc.kill()
        os.kill(held, signal.SIGCONT)
    assert (proc.returncode, out) == (130, ""), err
    return err


def test_an_interrupted_submit_file_says_the_jobs_may_be_queued_and_where(
    daemon: Herd, held: int
) -> None:
    jobs = daemon.home.parent / "jobs.txt"
    jobs.write_text("".join(f"echo {n}\n" for n in range(JOBS)))
    err = interrupted_once_sent(daemon, held, "submit", "--hold", "--file", str(jobs))
    said = re.fullmatch(
        f"gpuherd: interrupted: the {JOBS} jobs may be submitted all the same, as the daemon"
        r" goes on with a submission it was sent: gpuherd ls --since (\d\d:\d\d:\d\d) shows"
        r" them if so \(all of them, or none\); look there before submitting again\n",
        err,
    )
    assert said, err
    # As said: all of them are queued, and the command given lists them.
    queued = lambda: daemon.cli("ls", "-q", "--since", said[1]).stdout.split()  # noqa: E731
    assert len(wait_for(lambda: len(queued()) == JOBS and queued(), what="the jobs")) == JOBS


def test_an_interrupted_rm_says_the_jobs_may_be_removed(daemon: Herd, held: int) -> None:
    os.kill(held, signal.SIGCONT)
    ids = daemon.post_lines(["true"] * JOBS, hold=True)
    os.kill(held, signal.SIGSTOP)
    err = interrupted_once_sent(daemon, held, "rm", f"{ids[0]}-{ids[-1]}")
    assert err == (
        f"gpuherd: interrupted: gpuherd rm of {JOBS} jobs may be carried out all the same, as"
        " the daemon goes on with a request it was sent: gpuherd ls --all shows the jobs as"
        " they are now\n"
    )
    wait_for(lambda: daemon.ls_all() == [], what="every job removed all the same")
