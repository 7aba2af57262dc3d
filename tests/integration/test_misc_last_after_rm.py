"""`last` (`--after last`, `show last`, `kill last`) is the job submitted last. Once that job
is removed (`gpuherd rm`), `last` named the newest job left, an older one: `submit --after
last` waited for an older, failed job and was cancelled at once. It is refused instead,
naming the job removed; a job submitted since is `last` again."""

from __future__ import annotations

from conftest import Herd

REMOVED = (
    "job {job}, the job submitted last, was removed (gpuherd rm or clean): give the id of the "
    "job you mean (gpuherd ls --all lists the jobs there are)"
)


def test_last_is_refused_once_the_job_submitted_last_is_removed(daemon: Herd) -> None:
    older = daemon.submit("false")
    daemon.wait_state(older, "failed")
    newest = daemon.submit("true")
    daemon.wait_state(newest, "succeeded")
    daemon.cli("rm", str(newest))

    for args, said in (
        (("submit", "--after", "last", "--", "echo eval"), "--after last"),
        (("show", "last"), "last"),
        (("kill", "last"), "last"),
    ):
        proc = daemon.cli(*args, check=False)
        assert (proc.returncode, proc.stdout) == (1, ""), (args, proc.stdout, proc.stderr)
        assert proc.stderr == f"gpuherd: error: {said}: {REMOVED.format(job=newest)}\n", args
    assert [job["id"] for job in daemon.ls_all()] == [older]  # nothing submitted, none killed

    # With no id given, `show` is of the newest job there is, as before.
    assert daemon.json("show")["id"] == older

    again = daemon.submit("true")
    assert daemon.json("show", "last")["id"] == again
