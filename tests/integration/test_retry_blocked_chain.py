"""A job cancelled by its dependency, where `retry` cannot run that dependency again (it waits
for a job removed since, or is an older run of a sweep point): "retry both (gpuherd retry 2
3)" was said, refused in turn for job 2, and `release` said "(it can: retry, rm)". What is
said now names the job a retry cannot run, why, and what to submit again."""

from __future__ import annotations

from pathlib import Path

from conftest import Herd


def refused(herd: Herd, *args: str) -> str:
    """`gpuherd ARGS`, refused: its one error line, without the `gpuherd: error: ` head."""
    answer = herd.cli(*args, check=False)
    assert answer.returncode == 1, answer
    (line,) = answer.stderr.splitlines()
    return line.removeprefix("gpuherd: error: ")


def test_a_chain_behind_a_removed_job_is_told_to_submit_again(shared_daemon: Herd) -> None:
    herd = shared_daemon
    a = herd.submit("--", "exit 1")
    b = herd.submit("--after", str(a), "--", "true")
    c = herd.submit("--after", str(b), "--", "true")
    herd.wait_state(c, "cancelled")
    herd.cli("rm", str(a))
    told = (
        f"job {c} waits for job {b}, which ended (cancelled), and job {b} cannot be retried: "
        f"it waits for job {a} (--after), which was removed since; submit jobs {b} and {c} "
        "again (each one's command: gpuherd show ID)"
    )
    assert refused(herd, "retry", str(c)) == told
    assert refused(herd, "release", str(c)) == f"job {c} already ended (cancelled): {told}"
    # A job submitted after it now is told the same, not `gpuherd retry B D`.
    late = herd.cli("submit", "-q", "--after", str(b), "--", "true")
    d = int(late.stdout)
    assert late.stderr == (
        f"gpuherd: warning: job {d} is cancelled at once: job {b}, which it waits for, already "
        f"cancelled (job {b} cannot be retried: it waits for job {a} (--after), which was "
        f"removed since; submit jobs {b} and {d} again (each one's command: gpuherd show ID))\n"
    )


def test_a_job_that_also_waits_for_a_removed_job_is_not_told_to_retry_both(
    shared_daemon: Herd,
) -> None:
    """`retry both (gpuherd retry B C)` ran job B again and refused job C, which waits for a
    removed job A too."""
    herd = shared_daemon
    a = herd.submit("--hold", "--", "true")
    b = herd.submit("--", "exit 1")
    c = herd.submit("--after", f"{a},{b}", "--", "true")
    herd.wait_state(c, "cancelled")
    herd.cli("rm", str(a))
    assert refused(herd, "retry", str(c)).startswith(
        f"job {c} waits for job {a} (--after), which was removed since: a retry cannot know"
    )
    assert herd.job(b)["attempt"] == 1


def test_a_job_after_an_older_run_of_a_sweep_point_is_told_the_newer_one(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    herd, flag = shared_daemon, tmp_path / "flag"
    flag.touch()
    args = ["sweep", f"test {{x}} != 2 -o ! -e {flag}", "-p", "x", "1", "2"]
    args += ["--name", "older", "--gpus", "0", "-q"]
    first = [int(i) for i in herd.cli(*args, cwd=tmp_path).stdout.split()]
    old = first[1]
    herd.wait_state(old, "failed")
    summary = herd.submit("--after", ",".join(map(str, first)), "--", "true")
    herd.wait_state(summary, "cancelled")
    flag.unlink()
    (newer,) = [int(i) for i in herd.cli(*args, cwd=tmp_path).stdout.split()]
    herd.wait_state(newer, "succeeded")
    told = (
        f"job {summary} waits for job {old}, which ended (failed), and job {old} cannot be "
        f"retried: it is an older run of older/x=2, and job {newer} ran that point since; "
        f"submit job {summary} again, waiting for job {newer} in place of job {old} (its "
        f"command: gpuherd show {summary})"
    )
    assert refused(herd, "retry", str(summary)) == told
    assert (
        refused(herd, "release", str(summary)) == f"job {summary} already ended (cancelled): {told}"
    )
    # The older run itself: not "(it can: retry, rm)" either.
    assert refused(herd, "release", str(old)) == (
        f"job {old} already ended (failed): job {old} is an older run of older/x=2: job "
        f"{newer} ran that point since (retry job {newer} if it should run again)"
    )
