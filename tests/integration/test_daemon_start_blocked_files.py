"""A daemon whose start fails on one of its own files in the home (a folder, or a dangling
link, where `daemon.lock`, `daemon.socket` or `ui_token` goes: an `mkdir` or `ln -s` gone
wrong, a restore of a home by hand) said only Python's words, `gpuherd: error: [Errno 21] Is a
directory: '/home/me/.local/share/gpuherd/daemon.lock'`: not what was wrong, nor what to do
(daemon_failure.os_failure). It now names the file and the way out, which works as shown."""

from __future__ import annotations

import shlex
import subprocess

import pytest

from conftest import Herd


def refused(herd: Herd) -> str:
    """`daemon start` refused: exit 1, no daemon, one `gpuherd: error:` line (returned)."""
    proc = herd.cli("daemon", "start", "--fake-gpus", "2", check=False)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr + (herd.home / "daemon.log").read_text()
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("gpuherd: error: "), proc.stderr
    assert not herd.is_up()
    return lines[0].removeprefix("gpuherd: error: ")


def run_the_advice(said: str) -> None:
    """The command the line gives, between its backquotes, run as a user would paste it."""
    command = said.split("`")[1]
    subprocess.run(command, shell=True, check=True)


@pytest.mark.parametrize("name", ["daemon.lock", "daemon.socket", "ui_token"])
def test_a_folder_where_a_file_of_the_daemon_goes_is_named_with_the_way_out(
    herd: Herd, name: str
) -> None:
    (herd.home / name).mkdir(parents=True)
    (herd.home / name / "kept").write_text("yours\n")
    said = refused(herd)
    path = herd.home / name
    aside = shlex.quote(f"{path}.aside")
    assert said == (
        f"{path} is a folder, where the daemon keeps a file of that name: move it aside "
        f"(`mv {shlex.quote(str(path))} {aside}`), then `gpuherd daemon start` again"
    )
    assert (path / "kept").read_text() == "yours\n"  # the folder is left as it was
    assert not (herd.home / "daemon.socket.tmp").exists()  # (was left by a blocked note)
    run_the_advice(said)
    herd.start("--fake-gpus", "2")
    assert (herd.home / f"{name}.aside" / "kept").read_text() == "yours\n"


def test_a_dangling_link_as_the_lock_is_named_with_the_way_out(herd: Herd) -> None:
    herd.home.mkdir()
    lock = herd.home / "daemon.lock"
    lock.symlink_to(herd.home.parent / "gone" / "daemon.lock")
    said = refused(herd)
    assert said == (
        f"{lock} is a link to {herd.home.parent}/gone/daemon.lock, which does not exist: "
        f"remove the link (`rm {lock}`: the daemon makes its own file), then `gpuherd daemon "
        "start` again"
    )
    run_the_advice(said)
    herd.start("--fake-gpus", "2")


def test_a_folder_at_the_database_is_named_with_the_way_out(herd: Herd) -> None:
    """It said `cannot use the database … (unable to open database file): check that it and
    its folder exist…`: both did."""
    database = herd.home / "herd.db"
    database.mkdir(parents=True)
    said = refused(herd)
    assert said == (
        f"{database} is a folder, where the daemon keeps a file of that name: move it aside "
        f"(`mv {database} {database}.aside`), then `gpuherd daemon start` again"
    )
    run_the_advice(said)
    herd.start("--fake-gpus", "2")
    assert (herd.home / "herd.db").is_file()


def test_a_link_at_the_database_into_a_missing_folder_is_named_with_the_ways_out(
    herd: Herd,
) -> None:
    """The folder first: the queue may be on a disk not mounted, which a new queue made in
    the home (`rm` the link, the way out for the daemon's other files) would hide."""
    herd.home.mkdir()
    database = herd.home / "herd.db"
    disk = herd.home.parent / "disk"
    database.symlink_to(disk / "herd.db")
    said = refused(herd)
    assert said == (
        f"{database} is a link to {disk}/herd.db, whose folder {disk} does not exist (a disk "
        f"not mounted?): mount it, or make the folder for a new queue there (`mkdir -p {disk}`), "
        f"or remove the link for a new queue in the home (`rm {database}`); then `gpuherd "
        "daemon start` again"
    )
    assert database.is_symlink()  # left as it was
    run_the_advice(said)
    herd.start("--fake-gpus", "2")
    assert (disk / "herd.db").is_file()  # the queue is where the link leads


def test_a_link_at_the_database_to_a_file_not_made_yet_starts_a_queue_there(herd: Herd) -> None:
    herd.home.mkdir()
    (herd.home / "herd.db").symlink_to(herd.home.parent / "queue.db")
    herd.start("--fake-gpus", "2")
    assert (herd.home.parent / "queue.db").is_file()
