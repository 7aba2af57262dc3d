"""A job removed (`gpuherd rm`, `clean`) while a wait waits for it ends its wait as `removed`:
`gpuherd wait IDS`, `wait --project P`, `submit --wait` say `job 7: removed (gpuherd rm or
clean)` and exit 1 (it has not succeeded), the Python API answers the state `removed`, and
`job.result()` raises JobRemoved (a JobFailed and a NotFound).

The daemon's wait ignored the removal during an ask (a queued or held job was said
`cancelled`, as its removal cancels it first; `submit --wait` then failed reading it, `no job
7`), and refused the id at the next ask (every 30 s, and after a restart): `gpuherd: error: no
job 7`, the states of the other jobs lost. A job removed before the wait is `removed` too; an
id never given to a job is still refused at once (`no job 99`), named even beside a removed
one."""

from __future__ import annotations

import itertools
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil
import pytest

import gpuherd
from answers_checked import Answers
from conftest import Herd, wait_for_long_poll
from gpuherd import client as client_module
from gpuherd.cli.main import main
from gpuherd.client import Client
from gpuherd.errors import NotFound

REMOVED = "removed (gpuherd rm or clean)"


def _gone(job_id: int) -> str:
    return f"job {job_id}: {REMOVED}\n"


def _running_and_queued(herd: Herd, go: Path, *options: str) -> tuple[int, int]:
    """A job that runs until `go` exists, and a queued one that waits for it (--after)."""
    running = herd.submit(
        *options, "--gpus", "0", "--", f"while [ ! -e {go} ]; do sleep 0.02; done"
    )
    herd.wait_state(running, "running")
    queued = herd.submit(*options, "--gpus", "0", "--after", str(running), "--", "true")
    return running, queued


@pytest.mark.parametrize("by", ["ids", "project"])
def test_a_job_removed_during_the_wait_ends_its_wait_as_removed(
    shared_daemon: Herd, tmp_path: Path, by: str
) -> None:
    herd, go = shared_daemon, tmp_path / "go"
    running, queued = _running_and_queued(herd, go, "--project", f"rm-{by}")
    waited = [str(queued), str(running)] if by == "ids" else ["--project", f"rm-{by}"]
    waiter = herd.popen("wait", *waited)
    try:
        wait_for_long_poll(psutil.Process(waiter.pid))
        herd.cli("rm", str(queued))
        go.touch()
        out, err = (text.decode() for text in waiter.communicate(timeout=30))
    finally:
        waiter.kill()
        waiter.wait()
    # (It said `job 8: cancelled`.)
    assert (waiter.returncode, out, err) == (1, "1 of 2 jobs succeeded\n", _gone(queued))


def test_submit_wait_of_a_job_removed_meanwhile_says_so(shared_daemon: Herd) -> None:
    """It failed reading how the job ended: `gpuherd: error: no job 7`."""
    herd = shared_daemon
    name = "removed-while-submit-waits"
    waiter = herd.popen("submit", "-q", "--hold", "--wait", "--name", name, "--", "true")
    try:
        wait_for_long_poll(psutil.Process(waiter.pid))
        (held,) = (j["id"] for j in herd.json("ls", "--name", name))
        herd.cli("rm", str(held))
        out, err = (text.decode() for text in waiter.communicate(timeout=30))
    finally:
        waiter.kill()
        waiter.wait()
    assert (waiter.returncode, out, err) == (1, "", _gone(held))  # (-q: the ending alone)


Between = Callable[[list[int]], None]


def _removed_between_asks(
    monkeypatch: pytest.MonkeyPatch, herd: Herd, between: Between, go: Path | None = None
) -> list[dict[str, Any]]:
    """This process's waits on `herd`'s daemon ask every 0.2 s (a wait asks again every
    30 s); `between(ids asked)` runs once the first ask is answered, and `go` is made before
    each ask after it. The answers to the asks, in order."""
    monkeypatch.setenv("GPUHERD_HOME", str(herd.home))
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)  # as herd.cli finds the daemon
    monkeypatch.setattr(client_module, "WAIT_POLL", 0.2)
    real_request, asks, answers = Client.request, itertools.count(1), []

    def request(self: Client, method: str, path: str, *args: Any) -> Any:
        if path.split("?")[0] != "/jobs/wait":
            return real_request(self, method, path, *args)
        ask = next(asks)
        if ask > 1 and go is not None:
            go.touch()
        answers.append(answer := real_request(self, method, path, *args))
        if ask == 1:
            between([int(i) for i in answer["states"]])
        return answer

    monkeypatch.setattr(Client, "request", request)
    return answers


def test_a_job_removed_between_two_asks_ends_the_wait_of_wait_ids(
    shared_daemon: Herd,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    herd, go = shared_daemon, tmp_path / "go"
    running, queued = _running_and_queued(herd, go)
    answers = _removed_between_asks(monkeypatch, herd, lambda _: herd.cli("rm", str(queued)), go)
    with pytest.raises(SystemExit) as ended:
        main(["wait", str(queued), str(running)])
    said = capsys.readouterr()
    # (It said `gpuherd: error: no job 8: ...`.)
    assert (ended.value.code, said.out, said.err) == (1, "1 of 2 jobs succeeded\n", _gone(queued))
    assert answers[0]["states"] == {str(queued): "queued", str(running): "running"}


def test_submit_wait_of_a_job_removed_between_two_asks_exits_1(
    shared_daemon: Herd, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    herd = shared_daemon
    answers = _removed_between_asks(monkeypatch, herd, lambda ids: herd.cli("rm", *map(str, ids)))
    with pytest.raises(SystemExit) as ended:
        main(["submit", "-q", "--hold", "--wait", "--gpus", "0", "--", "true"])
    said = capsys.readouterr()
    (held,) = (int(i) for i in answers[0]["states"])
    assert (ended.value.code, said.out, said.err) == (1, "", _gone(held))
    assert answers[0]["states"] == {str(held): "held"}


def test_python_waits_answer_a_job_removed_between_two_asks(
    shared_daemon: Herd, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """herd.wait() raised NotFound, the other job's state lost; result() too."""
    herd, go = shared_daemon, tmp_path / "go"
    running, queued = _running_and_queued(herd, go)
    api = gpuherd.connect(herd.home, start=False)
    _removed_between_asks(monkeypatch, herd, lambda _: herd.cli("rm", str(queued)), go)
    assert api.wait([queued, running], timeout=60) == {queued: "removed", running: "succeeded"}


def test_result_of_a_job_removed_between_two_asks_raises_job_removed(
    shared_daemon: Herd, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    herd, go = shared_daemon, tmp_path / "go"
    _, queued = _running_and_queued(herd, go)
    job = gpuherd.connect(herd.home, start=False).job(queued)
    _removed_between_asks(monkeypatch, herd, lambda _: herd.cli("rm", str(queued)), go)
    with pytest.raises(NotFound) as removed:  # (JobRemoved: a NotFound, and a JobFailed)
        job.result(timeout=60)
    failed = removed.value
    assert type(failed).__name__ == "JobRemoved"
    assert isinstance(failed, gpuherd.JobFailed)
    assert (failed.job, failed.state) == (job, "removed")
    assert str(failed) == f"job {queued}: {REMOVED}, so it has no result"


RESULT = """
import sys
import gpuherd
from gpuherd.errors import NotFound

job = gpuherd.connect(start=False).job(int(sys.argv[1]))
try:
    job.result()
except gpuherd.JobFailed as failed:
    print(type(failed).__name__, failed.state, isinstance(failed, NotFound))
    print(failed)
"""


def test_result_of_a_job_removed_while_it_waits_raises_job_removed(shared_daemon: Herd) -> None:
    """It raised NotFound from within JobFailed (`cancelled`), which read the job gone."""
    herd = shared_daemon
    held = herd.submit("--hold", "--gpus", "0", "--", "true")
    waiter = subprocess.Popen(
        [sys.executable, "-c", RESULT, str(held)],
        env=herd.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        wait_for_long_poll(psutil.Process(waiter.pid))
        herd.cli("rm", str(held))
        out, err = (text.decode() for text in waiter.communicate(timeout=30))
    finally:
        waiter.kill()
        waiter.wait()
    assert (waiter.returncode, out, err) == (
        0,
        f"JobRemoved removed True\njob {held}: {REMOVED}, so it has no result\n",
        f"<string>:8: WaitWarning: job {held} is held: waiting until it is released (gpuherd "
        f"release {held} lets it run)\n",  # (-c: no source line to show)
    )


def test_a_job_removed_before_the_wait_is_removed_and_an_id_never_given_refused(
    shared_daemon: Herd,
) -> None:
    """Both were `no job 7`; the id never given is named first now, as the one at fault."""
    herd = shared_daemon
    ended, removed = herd.submit("--gpus", "0", "--", "true"), herd.submit("--hold", "--", "true")
    herd.wait_state(ended, "succeeded")
    herd.cli("rm", str(removed))
    said = herd.cli("wait", str(removed), str(ended), check=False)
    assert (said.returncode, said.stdout, said.stderr) == (
        1,
        "1 of 2 jobs succeeded\n",
        _gone(removed),
    )
    never = herd.cli("wait", str(removed), "987654321", check=False)
    assert (never.returncode, never.stdout, never.stderr) == (
        1,
        "",
        "gpuherd: error: no job 987654321: `gpuherd ls --all` lists the jobs there are\n",
    )
    api = gpuherd.connect(herd.home, start=False)
    assert api.wait([removed, ended]) == {removed: "removed", ended: "succeeded"}
    assert api.job(removed).wait() == "removed"
    assert [job.id for job in api.as_completed([ended, removed], timeout=30)] == [ended, removed]
    with pytest.raises(gpuherd.JobFailed, match=f"^job {removed}: removed "):
        api.job(removed).result()


def test_the_wait_answer_of_a_removed_job_is_as_openapi_says(shared_daemon: Herd) -> None:
    herd = shared_daemon
    removed = herd.submit("--hold", "--", "true")
    herd.cli("rm", str(removed))
    body = {"ids": [removed], "timeout": 0}
    answer = Answers(herd).check("POST", "/jobs/wait", body)
    assert answer == {
        "done": True,
        "states": {str(removed): "removed"},
        "endings": {
            str(removed): {
                "state": "removed",
                "outcome": None,
                "exit_code": None,
                "signal": None,
                "message": REMOVED,
            }
        },
    }
    status, _, raw = herd.request("GET", f"/api/v1/jobs/wait?ids={removed}&ids=987654321")
    assert status == 404 and b"no job 987654321: " in raw, (status, raw)
    status, _, raw = herd.request("GET", "/api/v1/jobs/wait?ids=0")  # (no id a job can have)
    assert status == 404 and b"no job 0: " in raw, (status, raw)


def test_a_job_that_ended_then_went_in_a_clean_keeps_its_end_in_the_wait(
    shared_daemon: Herd,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # A wait asks again about the jobs of its chunk still going: it asked about every one,
    # so one that had succeeded, then was removed (`gpuherd clean` while a long wait goes
    # on), was answered `removed` at the next ask, and the wait exited 1.
    herd, go = shared_daemon, tmp_path / "go"
    ended = herd.submit("--gpus", "0", "--", "true")
    herd.wait_state(ended, "succeeded")
    running = herd.submit("--gpus", "0", "--", f"while [ ! -e {go} ]; do sleep 0.02; done")
    herd.wait_state(running, "running")
    answers = _removed_between_asks(monkeypatch, herd, lambda _: herd.cli("rm", str(ended)), go)
    with pytest.raises(SystemExit) as waited:
        main(["wait", str(ended), str(running)])
    said = capsys.readouterr()
    assert (waited.value.code, said.out, said.err) == (0, "2 of 2 jobs succeeded\n", "")
    assert answers[0]["states"] == {str(ended): "succeeded", str(running): "running"}
