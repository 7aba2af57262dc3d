"""`--after-fail` (Slurm's afternotok): a job that runs once the jobs it names ended without
success, and is cancelled if one of them succeeds; through the CLI, sweeps, edit, the HTTP API,
the Python API and a daemon restart."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import gpuherd
from conftest import Herd, Recorder, api_daemon
from gpuherd.pyapi import connect


def test_a_job_after_fail_runs_once_its_dependency_failed(
    shared_daemon: Herd, recorder: Recorder
) -> None:
    daemon = shared_daemon
    failing = daemon.submit(recorder.cmd("a", wait="go", exit=3))
    cleanup = daemon.submit("--after-fail", str(failing), recorder.cmd("cleanup"))
    job = daemon.job(cleanup)
    assert (job["after"], job["after_any"], job["after_fail"]) == ([], [], [failing])
    assert job["reason"] == f"waiting for job {failing} to fail"
    [shown] = [
        ln for ln in daemon.cli("show", str(cleanup)).stdout.splitlines() if "a failure" in ln
    ]
    assert shown.split() == ["after", "a", "failure", "of", str(failing)]
    assert "After a failure of" in daemon.page(f"/jobs/{cleanup}")  # the dashboard's page too
    recorder.go()
    assert daemon.wait_state(failing, "failed")["exit_code"] == 3
    daemon.wait_state(cleanup, "succeeded")
    [ran] = recorder.lines("cleanup")
    assert ran["start"] >= recorder.lines("a")[0]["end"]
    # A job that already failed lets a new waiter run at once.
    late = daemon.submit("--after-fail", str(failing), "--", "true")
    daemon.wait_state(late, "succeeded")


def test_a_job_after_fail_of_one_that_succeeds_is_cancelled_saying_why(
    shared_daemon: Herd, recorder: Recorder
) -> None:
    daemon = shared_daemon
    good = daemon.submit(recorder.cmd("good", wait="go"))
    cleanup = daemon.submit("--after-fail", str(good), recorder.cmd("cleanup"))
    after_cleanup = daemon.submit("--after", str(cleanup), "--", "true")
    # A cancel is a bad end: a job --after-fail of the cancelled one runs.
    rescue = daemon.submit("--after-fail", str(cleanup), recorder.cmd("rescue"))
    recorder.go()
    daemon.wait_state(good, "succeeded")
    job = daemon.wait_state(cleanup, "cancelled", "succeeded")
    said = f"job {good} ended (succeeded), and it waited for a failure (--after-fail)"
    assert (job["state"], job["outcome"], job["message"]) == (
        "cancelled",
        "dependency_failed",
        said,
    )
    assert said in daemon.cli("show", str(cleanup)).stdout
    assert daemon.wait_state(after_cleanup, "cancelled")["outcome"] == "dependency_failed"
    daemon.wait_state(rescue, "succeeded")
    assert recorder.lines("cleanup") == []
    # Submitted after the success: stored, then cancelled at once, as --after's is.
    late = daemon.cli("submit", "-q", "--after-fail", str(good), "--", "true")
    late_id = int(late.stdout)
    assert late.stderr == (
        f"gpuherd: warning: job {late_id} is cancelled at once: job {good}, which it waits for, "
        "already succeeded (--after-fail waits for a failure)\n"
    )
    assert daemon.job(late_id)["outcome"] == "dependency_failed"


def test_after_fail_waits_through_the_retries_of_its_dependency(
    shared_daemon: Herd, recorder: Recorder
) -> None:
    daemon = shared_daemon
    flaky = daemon.submit("--retries", "1", recorder.cmd("flaky", wait="go", exit=3))
    cleanup = daemon.submit("--after-fail", str(flaky), recorder.cmd("cleanup"))
    recorder.go()
    assert daemon.wait_state(flaky, "failed")["attempt"] == 2
    daemon.wait_state(cleanup, "succeeded")
    attempts = recorder.lines("flaky")
    assert len(attempts) == 2
    # Not after the first attempt's failure: that one was to be retried.
    assert recorder.lines("cleanup")[0]["start"] >= max(a["end"] for a in attempts)
    # A retried dependency that then succeeds cancels it, never having run it.
    go2 = daemon.home.parent / "go2"
    second = daemon.submit(
        "--retries",
        "1",
        f'while [ ! -e {go2} ]; do sleep 0.02; done; [ "$GPUHERD_ATTEMPT" = 2 ] || exit 3',
    )
    never = daemon.submit("--after-fail", str(second), "--", "touch ran")
    go2.touch()
    assert daemon.wait_state(second, "succeeded")["attempt"] == 2
    assert daemon.wait_state(never, "cancelled", "succeeded")["state"] == "cancelled"


BOTH = (
    "is in both after (--after) and after_fail (--after-fail): a job cannot both succeed and fail"
)


@pytest.mark.parametrize(
    "args",
    [
        ("submit", "--after", "22", "--after-fail", "5,22", "--", "true"),
        ("submit", "-a", "20-30", "--after-fail", "last", "--after-fail", "22", "--", "true"),
        ("sweep", "true {x}", "-p", "x", "1", "2", "--after", "22", "--after-fail", "22"),
        ("sweep", "true {x}", "-p", "x", "1", "--after", "22", "--after-fail", "22", "--dry-run"),
        ("edit", "3", "--after", "22", "--after", "last", "--after-fail", "22"),
    ],
    ids=["submit", "submit-range-and-last", "sweep", "sweep-dry-run", "edit"],
)
def test_a_job_in_both_after_and_after_fail_is_a_mistake_of_the_command_line(
    herd: Herd, args: tuple[str, ...]
) -> None:
    """Exit 2, as every mistake of the command line, in the daemon's words; seen without a
    daemon (none runs here: it was the daemon's refusal, exit 1)."""
    line = herd.usage_error(*args)
    assert line.startswith(f"gpuherd: error: job 22 {BOTH}; keep it in one of them"), line
    assert not herd.is_up()


def test_mistakes_are_refused_in_one_line(shared_daemon: Herd) -> None:
    daemon = shared_daemon
    a = daemon.submit("--", "sleep 30")
    assert f"job {a} {BOTH}" in daemon.usage_error(
        "submit", "--after", str(a), "--after-fail", str(a), "--", "true"
    )
    # `last` is an id once the daemon says which job it is: then the daemon refuses it.
    both = daemon.cli(
        "submit", "--after", "last", "--after-fail", str(a), "--", "true", check=False
    )
    assert both.returncode == 1 and len(both.stderr.splitlines()) == 1
    assert f"job {a} {BOTH}" in both.stderr
    unknown = daemon.cli("submit", "--after-fail", "999", "--", "true", check=False)
    assert unknown.returncode == 1
    assert "after_fail (--after-fail): no job 999 " in unknown.stderr  # (the option it was in)
    held = daemon.submit("--hold", "--", "true")
    edit = daemon.cli("edit", str(held), "--after-any", "998", check=False)
    assert edit.returncode == 1 and "after_any (--after-any): no job 998 " in edit.stderr
    assert "Traceback" not in both.stderr + unknown.stderr
    # Named in --after-any too, a job waits for its failure alone.
    both_ends = daemon.submit("--after-any", str(a), "--after-fail", str(a), "--", "true")
    assert (daemon.job(both_ends)["after_any"], daemon.job(both_ends)["after_fail"]) == ([], [a])
    daemon.cli("kill", str(a))


def test_sweep_after_fail_and_its_file_refusal(
    shared_daemon: Herd, recorder: Recorder, tmp_path: Path
) -> None:
    daemon = shared_daemon
    failing = daemon.submit(recorder.cmd("a", wait="go", exit=3))
    out = daemon.cli(
        "sweep", "true {x}", "-p", "x", "1", "2", "--after-fail", "last", "-q", cwd=tmp_path
    ).stdout
    points = [int(word) for word in out.split()]
    for point in points:
        job = daemon.job(point)
        assert (job["after_fail"], job["reason"]) == (
            [failing],
            f"waiting for job {failing} to fail",
        )
    recorder.go()
    for point in points:
        daemon.wait_state(point, "succeeded")
    sweep_file = tmp_path / "s.yaml"
    sweep_file.write_text(f"command: true {{x}}\nparams:\n  x: [1]\nafter_fail: [{failing}]\n")
    refused = daemon.cli("sweep", str(sweep_file), check=False)
    assert refused.returncode != 0 and len(refused.stderr.splitlines()) == 1
    assert "--after-fail 12, or --after-fail last" in refused.stderr


def test_edit_sets_and_clears_after_fail(shared_daemon: Herd, recorder: Recorder) -> None:
    daemon = shared_daemon  # it looks only at the jobs it submits
    first = daemon.submit(recorder.cmd("first", wait="go", exit=3))
    waiter = daemon.submit("--after", str(first), "--", "true")
    # Its success and its failure both: refused, and nothing changed.
    contradiction = daemon.cli("edit", str(waiter), "--after-fail", str(first), check=False)
    assert contradiction.returncode == 1 and len(contradiction.stderr.splitlines()) == 1
    assert "cannot both succeed and fail" in contradiction.stderr
    assert (daemon.job(waiter)["after"], daemon.job(waiter)["after_fail"]) == ([first], [])
    edited = daemon.cli("edit", str(waiter), "--clear", "after", "--after-fail", str(first))
    assert f"after {first} -> none, after_fail none -> {first}" in edited.stdout
    assert daemon.job(waiter)["reason"] == f"waiting for job {first} to fail"
    daemon.cli("edit", str(waiter), "--clear", "after_fail")
    assert daemon.job(waiter)["after_fail"] == []
    daemon.wait_state(waiter, "succeeded")
    # An edit never ends a job: one --after-fail of a job that already succeeded is refused.
    held = daemon.submit("--hold", "--", "true")
    refused = daemon.cli("edit", str(held), "--after-fail", str(waiter), check=False)
    assert refused.returncode == 1
    assert "already succeeded (--after-fail waits for a failure)" in refused.stderr
    recorder.go()


def test_http_api_takes_after_fail(shared_daemon: Herd) -> None:
    daemon = shared_daemon  # it looks only at the jobs it submits
    failed = daemon.submit("--gpus", "0", "--", "exit 3")
    daemon.wait_state(failed, "failed")
    held = daemon.submit("--hold", "--", "true")
    body = {"command": "true", "cwd": "/", "env": {}, "after_fail": [held]}
    [job_id] = daemon.client.post("/jobs", {"jobs": [body]})["ids"]
    assert daemon.job(job_id)["after_fail"] == [held]
    daemon.client.post("/jobs/edit", {"ids": [job_id], "after_fail": [failed]})
    assert daemon.job(job_id)["after_fail"] == [failed]
    daemon.wait_state(job_id, "succeeded")
    daemon.client.post("/jobs/edit", {"ids": [held], "after_fail": [failed]})
    daemon.client.post("/jobs/edit", {"ids": [held], "clear": ["after_fail"]})
    assert daemon.job(held)["after_fail"] == []


def test_a_restart_keeps_the_after_fail_dependency(daemon: Herd, recorder: Recorder) -> None:
    failing = daemon.submit(recorder.cmd("a", wait="go", exit=3))
    good = daemon.submit(recorder.cmd("good", wait="go"))
    cleanup = daemon.submit("--after-fail", str(failing), "--", "true")
    never = daemon.submit("--after-fail", str(good), "--", "true")
    daemon.wait_state(failing, "running")
    daemon.kill9()
    daemon.start()
    assert daemon.job(cleanup)["after_fail"] == [failing]
    assert daemon.job(cleanup)["reason"] == f"waiting for job {failing} to fail"
    recorder.go()
    daemon.wait_state(cleanup, "succeeded")
    assert daemon.wait_state(never, "cancelled", "succeeded")["outcome"] == "dependency_failed"


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[gpuherd.Herd]:
    with api_daemon(tmp_path_factory.mktemp("api"), "after_fail_mod", ""):
        yield connect()


def test_python_api_after_fail(api: gpuherd.Herd) -> None:
    failed = api.submit("exit 3", gpus=0)
    cleanup = api.submit("true", gpus=0, after_fail=failed)
    assert cleanup.wait(timeout=20) == "succeeded"
    assert cleanup.info()["after_fail"] == [failed.id]
    with pytest.warns(UserWarning, match=r"already succeeded \(--after-fail waits for a failure"):
        late = api.submit("true", gpus=0, after_fail=cleanup)
    assert (late.state(), late.info()["outcome"]) == ("cancelled", "dependency_failed")
    held = api.submit("true", gpus=0, hold=True)
    assert held.edit(after_fail=[failed]) == f"edited (after_fail none -> {failed.id})"
    assert held.edit(clear=["after_fail"]) == f"edited (after_fail {failed.id} -> none)"
