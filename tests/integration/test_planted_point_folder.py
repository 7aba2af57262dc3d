"""A sweep point's folder replaced by a link (its results folder one others can write): the
retry's attempt-2/, job.json and markers went through it, into the folder it named (another
user could mark a point of yours elsewhere done, or plant files in your folders). The start
moves the link aside, makes the point a new folder, and says so in the attempt's stderr
(real daemon, real jobs)."""

from __future__ import annotations

from pathlib import Path

from conftest import Herd


def test_a_retry_in_a_point_folder_replaced_by_a_link_writes_nothing_through_it(
    daemon: Herd, tmp_path: Path
) -> None:
    results, victim = tmp_path / "results", tmp_path / "victim"
    victim.mkdir()
    (victim / "FAILURE").touch()
    ids = daemon.cli(
        "sweep", "exit {x}", "-p", "x", "1", "--gpus", "0", "--results-dir", str(results), "-q"
    ).stdout.split()
    job = int(ids[0])
    daemon.wait_state(job, "failed")
    point = results / "x=1"
    point.rename(results / "aside")
    point.symlink_to(victim)

    daemon.cli("retry", str(job))
    ended = daemon.wait_state(job, "failed")
    assert sorted(p.name for p in victim.iterdir()) == ["FAILURE"]  # untouched
    assert point.is_dir() and not point.is_symlink()
    stderr = (point / "attempt-2" / "stderr.log").read_text()
    assert stderr.startswith(f"gpuherd: {point} was a symbolic link to {victim}, "), stderr
    assert ended["attempts"][1]["log_files"]["stderr"] == str(point / "attempt-2" / "stderr.log")
