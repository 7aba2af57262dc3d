"""`gpuherd priority` and `gpuherd move` of a job that already ended name the way that works
(`retry --hold`, then the verb, then `release`), as `edit` does; they answered only `job N
already ended (succeeded)`. The way named works as said."""

from __future__ import annotations

from conftest import Herd


def _back_held(job: int, to: str) -> str:
    return (
        f"gpuherd: error: job {job} already ended (succeeded): `gpuherd retry --hold {job}` "
        f"puts it back held, to {to} before it runs again (`gpuherd release {job}` runs it)\n"
    )


def test_priority_and_move_of_an_ended_job_name_retry_hold(shared_daemon: Herd) -> None:
    ended = shared_daemon.submit("true")
    shared_daemon.wait_state(ended, "succeeded")
    for args, to in (
        (("priority", str(ended), "5"), "change its priority"),
        (("move", str(ended), "--first"), "move it"),
    ):
        proc = shared_daemon.cli(*args, check=False)
        assert (proc.returncode, proc.stdout, proc.stderr) == (1, "", _back_held(ended, to))

    # The way it names: back held, its priority changed and moved, then run.
    shared_daemon.cli("retry", "--hold", str(ended))
    shared_daemon.cli("priority", str(ended), "5")
    shared_daemon.cli("move", str(ended), "--first")
    assert shared_daemon.job(ended)["priority"] == 5
    shared_daemon.cli("release", str(ended))
    shared_daemon.wait_state(ended, "succeeded")
