"""An attempt herd.db did not know (restored from an older backup), found in its folder, is
recorded with the files its output went to, as its folder's links name them: the job's files
in the backup may be older than the run (an `edit --output` since). Before, such an attempt
recorded none, and `gpuherd log` read the backup's file, which the run never wrote."""

from __future__ import annotations

from pathlib import Path

from test_restored_database import (
    CHECKPOINT,
    as_if_never_paused,
    backup,
    restore,
    running,
)

from conftest import Herd, wait_for


def test_an_attempt_found_in_its_folder_keeps_the_file_it_wrote(herd: Herd, tmp_path: Path) -> None:
    herd.start("--fake-gpus", "1")
    go, copy = tmp_path / "go", tmp_path / "backup.db"
    in_backup, written = tmp_path / "backup-said.log", tmp_path / "written.log"
    command = "echo hello from the run; " + CHECKPOINT.format(go=go)
    # The backup has the job queued, writing in_backup; an edit since sends it to written.
    herd.cli("pause")
    job = herd.submit("--output", str(in_backup), "--", command)
    backup(herd, copy)
    herd.cli("edit", str(job), "--output", str(written))
    herd.cli("resume")
    running(herd, job, 1)
    wait_for(lambda: "hello" in (written.read_text() if written.exists() else ""), what="output")

    restore(herd, copy)  # the run goes on, unknown to the restored herd.db
    as_if_never_paused(herd)
    herd.start("--fake-gpus", "1")
    go.touch()
    assert herd.wait_state(job, "succeeded")["attempt"] == 1

    attempt = herd.json("show", str(job))["attempts"][0]
    assert attempt["log_files"]["stdout"] == str(written)
    assert herd.cli("log", str(job)).stdout == "hello from the run\n"
    assert not in_backup.exists()
