"""`rm` and `clean` of jobs whose folders cannot be deleted (a folder made immutable: a
read-only folder stops no root, and tests run as root). The jobs' rows go; the command says
which folders were left, where, why and what to do, and fails (exit 1); each daemon start
tries again until they are gone (real daemon, real `chattr +i`)."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import Herd
from gpuherd.pyapi import connect

LEFT = (
    "gpuherd: error: job {id}: removed, but not its folder {folder} (Operation not "
    "permitted): the daemon tries again at its next start, or fix that and delete it: "
    "rm -rf {folder}"
)


@pytest.fixture
def immutable(tmp_path: Path) -> Iterator[list[Path]]:
    """Folders the test makes immutable (`chattr +i` them with `freeze`), made mutable again
    at the end, or pytest could not delete its temporary folder."""
    frozen: list[Path] = []
    probe = tmp_path / "probe"
    probe.mkdir()
    if not shutil.which("chattr") or subprocess.run(["chattr", "+i", probe]).returncode:
        pytest.skip("no chattr +i on this file system")
    frozen.append(probe)
    try:
        yield frozen
    finally:
        subprocess.run(["chattr", "-i", *frozen], check=False)


def freeze(frozen: list[Path], folder: Path) -> None:
    subprocess.run(["chattr", "+i", folder], check=True)
    frozen.append(folder)


def thaw(folder: Path) -> None:
    subprocess.run(["chattr", "-i", folder], check=True)


def noted(herd: Herd) -> str:
    """Every note of folders of removed jobs not deleted yet, in one text."""
    return "".join(p.read_text() for p in sorted((herd.home / "removing").glob("*.json")))


def test_rm_of_a_job_whose_folder_cannot_be_deleted_says_so_and_a_restart_tries_again(
    herd: Herd, immutable: list[Path]
) -> None:
    # Before: "job 1: removed", exit 0, the folder left with its logs and noted nowhere.
    herd.start("--fake-gpus", "1")
    job = herd.submit("echo hi")
    herd.wait_state(job, "succeeded")
    folder = herd.home / "jobs" / str(job)
    freeze(immutable, folder / "attempt-1")
    removed = herd.cli("rm", str(job), check=False)
    assert removed.returncode == 1, removed
    assert removed.stdout == ""
    assert removed.stderr.splitlines() == [LEFT.format(id=job, folder=folder)]
    assert herd.all_jobs() == []  # the row is gone all the same
    assert (folder / "attempt-1" / "stdout.log").read_text() == "hi\n"
    assert str(folder) in noted(herd)
    # Still undeletable at the next start: still noted, said in the log.
    herd.cli("daemon", "stop")
    herd.start()
    assert folder.is_dir() and str(folder) in noted(herd)
    assert (
        f"removed job {job}: {folder} still cannot be deleted"
        in (herd.home / "daemon.log").read_text()
    )
    thaw(folder / "attempt-1")
    herd.cli("daemon", "stop")
    herd.start()
    assert not folder.exists()
    assert noted(herd) == ""


def test_clean_removes_what_it_can_and_fails_naming_the_folder_left(
    herd: Herd, immutable: list[Path]
) -> None:
    herd.start("--fake-gpus", "1")
    stuck, fine = herd.submit_lines(["true", "true"], "--gpus", "0")
    herd.wait_state(stuck, "succeeded")
    herd.wait_state(fine, "succeeded")
    folder = herd.home / "jobs" / str(stuck)
    freeze(immutable, folder / "attempt-1")
    cleaned = herd.cli("clean", check=False)
    assert cleaned.returncode == 1, cleaned
    assert cleaned.stdout == f"job {fine}: removed\n"
    assert cleaned.stderr.splitlines() == [LEFT.format(id=stuck, folder=folder)]
    assert "Traceback" not in cleaned.stderr
    assert herd.all_jobs() == []
    assert not (herd.home / "jobs" / str(fine)).exists() and folder.is_dir()
    # Deleted by hand, as it says: the next start forgets the note.
    thaw(folder / "attempt-1")
    shutil.rmtree(folder)
    herd.cli("daemon", "stop")
    herd.start()
    assert noted(herd) == ""
    assert herd.cli("clean").stdout == "nothing to clean: no finished job\n"


def test_the_python_apis_remove_says_the_folder_left(
    herd: Herd, immutable: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Before the fix of the message too: "no job 1" raised, for the job it had just removed.
    herd.start("--fake-gpus", "1")
    monkeypatch.setenv("GPUHERD_HOME", str(herd.home))
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    job = connect(start=False).submit("true", gpus=0)
    assert job.wait(timeout=30) == "succeeded"
    folder = herd.home / "jobs" / str(job.id)
    freeze(immutable, folder / "attempt-1")
    assert job.remove() == LEFT.format(id=job.id, folder=folder).removeprefix("gpuherd: error: ")
    assert herd.all_jobs() == []


def test_clean_past_ten_folders_left_names_the_rest_as_removed_not_refused(
    herd: Herd, immutable: list[Path]
) -> None:
    # Before: the 11th onward were "2 more jobs refused too", of jobs that were removed.
    herd.start("--fake-gpus", "1")
    ids = herd.submit_lines(["true"] * 12, "--gpus", "0")
    for job in ids:
        herd.wait_state(job, "succeeded")
        freeze(immutable, herd.home / "jobs" / str(job) / "attempt-1")
    cleaned = herd.cli("clean", check=False)
    assert cleaned.returncode == 1, cleaned
    errors = cleaned.stderr.splitlines()
    assert errors[:10] == [
        LEFT.format(id=job, folder=herd.home / "jobs" / str(job)) for job in ids[:10]
    ]
    assert errors[10:] == [
        f"gpuherd: error: 2 more jobs removed, but not all their files either: {ids[10]}-{ids[11]}"
    ]
    assert herd.all_jobs() == []
