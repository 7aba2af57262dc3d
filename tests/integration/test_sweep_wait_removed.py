"""`gpuherd sweep wait NAME` (`wait --sweep NAME`) and Python's `Sweep.wait()`: a point whose
job is removed (`gpuherd rm`) while the wait goes on is judged by its folder, as a point with
no job left before the wait began is. The wait failed with `gpuherd: error: no job 7` (Python:
NotFound) when the job went between its read of the points and its ask, or between two asks
(every 30 s); a queued one removed during an ask was said `job 7: cancelled`. The last line
counts points, as it said `jobs` while it counted them (a held one, one with no job left),
and a job of the sweep outside its grid no longer counts, as Sweep.wait() does not count it."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil
import pytest
from click.testing import CliRunner

import gpuherd
from conftest import Herd, wait_for_long_poll
from gpuherd import client as client_module
from gpuherd.cli.wait_cmd import wait
from gpuherd.client import Client

Hook = Callable[[int, bool], None]
"""Called with each `/jobs/wait` ask's number (from 1) before it is sent (False) and once it
is answered (True)."""


def _hooked(monkeypatch: pytest.MonkeyPatch, herd: Herd, hook: Hook) -> None:
    """This process's waits on `herd`'s daemon call `hook` around each ask, which the daemon
    answers at least every 0.2 s (a wait asks again every 30 s)."""
    monkeypatch.setenv("GPUHERD_HOME", str(herd.home))
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)  # as herd.cli finds the daemon
    monkeypatch.setattr(client_module, "WAIT_POLL", 0.2)
    real_request, asks = Client.request, itertools.count(1)

    def request(self: Client, method: str, path: str, *args: Any) -> Any:
        if path.split("?")[0] != "/jobs/wait":
            return real_request(self, method, path, *args)
        ask = next(asks)
        hook(ask, False)
        answer = real_request(self, method, path, *args)
        hook(ask, True)
        return answer

    monkeypatch.setattr(Client, "request", request)


def _hook(when: str, herd: Herd, removed: list[int], go: Path) -> Hook:
    """A hook that removes the jobs `removed` before the wait's first ask ("before") or once
    it is answered ("between": the next ask is the first to meet the removal), then lets the
    point that waits for `go` end."""

    def hook(ask: int, answered: bool) -> None:
        if (ask, answered) == (1, when == "between"):
            herd.cli("rm", *map(str, removed))
        if ask > 1 or when == "before":
            go.touch()

    return hook


WHEN = ["before", "between"]
"""When the jobs are removed: after the points are read, before the wait's first ask; or
between two asks of the wait."""


@pytest.mark.parametrize("when", WHEN)
def test_ended_points_whose_jobs_are_removed_meanwhile_are_judged_by_their_folders(
    shared_daemon: Herd, shared_work: Path, monkeypatch: pytest.MonkeyPatch, when: str
) -> None:
    herd, go = shared_daemon, shared_work / "go"
    ending = f"if [ {{code}} = wait ]; then while [ ! -e {go} ]; do sleep 0.02; done; exit 0; fi"
    template = f"{ending}; exit {{code}}"
    name = f"ended-{when}"
    sweep = ("sweep", template, "-p", "code", "0", "3", "wait", "--name", name, "--gpus", "0")
    ok, failed, waiting = (int(i) for i in herd.cli(*sweep, "-q", cwd=shared_work).stdout.split())
    herd.wait_state(ok, "succeeded")
    herd.wait_state(failed, "failed")
    _hooked(monkeypatch, herd, _hook(when, herd, [ok, failed], go))
    result = CliRunner().invoke(wait, ["--sweep", name])
    # (It let NotFound out: `gpuherd: error: no job 7`, exit 1.)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    # code=0 left SUCCESS in its folder (a success, `done`), code=3 FAILURE.
    assert (result.exit_code, result.stdout, result.stderr) == (
        1,
        "2 of 3 points succeeded\n",
        "point code=3: failed (no job left; its folder holds FAILURE)\n",
    )
    assert herd.json("show", str(waiting))["state"] == "succeeded"


@pytest.mark.parametrize("when", WHEN)
def test_python_sweep_wait_judges_a_point_whose_job_is_removed_meanwhile(
    shared_daemon: Herd, shared_work: Path, monkeypatch: pytest.MonkeyPatch, when: str
) -> None:
    """Python waits for the points not ended: a queued one removed raised NotFound."""
    herd, go = shared_daemon, shared_work / "go"
    template = f"while [ ! -e {go} ]; do sleep 0.02; done; true {{x}}"
    name = f"queued-{when}"
    sweep = ("sweep", template, "-p", "x", "1", "2", "--name", name, "--max-parallel", "1")
    first, second = (
        int(i) for i in herd.cli(*sweep, "--gpus", "0", "-q", cwd=shared_work).stdout.split()
    )
    herd.wait_state(first, "running")  # the second waits its turn (--max-parallel 1)
    api = gpuherd.connect(herd.home, start=False)
    _hooked(monkeypatch, herd, _hook(when, herd, [second], go))
    assert api.get_sweep(name).wait(timeout=60) is False  # x=2 has no job, nor a marker
    monkeypatch.undo()
    said = herd.cli("sweep", "wait", name, check=False)  # says the same
    assert (said.returncode, said.stdout, said.stderr) == (
        1,
        "1 of 2 points succeeded\n",
        "point x=2: missing (no job, and its folder holds neither SUCCESS nor FAILURE)\n",
    )


def test_a_queued_point_removed_while_waited_for_is_judged_by_its_folder(
    shared_daemon: Herd, shared_work: Path
) -> None:
    """Removed during the wait's ask, a queued job ends `cancelled`, then is gone: it was
    said so (`job 7: cancelled`), where `sweep status` shows its point `missing`."""
    herd, go = shared_daemon, shared_work / "go"
    template = f"while [ ! -e {go} ]; do sleep 0.02; done; true {{x}}"
    sweep = ("sweep", template, "-p", "x", "1", "2", "--name", "capped", "--max-parallel", "1")
    first, second = (
        int(i) for i in herd.cli(*sweep, "--gpus", "0", "-q", cwd=shared_work).stdout.split()
    )
    herd.wait_state(first, "running")
    waiters = [herd.popen("sweep", "wait", "capped"), herd.popen("wait", "--sweep", "capped")]
    for waiter in waiters:
        wait_for_long_poll(psutil.Process(waiter.pid))
    herd.cli("rm", str(second))
    go.touch()
    ended = [(w.wait(timeout=30), *(out.decode() for out in w.communicate())) for w in waiters]
    missing = "point x=2: missing (no job, and its folder holds neither SUCCESS nor FAILURE)\n"
    assert ended == [(1, "1 of 2 points succeeded\n", missing)] * 2
    assert gpuherd.connect(herd.home, start=False).get_sweep("capped").wait(timeout=30) is False


def test_a_job_of_the_sweep_outside_its_grid_is_waited_for_but_is_no_point(
    shared_daemon: Herd, shared_work: Path
) -> None:
    """A later submission narrowed the grid while x=2 ran: it is waited for (it writes to
    the sweep's folder), but its failure is no point's: exit 0, as Sweep.wait() is True (the
    wait said `1 of 2 jobs succeeded`, exit 1, of a sweep of one point)."""
    herd, go = shared_daemon, shared_work / "go"
    template = f"test {{x}} = 1 || (while [ ! -e {go} ]; do sleep 0.02; done; exit 3)"
    sweep = ("sweep", template, "--name", "narrowed", "--gpus", "0")
    first, outside = (
        int(i) for i in herd.cli(*sweep, "-p", "x", "1", "2", "-q", cwd=shared_work).stdout.split()
    )
    herd.wait_state(first, "succeeded")
    herd.cli(*sweep, "-p", "x", "1", cwd=shared_work)  # x=2 runs on, outside the grid
    waiter = herd.popen("sweep", "wait", "narrowed")
    wait_for_long_poll(psutil.Process(waiter.pid))
    assert herd.json("show", str(outside))["state"] == "running"  # (waited for)
    go.touch()
    assert (waiter.wait(timeout=30), *(o.decode() for o in waiter.communicate())) == (
        0,
        "1 of 1 point succeeded\n",
        "",
    )
    assert herd.json("show", str(outside))["state"] == "failed"
    assert gpuherd.connect(herd.home, start=False).get_sweep("narrowed").wait() is True
