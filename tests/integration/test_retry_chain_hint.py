"""A chain of --after jobs cancelled by its first job's failure: what submit and retry say
to run it again is a command that does (naming the whole chain), not one refused again."""

from __future__ import annotations

import re

from conftest import Herd


def test_the_hint_to_retry_a_cancelled_chain_names_its_first_job(shared_daemon: Herd) -> None:
    daemon = shared_daemon
    first = daemon.submit("--", "exit 1")
    daemon.wait_state(first, "failed")
    middle = int(daemon.cli("submit", "-q", "--after", str(first), "--", "true").stdout)
    last = daemon.cli("submit", "-q", "--after", str(middle), "--", "true")
    end = int(last.stdout)
    # "gpuherd retry MIDDLE END runs both again" was refused: job MIDDLE waits for FIRST.
    assert last.stderr == (
        f"gpuherd: warning: job {end} is cancelled at once: job {middle}, which it waits for, "
        f"already cancelled (gpuherd retry {first} {middle} {end} runs them all again)\n"
    )
    refused = daemon.cli("retry", str(end), check=False)
    assert refused.returncode == 1
    assert refused.stderr == (
        f"gpuherd: error: job {end} waits for job {middle}, which ended (cancelled) as one it "
        f"waited for did: retry them all (gpuherd retry {first} {middle} {end})\n"
    )
    assert daemon.job(end)["state"] == "cancelled"
    # The job next to the failure keeps the short hint.
    alone = daemon.cli("retry", str(middle), check=False)
    assert f"retry both (gpuherd retry {first} {middle})" in alone.stderr
    # The hint's command is taken: the chain runs again.
    again = daemon.cli("retry", str(first), str(middle), str(end))
    assert again.returncode == 0 and again.stdout.endswith(": queued again\n")
    assert daemon.wait_state(first, "failed")["attempt"] == 2


def hinted(said: str) -> list[str]:
    """The arguments of the `gpuherd retry ...` a warning or a refusal gives, as typed."""
    found = re.search(r"\(gpuherd (retry [\d ,-]+?)(?: runs |\))", said)
    assert found, said
    return found[1].split()


def ended(daemon: Herd, command: str, state: str) -> int:
    job = daemon.submit("--", command)
    daemon.wait_state(job, state)
    return job


def submitted(daemon: Herd, *args: str) -> tuple[int, str]:
    """A job submitted with `args` (cancelled at once): its id, and what `submit` warned."""
    answer = daemon.cli("submit", "-q", *args, "--", "true")
    return int(answer.stdout), answer.stderr


def retried_as_told(daemon: Herd, said: str, job_id: int) -> None:
    """The hint's command, run as given, is taken (not refused again): job `job_id` runs
    again."""
    again = daemon.cli(*hinted(said), check=False)
    assert (again.returncode, again.stderr) == (0, ""), again.stdout
    assert daemon.wait_state(job_id, "failed", "succeeded")["attempt"] == 2


def says(daemon: Herd, job_id: int, warned: str, warning: str, refusal: str) -> None:
    """`submit` warned of job `job_id` that it `is cancelled at once: WARNING`, and `retry` of
    it alone is refused as it `waits for REFUSAL`, naming the same command."""
    assert warned == f"gpuherd: warning: job {job_id} is cancelled at once: {warning}\n"
    refused = daemon.cli("retry", str(job_id), check=False)
    assert (refused.returncode, refused.stderr) == (
        1,
        f"gpuherd: error: job {job_id} waits for {refusal}\n",
    )
    assert hinted(refused.stderr) == hinted(warned)


def test_a_job_after_two_failed_jobs_is_told_to_retry_both_of_them(shared_daemon: Herd) -> None:
    """`gpuherd retry A C runs both again` was said of a job C `--after A,B` with A and B
    failed: refused in turn, as job B stays failed."""
    daemon = shared_daemon
    a, b = ended(daemon, "exit 1", "failed"), ended(daemon, "exit 1", "failed")
    c, warned = submitted(daemon, "--after", f"{a},{b}")
    says(
        daemon,
        c,
        warned,
        f"job {a}, which it waits for, already failed (gpuherd retry {a} {b} {c} runs them all "
        "again)",
        f"job {a}, which ended (failed): retry them all (gpuherd retry {a} {b} {c})",
    )
    retried_as_told(daemon, warned, b)


def test_a_chain_whose_middle_job_waited_for_two_failed_jobs_names_all(
    shared_daemon: Herd,
) -> None:
    daemon = shared_daemon
    a, b = ended(daemon, "exit 1", "failed"), ended(daemon, "exit 1", "failed")
    middle, _ = submitted(daemon, "--after", f"{a},{b}")
    end, warned = submitted(daemon, "--after", str(middle))
    command = f"gpuherd retry {a} {b} {middle} {end}"
    says(
        daemon,
        end,
        warned,
        f"job {middle}, which it waits for, already cancelled ({command} runs them all again)",
        f"job {middle}, which ended (cancelled) as one it waited for did: retry them all "
        f"({command})",
    )
    retried_as_told(daemon, warned, b)


def test_a_chain_cancelled_by_a_success_says_nothing_failed(shared_daemon: Herd) -> None:
    """`--after-fail` a job that succeeded, then a job `--after` that one: "ended (cancelled)
    as one it waited for did" said a job failed, and "runs them all again" that all would run;
    its first job succeeded, and the rest runs only if its rerun fails."""
    daemon = shared_daemon
    first = ended(daemon, "true", "succeeded")
    cleanup, _ = submitted(daemon, "--after-fail", str(first))
    end, warned = submitted(daemon, "--after", str(cleanup))
    runs = (
        f"gpuherd retry {first} {cleanup} {end} runs job {first} again, and the jobs waiting "
        "for it only if it fails this time"
    )
    says(
        daemon,
        end,
        warned,
        f"job {cleanup}, which it waits for, already cancelled ({runs})",
        f"job {cleanup}, which ended (cancelled) as job {first}, which it waited for to fail "
        f"(--after-fail), succeeded: retry them all ({runs})",
    )
    retried_as_told(daemon, warned, first)


def test_a_job_cancelled_by_hand_before_its_dependency_failed_is_retried_with_it(
    shared_daemon: Herd,
) -> None:
    """Job B `--after A`, cancelled by the user while A waited, and A failing after it: of
    job C `--after B`, `retry B C` was said (B was not cancelled as A failed, so the chain
    stopped at it), and refused in turn for job B, which waits for A."""
    daemon = shared_daemon
    a = daemon.submit("--hold", "--", "exit 1")
    b = int(daemon.cli("submit", "-q", "--after", str(a), "--", "true").stdout)
    c = int(daemon.cli("submit", "-q", "--after", str(b), "--", "true").stdout)
    daemon.cli("kill", str(b))
    daemon.wait_state(c, "cancelled")
    daemon.cli("release", str(a))
    daemon.wait_state(a, "failed")
    assert daemon.job(b)["message"] == "cancelled by the user"
    refused = daemon.cli("retry", str(c), check=False)
    assert (refused.returncode, refused.stderr) == (
        1,
        f"gpuherd: error: job {c} waits for job {b}, which ended (cancelled): retry them all "
        f"(gpuherd retry {a} {b} {c})\n",
    )
    # `release` offers what `retry` does, not `(it can: retry, rm)`: a retry of job C alone.
    released = daemon.cli("release", str(c), check=False)
    assert released.stderr == (
        f"gpuherd: error: job {c} already ended (cancelled): job {c} waits for job {b}, which "
        f"ended (cancelled): retry them all (gpuherd retry {a} {b} {c})\n"
    )
    d, warned = submitted(daemon, "--after", str(c))
    assert hinted(warned) == ["retry", str(a), str(b), str(c), str(d)]
    retried_as_told(daemon, warned, a)
