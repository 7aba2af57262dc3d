"""`kill` or `rm` of a waiting job says which jobs it cancelled with it: those waiting for it
(`--after`), and theirs. Before, `gpuherd kill 7` said `job 7: cancelled` alone, and the
jobs queued after it were gone unsaid (Slurm leaves them pending): a user who killed a job to
submit it again fixed found its evaluation cancelled later."""

from __future__ import annotations

from conftest import Herd


def test_a_kill_names_the_waiters_it_cancelled(shared_daemon: Herd) -> None:
    daemon = shared_daemon
    held = daemon.submit("--hold", "--", "true")
    first = daemon.submit("--after", str(held), "--", "true")
    second = daemon.submit("--after", str(first), "--", "true")
    anyway = daemon.submit("--after-any", str(held), "--", "true")  # runs once it ends
    answer = daemon.cli("kill", str(held)).stdout
    assert answer == (f"job {held}: cancelled, and jobs {first}-{second}, which waited for it\n")
    states = {i: daemon.job(i)["state"] for i in (first, second)}
    assert states == {first: "cancelled", second: "cancelled"}
    daemon.wait_state(anyway, "succeeded")


def test_jobs_named_with_it_are_said_as_ever(shared_daemon: Herd) -> None:
    daemon = shared_daemon
    held = daemon.submit("--hold", "--", "true")
    waiter = daemon.submit("--after", str(held), "--", "true")
    answer = daemon.cli("kill", str(held), str(waiter)).stdout
    assert answer == f"jobs {held}-{waiter}: cancelled\n"


def test_an_rm_names_them_too(shared_daemon: Herd) -> None:
    daemon = shared_daemon
    queued = daemon.submit("--hold", "--", "true")
    waiter = daemon.submit("--after", str(queued), "--", "true")
    answer = daemon.cli("rm", str(queued)).stdout
    assert answer == f"job {queued}: removed, and job {waiter}, which waited for it, cancelled\n"
    assert daemon.job(waiter)["state"] == "cancelled"
