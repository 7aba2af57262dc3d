"""A job's `--output` file is never written through another user's symbolic link: in a folder
others can write (a shared project folder), someone could plant `out-7.log` -> `~/.bashrc`
(or `runs/7` -> a folder of yours) while the job waits, and its first attempt emptied that
file and wrote the job's output into it, as the job's user. The user's own links, and root's,
are followed as before.

A link of another user is made here by `lchown`, which only root may do: skipped otherwise.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import Herd

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="lchown to another uid needs root")

OTHER_UID = 54321  # no such user needed: a link's owner is a number


def plant(link: Path, target: Path) -> None:
    link.symlink_to(target)
    os.lchown(link, OTHER_UID, OTHER_UID)


def test_a_link_planted_while_the_job_waits_is_not_written_through(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    shared, precious = tmp_path / "shared", tmp_path / "bashrc"
    shared.mkdir()
    precious.write_text("mine\n")
    job = shared_daemon.submit("--gpus", "0", "--hold", "--output", f"{shared}/out.log", "echo x")
    plant(shared / "out.log", precious)
    shared_daemon.cli("release", str(job))
    shown = shared_daemon.wait_state(job, "failed", timeout=60)
    assert precious.read_text() == "mine\n"  # neither emptied nor written to
    assert shown["outcome"] == "spawn_error"
    assert (
        f"{shared}/out.log is a symbolic link of another user (uid {OTHER_UID}) to {precious}"
        in shown["message"]
    )


def test_a_folder_a_placeholder_names_planted_as_a_link_is_not_written_into(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    shared, mine = tmp_path / "shared", tmp_path / "mine"
    shared.mkdir()
    mine.mkdir()
    job = shared_daemon.submit(
        "--gpus", "0", "--hold", "--output", f"{shared}/run-%j/o.log", "true"
    )
    plant(shared / f"run-{job}", mine)
    shared_daemon.cli("release", str(job))
    shown = shared_daemon.wait_state(job, "failed", timeout=60)
    assert list(mine.iterdir()) == []
    assert f"{shared}/run-{job} is a symbolic link of another user" in shown["message"]


def test_submit_refuses_an_output_through_another_users_link(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    shared, mine = tmp_path / "shared", tmp_path / "mine"
    shared.mkdir()
    mine.mkdir()
    plant(shared / "logs", mine)
    before = len(shared_daemon.all_jobs())
    said = shared_daemon.usage_error("submit", "--output", f"{shared}/logs/out.log", "echo x")
    assert said == (
        f"gpuherd: error: --output {shared}/logs/out.log: {shared}/logs is a symbolic link of "
        f"another user (uid {OTHER_UID}) to {mine}, who could point it at a file of yours for "
        "the job to write over: remove it, or name a file in a folder only you can write "
        "(see gpuherd submit --help)\n"
    )
    assert len(shared_daemon.all_jobs()) == before  # nothing queued


def test_the_users_own_link_is_followed(shared_daemon: Herd, tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    (tmp_path / "latest").symlink_to(logs)  # the user's own: followed, as always
    job = shared_daemon.submit("--gpus", "0", "--output", f"{tmp_path}/latest/out.log", "echo x")
    shared_daemon.wait_state(job, "succeeded", timeout=60)
    assert (logs / "out.log").read_text() == "x\n"
