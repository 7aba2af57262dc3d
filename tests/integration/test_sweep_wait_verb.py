"""`gpuherd sweep wait NAME` is `gpuherd wait --sweep NAME`: the same output, the same exit
status, --timeout and -q too. It was refused (exit 2) with a hint to type the other."""

from __future__ import annotations

import subprocess
from pathlib import Path

import psutil

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
    assert ended[0] == ended[1] == (1, "1 of 2 jobs succeeded\n", failed)
    assert ended[2] == ended[3] == (1, "", failed)

    # Nothing left to wait for: exit 0, said alike.
    verb, flag = _both(daemon, "codes")
    assert (
        verb == flag == (0, "nothing to wait for: no job of sweep codes is queued or running\n", "")
    )


def test_sweep_wait_of_no_sweep_is_refused_as_wait_refuses_it(daemon: Herd) -> None:
    verb, flag = _both(daemon, "nope")
    refusal = "gpuherd: error: no sweep named 'nope': `gpuherd sweep ls` lists the sweeps\n"
    assert verb == flag == (1, "", refusal)


def test_sweep_wait_without_a_daemon_exits_3_as_wait_does(herd: Herd) -> None:
    verb, flag = _both(herd, "codes")
    assert verb[0] == flag[0] == 3
    assert verb[1:] == flag[1:]
