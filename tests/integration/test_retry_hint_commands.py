"""What `release` and `retry` tell to do for a job they refuse is a command that works, and
`retry` refuses what it would get wrong:

- `release` of a job cancelled as the job it waits for failed said `(it can: retry, rm)`,
  and a `retry` of it alone was refused in turn ("retry both"): it says what `retry` says.
- The "retry them all" command of a long failed chain named every id (`gpuherd retry 100
  101 ... 499`, 1.7 KB): the runs of ids are ranges (`gpuherd retry 100-499`).
- A sweep point's older job, whose point was run again since by a job removed since
  (`clean --state succeeded`), was retried: the retry moved that good run aside and ran the
  point again. It is refused, naming the run the point's folder holds.
"""

from __future__ import annotations

import json
from pathlib import Path

from conftest import Herd


def refused(herd: Herd, *args: str) -> str:
    """`gpuherd ARGS`, refused: its one error line, without the `gpuherd: error: ` head."""
    answer = herd.cli(*args, check=False)
    assert answer.returncode == 1, answer
    (line,) = answer.stderr.splitlines()
    return line.removeprefix("gpuherd: error: ")


def test_release_of_a_job_cancelled_by_a_failure_names_the_retry_that_works(
    shared_daemon: Herd,
) -> None:
    herd = shared_daemon
    a = herd.submit("--", "exit 1")
    herd.wait_state(a, "failed")
    b = int(herd.cli("submit", "-q", "--after", str(a), "--", "true").stdout)
    herd.wait_state(b, "cancelled")
    told = f"job {b} waits for job {a}, which ended (failed): retry both (gpuherd retry {a} {b})"
    assert refused(herd, "retry", str(b)) == told
    # It said `cannot release a job that has ended (cancelled) (it can: retry, rm)`.
    assert refused(herd, "release", str(b)) == f"job {b} already ended (cancelled): {told}"
    assert herd.job(b)["state"] == "cancelled"
    # A job that ended with nothing it waits for keeps the short refusal.
    assert refused(herd, "release", str(a)).endswith("(it can: retry, rm)")
    # The command told is taken: both run again.
    herd.cli("retry", str(a), str(b))
    assert herd.wait_state(a, "failed")["attempt"] == 2


def test_a_long_chain_is_told_to_retry_its_ids_as_ranges(shared_daemon: Herd) -> None:
    herd = shared_daemon
    chain = [herd.submit("--", "exit 1")]
    herd.wait_state(chain[0], "failed")
    for _ in range(7):
        chain.append(int(herd.cli("submit", "-q", "--after", str(chain[-1]), "--", "true").stdout))
    first, last = chain[0], chain[-1]
    assert chain == list(range(first, last + 1))  # (the test's own jobs, one after another)
    herd.wait_state(last, "cancelled")
    assert refused(herd, "retry", str(last)) == (
        f"job {last} waits for job {last - 1}, which ended (cancelled) as one it waited for "
        f"did: retry them all (gpuherd retry {first}-{last})"
    )
    # The command told is taken: the whole chain runs again.
    again = herd.cli("retry", f"{first}-{last}")
    assert again.stdout == f"jobs {first}-{last}: queued again\n"
    assert herd.wait_state(first, "failed")["attempt"] == 2


def test_an_older_run_whose_point_a_removed_job_ran_since_is_not_retried(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    herd, flag = shared_daemon, tmp_path / "flag"
    flag.touch()
    args = ["sweep", f"test {{x}} != 2 -o ! -e {flag}", "-p", "x", "1", "2"]
    args += ["--name", "gone", "--gpus", "0", "-q"]
    old = [int(i) for i in herd.cli(*args, cwd=tmp_path).stdout.split()][1]
    herd.wait_state(old, "failed")
    summary = herd.submit("--after", str(old), "--", "true")
    herd.wait_state(summary, "cancelled")
    flag.unlink()
    (newer,) = [int(i) for i in herd.cli(*args, cwd=tmp_path).stdout.split()]
    herd.wait_state(newer, "succeeded")
    folder = tmp_path / "results" / "gone" / "x=2"
    assert json.loads((folder / "job.json").read_text())["id"] == newer
    herd.cli("rm", str(newer))  # (as `clean --state succeeded` removes it)

    told = (
        f"job {old} is an older run of gone/x=2: its folder holds the run of job {newer}, "
        "which ran that point after it and is no longer in the queue; to run the point again, "
        "submit the sweep again (it skips the points done, reruns the failed ones)"
    )
    assert refused(herd, "retry", str(old)) == told
    assert refused(herd, "retry", "--hold", str(old)) == told
    assert refused(herd, "release", str(old)) == f"job {old} already ended (failed): {told}"
    # The point's good run stays where it is, its job left as it was.
    assert (folder / "SUCCESS").exists() and not (folder / "previous-runs" / "2").exists()
    assert json.loads((folder / "job.json").read_text())["id"] == newer
    assert herd.job(old)["state"] == "failed" and herd.job(old)["attempt"] == 1
    # A job waiting for the older run is not told to retry it with it.
    assert refused(herd, "retry", str(summary)) == (
        f"job {summary} waits for job {old}, which ended (failed), and job {old} cannot be "
        f"retried: it is an older run of gone/x=2, its folder holds the run of job {newer}, "
        "which ran that point after it and is no longer in the queue; submit job "
        f"{summary} again (its command: gpuherd show {summary})"
    )
    # The way told works: the sweep submitted again skips the point, done.
    again = herd.cli(*args[:-1], "--json", cwd=tmp_path)
    assert json.loads(again.stdout)["skipped_done"] == 2
