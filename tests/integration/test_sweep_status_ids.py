"""`gpuherd sweep status NAME --state failed -q`: each failed point's latest job, for
`retry`. The README's `gpuherd retry $(gpuherd ls -q --sweep lr --state failed)` failed (exit
1) once the sweep was submitted again: `ls` lists every failed run, older runs of points rerun
since too, which `retry` refuses, the point's folder being its newer job's (real daemon)."""

from __future__ import annotations

from pathlib import Path

from conftest import Herd

SWEEP = ("sweep", "test -e ok{x} && echo {x}", "-p", "x", "1", "2", "3", "--name", "rt")


def test_the_failed_points_latest_jobs_are_retried_and_nothing_is_refused(
    daemon: Herd, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    first = daemon.cli(*SWEEP, "--gpus", "0", "-q", cwd=work).stdout.split()
    daemon.cli("sweep", "wait", "rt", check=False)  # (all 3 fail: exit 1)
    (work / "ok3").touch()
    again = daemon.cli(*SWEEP, "--gpus", "0", "-q", cwd=work).stdout.split()
    daemon.cli("sweep", "wait", "rt", check=False)  # x=3 succeeds now
    ids = daemon.cli("sweep", "status", "rt", "--state", "failed", "-q").stdout
    assert ids == f"{again[0]}\n{again[1]}\n"  # the latest of x=1 and x=2; x=3 succeeded
    listed = daemon.cli("ls", "-q", "--sweep", "rt", "--state", "failed").stdout.split()
    assert sorted(listed, key=int) == [*first, *again[:2]]  # (what retry refused: first's)
    retried = daemon.cli("retry", *ids.split())
    assert retried.stdout == f"jobs {again[0]}-{again[1]}: queued again\n"
    everyone = daemon.cli("sweep", "status", "rt", "-q").stdout.split()
    assert everyone == again  # every point, by its latest job


def test_q_is_one_way_to_print(daemon: Herd) -> None:
    for other in ("--json", "--csv"):
        refused = daemon.cli("sweep", "status", "rt", other, "-q", check=False)
        assert refused.returncode == 2
        assert f"give {other} or -q, not both" in refused.stderr
