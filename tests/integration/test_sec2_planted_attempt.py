"""An attempt's folder found already there as a link (or another user's folder) is moved
aside, never followed: in a job's folder others can write (a sweep's results), someone could
plant `attempt-2` while attempt 1 runs, and the retry wrote its `process` file, markers and
logs into the folder the link named, as the job's user."""

from __future__ import annotations

import os
from pathlib import Path

from conftest import Herd


def planted_aside(folder: Path, name: str) -> Path:
    (aside,) = folder.glob(f"{name}.not-yours-*")
    return aside


def test_a_retry_never_runs_in_an_attempt_folder_planted_as_a_link(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"  # a folder of the user's, that the link names
    elsewhere.mkdir()
    plant = (
        'if [ "$GPUHERD_ATTEMPT" = 1 ]; then '
        f'ln -s {elsewhere} "$GPUHERD_JOB_DIR/attempt-2"; exit 1; fi; echo second'
    )
    job = shared_daemon.submit("--gpus", "0", "--retries", "1", plant)
    shown = shared_daemon.wait_state(job, "succeeded", timeout=60)
    assert shown["attempt"] == 2
    assert list(elsewhere.iterdir()) == []  # nothing written through the link
    job_dir = shared_daemon.home / "jobs" / str(job)
    attempt = job_dir / "attempt-2"
    assert attempt.is_dir() and not attempt.is_symlink()
    assert (attempt / "stdout.log").read_text() == "second\n"
    aside = planted_aside(job_dir, "attempt-2")
    assert os.readlink(aside) == str(elsewhere)  # kept, for the user to look at
    said = shared_daemon.cli("log", str(job), "--stderr").stdout
    assert said == (
        f"gpuherd: {attempt} was a symbolic link to {elsewhere}, which another user could "
        f"have put there to have this attempt write into it: moved aside as {aside}; this "
        "attempt has a new folder. Keep the job's folder writable by you alone\n"
    )


def test_run_moves_aside_a_job_folder_planted_as_a_link(herd: Herd, tmp_path: Path) -> None:
    # `gpuherd run` runs attempt 1 in the job's folder itself, in an --output-dir that may be
    # shared; a link there was followed, and the run's logs appended to what it named.
    out, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    out.mkdir()
    elsewhere.mkdir()
    (elsewhere / "stdout.log").write_text("mine\n")
    (out / "job_0").symlink_to(elsewhere)
    jobs = tmp_path / "jobs.txt"
    jobs.write_text("echo ran\n")
    herd.cli("run", "--fake-gpus", "1", "--output-dir", str(out), str(jobs))
    assert (elsewhere / "stdout.log").read_text() == "mine\n"
    assert sorted(p.name for p in elsewhere.iterdir()) == ["stdout.log"]
    assert not (out / "job_0").is_symlink()
    assert (out / "job_0" / "stdout.log").read_text() == "ran\n"
    assert planted_aside(out, "job_0").is_symlink()


def test_a_log_planted_as_a_link_in_a_reused_folder_is_not_appended_to(
    herd: Herd, tmp_path: Path
) -> None:
    out, victim = tmp_path / "out", tmp_path / "victim"
    victim.write_text("mine\n")
    jobs = tmp_path / "jobs.txt"
    jobs.write_text("echo ran\n")
    herd.cli("run", "--fake-gpus", "1", "--output-dir", str(out), str(jobs))
    log = out / "job_0" / "stdout.log"
    for marker in ("SUCCESS", "FAILURE"):  # as if the run had not ended: the logs are kept
        (out / "job_0" / marker).unlink(missing_ok=True)
    log.unlink()
    log.symlink_to(victim)
    herd.cli("run", "--fake-gpus", "1", "--output-dir", str(out), str(jobs))
    assert victim.read_text() == "mine\n"
    assert not log.is_symlink() and log.read_text() == "ran\n"
