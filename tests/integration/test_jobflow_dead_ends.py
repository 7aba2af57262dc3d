"""Ways out that a verb's answer promised and another verb refused, or never named.

- `edit` of a job cancelled as one it waited for failed, that job removed since, said
  "`gpuherd retry --hold B` puts it back held", and `retry --hold` refused it.
- A job waiting out its --retry-delay: `retry` said "it runs when its turn comes" and
  `release` "already queued", the wait left in place (only `hold` then `release` ended it).
- `submit --retry-delay` without --retries was taken without a word, the delay doing nothing.
- `edit B --after-fail A` of a job `--after A` said "keep it in one of them", not that the
  other list was the job's own.
"""

from __future__ import annotations

from conftest import Herd, wait_for


def test_edit_of_a_job_whose_removed_dependency_refuses_retry_says_what_retry_says(
    shared_daemon: Herd,
) -> None:
    herd = shared_daemon
    first = herd.submit("--", "exit 1")
    waiter = herd.submit("--after", str(first), "--", "true")
    herd.wait_state(waiter, "cancelled")
    herd.cli("rm", str(first))
    retried = herd.cli("retry", "--hold", str(waiter), check=False)
    assert retried.returncode == 1 and "which was removed since" in retried.stderr, retried
    edited = herd.cli("edit", str(waiter), "--gpus", "0", check=False)
    assert edited.returncode == 1, edited
    said = edited.stderr.strip()
    assert said.startswith(f"gpuherd: error: job {waiter} already ended (cancelled): "), said
    assert f"job {waiter} waits for job {first} (--after), which was removed since" in said
    assert "retry --hold" not in said, said  # the dead end it sent the user to
    assert "submit its command again" in said and len(said.splitlines()) == 1


def test_release_of_a_job_waiting_out_its_retry_delay_starts_it_now(shared_daemon: Herd) -> None:
    herd = shared_daemon
    job_id = herd.submit("--retries", "1", "--retry-delay", "1h", "--", "exit 3")
    waiting = wait_for(
        lambda: (job := herd.job(job_id))["state"] == "queued" and job["attempt"] == 1 and job,
        what="its retry to wait",
    )
    assert waiting["retry_at"] is not None
    refused = herd.cli("retry", str(job_id), check=False)
    assert refused.returncode == 1, refused
    assert f"job {job_id} is queued, waiting out its --retry-delay until " in refused.stderr
    assert f"`gpuherd release {job_id}` lets it start now" in refused.stderr, refused.stderr
    assert "turn comes" not in refused.stderr
    released = herd.cli("release", str(job_id))
    assert released.stdout == f"job {job_id}: queued, no longer waits to retry (--retry-delay)\n"
    done = herd.wait_state(job_id, "failed")  # ran at once, not an hour later
    assert done["attempt"] == 2
    events = [(e["event"], e["detail"]) for e in done["events"]]
    assert ("release", "its --retry-delay wait dropped") in events, events
    # A plain queued job is still told it runs when its turn comes; released, it is queued.
    go = herd.home.parent / "go-release"
    blocker = herd.submit("--gpus", "4", "--", f"while [ ! -e {go} ]; do sleep 0.05; done")
    queued = herd.submit("--gpus", "1", "--", "true")
    herd.wait_state(blocker, "running")
    assert "it runs when its turn comes" in herd.cli("retry", str(queued), check=False).stderr
    assert herd.cli("release", str(queued)).stdout == f"job {queued}: already queued\n"
    go.touch()
    herd.wait_state(queued, "succeeded")


def test_a_retry_delay_without_retries_is_warned_of(shared_daemon: Herd) -> None:
    herd = shared_daemon
    idle = herd.cli("submit", "--hold", "--retry-delay", "30s", "--", "true")
    job_id = int(idle.stdout.split()[-1])
    assert idle.stderr == (
        f"gpuherd: warning: job {job_id} is never retried (--retries 0), so its --retry-delay "
        f"30s does nothing: give --retries N with it (while it waits: gpuherd edit {job_id} "
        "--retries 2)\n"
    )
    many = herd.cli("submit", "--hold", "--retry-delay", "1m", "--file", "-", input="true\n:\n")
    assert "are never retried (--retries 0), so their --retry-delay 1m does" in many.stderr
    assert len(many.stderr.splitlines()) == 1, many.stderr
    for quiet in (("--retries", "2"), ("--oom-retry",), ()):
        delay = ("--retry-delay", "30s") if quiet else ()
        said = herd.cli("submit", "--hold", *quiet, *delay, "--", "true")
        assert said.stderr == "", said.stderr


def test_edit_into_both_lists_names_the_jobs_own_list(shared_daemon: Herd) -> None:
    herd = shared_daemon
    first = herd.submit("--hold", "--", "true")
    waiter = herd.submit("--after", str(first), "--", "true")
    refused = herd.cli("edit", str(waiter), "--after-fail", str(first), check=False)
    assert refused.returncode == 1, refused
    said = refused.stderr.strip()
    assert said == (
        f"gpuherd: error: job {first} is in both after (--after) and after_fail (--after-fail): "
        f"a job cannot both succeed and fail; job {waiter} already waits for job {first} with "
        f"--after, which this edit keeps: give --after too, without job {first} (or --clear "
        "after), to wait for its failure instead"
    )
    # The way it names works: the other list cleared in the same edit.
    herd.cli("edit", str(waiter), "--after-fail", str(first), "--clear", "after")
    job = herd.job(waiter)
    assert (job["after"], job["after_fail"]) == ([], [first]), job
    herd.cli("kill", str(first), str(waiter))
