"""`gpuherd sweep wait NAME` is `gpuherd wait --sweep NAME`: the same output, the same exit
status, --timeout and -q too. It was refused (exit 2) with a hint to type the other."""

from __future__ import annotations

import subprocess
from pathlib import Path

import psutil

import gpuherd
from conftest import Herd, wait_for_long_poll

Outcome = tuple[int, str, str]


def _outcome(proc: subprocess.CompletedProcess[str]) -> Outcome:
    return proc.returncode, proc.stdout, proc.stderr


def _both(herd: Herd, name: str, *options: str) -> tuple[Outcome, Outcome]:
    """`sweep wait NAME OPTIONS` and `wait --sweep NAME OPTIONS`, one after the other."""
    verb = herd.cli("sweep", "wait", name, *options, check=False)
    flag = herd.cli("wait", "--sweep", name, *options, check=False)
    return _outcome(verb), _outcome(flag)


def test_sweep_wait_is_wait_with_sweep(daemon: Herd, tmp_path: Path) -> None:
    go = tmp_path / "go"
    template = f"while [ ! -e {go} ]; do sleep 0.02; done; exit {{code}}"
    sweep = ("sweep", template, "-p", "code", "0", "3", "--name", "codes", "--gpus", "0")
    first, second = (int(i) for i in daemon.cli(*sweep, "-q").stdout.split())

    # Its points not finished in time: exit 2, and which are still unfinished.
    verb, flag = _both(daemon, "codes", "--timeout", "0.2")
    assert verb == flag == (2, "", f"gave up waiting; still unfinished: {first}-{second}\n")
    assert _both(daemon, "codes", "--timeout", "0.2", "-q") == ((2, "", ""), (2, "", ""))

    # Both waiting when the points end: one failed, exit 1, said alike.
    waiters = [
        daemon.popen("sweep", "wait", "codes"),
        daemon.popen("wait", "--sweep", "codes"),
        daemon.popen("sweep", "wait", "codes", "-q"),
        daemon.popen("wait", "--sweep", "codes", "-q"),
    ]
    for waiter in waiters:
        wait_for_long_poll(psutil.Process(waiter.pid))
    go.touch()
    ended = [(w.wait(timeout=30), *(out.decode() for out in w.communicate())) for w in waiters]
    failed = f"job {second}: failed (exit 3)\n"
    assert ended[0] == ended[1] == (1, "1 of 2 points succeeded\n", failed)
    assert ended[2] == ended[3] == (1, "", failed)

    # Every point ended: how they ended is said again, exit 1, alike (it said "nothing to wait
    # for", exit 0, as though they had all succeeded).
    assert _both(daemon, "codes") == ((1, "1 of 2 points succeeded\n", failed),) * 2


def test_sweep_wait_of_no_sweep_is_refused_as_wait_refuses_it(daemon: Herd) -> None:
    verb, flag = _both(daemon, "nope")
    refusal = "gpuherd: error: no sweep named 'nope': `gpuherd sweep ls` lists the sweeps\n"
    assert verb == flag == (1, "", refusal)


def test_sweep_wait_without_a_daemon_exits_3_as_wait_does(herd: Herd) -> None:
    verb, flag = _both(herd, "codes")
    assert verb[0] == flag[0] == 3
    assert verb[1:] == flag[1:]


def test_points_that_failed_before_the_wait_began_make_it_exit_1(
    shared_daemon: Herd, shared_work: Path
) -> None:
    """The QA's case: both points ended before the wait. It said "nothing to wait for",
    exit 0, where Python's `Sweep.wait()` said False: `sweep wait X && ./analyse.sh` went
    on or not by timing."""
    herd = shared_daemon
    sweep = ("sweep", "exit {code}", "-p", "code", "0", "3", "--name", "early", "--gpus", "0")
    first, second = (int(i) for i in herd.cli(*sweep, "-q", cwd=shared_work).stdout.split())
    herd.wait_state(first, "succeeded")
    herd.wait_state(second, "failed")
    failed = f"job {second}: failed (exit 3)\n"
    assert _both(herd, "early") == ((1, "1 of 2 points succeeded\n", failed),) * 2
    assert _both(herd, "early", "-q") == ((1, "", failed),) * 2
    assert gpuherd.connect(herd.home, start=False).get_sweep("early").wait() is False
    # --name (with --sweep too) still means the jobs unfinished now: an open-ended set.
    named = herd.cli("wait", "--sweep", "early", "--name", "*", check=False)
    assert (named.returncode, named.stdout) == (
        0,
        "nothing to wait for: no job of sweep early, name * is queued or running\n",
    )


def test_a_point_rerun_after_a_failure_counts_by_its_rerun(
    shared_daemon: Herd, shared_work: Path
) -> None:
    herd = shared_daemon
    ran = shared_work / "ran"
    # A point fails the first time it runs (code 3), and succeeds when run again.
    template = f"test -e {ran}-{{code}} || (touch {ran}-{{code}}; exit {{code}})"
    sweep = ("sweep", template, "-p", "code", "0", "3", "--name", "again", "--gpus", "0", "-q")
    first, second = (int(i) for i in herd.cli(*sweep, cwd=shared_work).stdout.split())
    herd.wait_state(first, "succeeded")
    herd.wait_state(second, "failed")
    assert _both(herd, "again")[0] == (
        1,
        "1 of 2 points succeeded\n",
        f"job {second}: failed (exit 3)\n",
    )
    (rerun,) = (int(i) for i in herd.cli(*sweep, cwd=shared_work).stdout.split())
    herd.wait_state(rerun, "succeeded")
    assert _both(herd, "again") == ((0, "2 of 2 points succeeded\n", ""),) * 2
    assert gpuherd.connect(herd.home, start=False).get_sweep("again").wait() is True


def test_held_points_are_not_waited_for_and_have_not_succeeded(
    shared_daemon: Herd, shared_work: Path
) -> None:
    """A held point waits for a release (or its --begin time): not waited for, as `wait`
    leaves held jobs out, but no success either (it said "nothing to wait for", exit 0)."""
    herd = shared_daemon
    sweep = ("sweep", "true {x}", "-p", "x", "1", "2", "--name", "kept", "--hold", "--gpus", "0")
    first, second = (int(i) for i in herd.cli(*sweep, "-q", cwd=shared_work).stdout.split())
    held = f"jobs {first}-{second}"
    note = (
        f"gpuherd: {held} are held (until released, or their --begin time), not waited for: "
        f"gpuherd wait {first}-{second} waits for them\n"
    )
    said = (1, "0 of 2 points succeeded\n", f"{note}{held}: held\n")
    assert _both(herd, "kept") == (said, said)
    assert _both(herd, "kept", "-q") == ((1, "", f"{held}: held\n"),) * 2
    assert gpuherd.connect(herd.home, start=False).get_sweep("kept").wait(timeout=10) is False
    herd.cli("release", str(first), str(second))
    assert _both(herd, "kept") == ((0, "2 of 2 points succeeded\n", ""),) * 2


def test_points_with_no_job_left_are_judged_by_their_folders(
    shared_daemon: Herd, shared_work: Path
) -> None:
    """Points whose jobs were removed (`gpuherd rm`, `clean`): a SUCCESS marker is a
    success (`done`), a FAILURE or no marker at all is none, said by the point's folder."""
    herd = shared_daemon
    sweep = ("sweep", "exit {code}", "-p", "code", "0", "3", "4", "--name", "gone", "--gpus", "0")
    ids = [int(i) for i in herd.cli(*sweep, "-q", cwd=shared_work).stdout.split()]
    for job_id, state in zip(ids, ("succeeded", "failed", "failed"), strict=True):
        herd.wait_state(job_id, state)
    herd.cli("rm", *map(str, ids))
    said = (
        1,
        "1 of 3 points succeeded\n",
        "points code=3, code=4: failed (no job left; their folders hold FAILURE)\n",
    )
    assert _both(herd, "gone") == (said, said)
    held = ("sweep", "true {x}", "-p", "x", "1", "--name", "never", "--hold", "--gpus", "0")
    herd.cli("rm", herd.cli(*held, "-q", cwd=shared_work).stdout.strip())  # (cancelled)
    assert _both(herd, "never", "-q")[0] == (
        1,
        "",
        "point x=1: missing (no job, and its folder holds neither SUCCESS nor FAILURE)\n",
    )
