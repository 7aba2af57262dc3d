"""The daemon's socket: removed while the daemon runs (a logout's cleanup of XDG_RUNTIME_DIR),
and the note of it that a copied home carries. The queue stays reachable, and only its own."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from conftest import Herd, stays, wait_for

BACK_WITHIN = 15.0
"""Seconds a daemon may take to listen again once its socket file went (three looks:
daemon_presence.SOCKET_CHECK)."""


def blocked(go: Path) -> str:
    return f"while [ ! -e {go} ]; do sleep 0.05; done"


def test_a_removed_socket_is_made_again_and_the_queue_stays_reachable(
    daemon: Herd, tmp_path: Path
) -> None:
    go = tmp_path / "go"
    job = daemon.submit("--", blocked(go))
    daemon.wait_state(job, "running")
    pid = daemon.pid
    shutil.rmtree(daemon.client.socket_path.parent)  # what a logout does to XDG_RUNTIME_DIR

    wait_for(daemon.is_up, BACK_WITHIN, "the daemon to listen on its socket again")
    assert daemon.pid == pid  # the same daemon, with its running job
    refused = daemon.cli("daemon", "start", check=False)
    assert refused.returncode == 1 and "already running" in refused.stderr, refused.stderr
    go.touch()
    assert daemon.wait_state(job, "succeeded", "failed", "lost")["state"] == "succeeded"
    assert daemon.cli("daemon", "stop").stdout.endswith("daemon stopped\n")
    assert not daemon.client.socket_path.exists()
    assert "was removed: listening on" in (daemon.home / "daemon.log").read_text()


@contextmanager
def stopped(pid: int) -> Iterator[None]:
    """The daemon stopped (SIGSTOP), to look at what a client does before it listens again."""
    os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(pid, signal.SIGCONT)


def test_a_command_while_the_socket_is_gone_waits_for_it_to_come_back(daemon: Herd) -> None:
    """`ls` said "no gpuherd daemon is running ... start it again" in the seconds the daemon
    takes to make its removed socket again, and `daemon start` then refused: "already
    running"."""
    job = daemon.submit("--hold", "--", "true")
    with stopped(daemon.pid):  # it cannot make the socket again before `ls` has looked
        daemon.client.socket_path.unlink()  # a cleaner of temporary files
        listing = daemon.popen("ls", "-q", "--all")
        stays(lambda: listing.poll() is None, 1.0, "`ls` waiting for the socket")
    out, err = listing.communicate(timeout=BACK_WITHIN)
    assert (listing.returncode, out, err) == (0, f"{job}\n".encode(), b"")


def test_a_socket_that_does_not_come_back_is_said_so_with_the_daemons_pid(daemon: Herd) -> None:
    pid = daemon.pid
    with stopped(pid):  # stuck: it makes no socket again
        daemon.client.socket_path.unlink()
        listing = daemon.cli("ls", check=False, timeout=BACK_WITHIN)
    assert (listing.returncode, listing.stdout) == (1, "")
    assert listing.stderr == (
        f"gpuherd: error: the daemon for {daemon.home} runs (pid {pid}), but its socket "
        f"{daemon.client.socket_path} is gone and did not come back within 7s: `gpuherd daemon "
        f"log` says why; `kill {pid}` stops the daemon (its running jobs go on), then `gpuherd "
        "daemon start` starts one that listens again\n"
    )
    wait_for(daemon.is_up, BACK_WITHIN, "the daemon to listen on its socket again")


@pytest.fixture
def runtime() -> Iterator[Path]:
    """An XDG_RUNTIME_DIR short enough for a socket path under it (tmp_path is too long)."""
    folder = Path(tempfile.mkdtemp(prefix="xdg"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_a_socket_whose_folder_cannot_be_made_again_moves_to_the_home(
    herd: Herd, runtime: Path
) -> None:
    herd.env["XDG_RUNTIME_DIR"] = str(runtime)
    herd.start("--fake-gpus", "1")
    pid = herd.pid
    shutil.rmtree(runtime / "gpuherd")
    (runtime / "gpuherd").write_text("")  # its folder cannot be made again (a logout: gone)

    status = wait_for(
        lambda: (p := herd.cli("daemon", "status", "--json", check=False)).returncode == 0 and p,
        BACK_WITHIN,
        "the daemon to answer again",
    )
    assert f'"pid": {pid},' in status.stdout
    assert (herd.home / "run" / "herd.sock").is_socket()
    job = herd.submit("--", "true")  # a client of that XDG_RUNTIME_DIR finds it by its note
    assert herd.wait_state(job, "succeeded", "failed")["state"] == "succeeded"
    assert herd.cli("daemon", "stop").stdout.endswith("daemon stopped\n")
    assert not (herd.home / "run" / "herd.sock").exists()


def test_a_copied_home_never_reaches_the_original_daemon(daemon: Herd, tmp_path: Path) -> None:
    """`cp -a` of a home copies its note of the socket: the copy's commands reached the
    original's daemon, and `rm` or `kill` there changed the original's queue."""
    job = daemon.submit("--hold", "--", "true")
    copy = Herd(tmp_path / "copy")
    try:
        subprocess.run(["cp", "-a", str(daemon.home), str(copy.home)], check=True)
        listing = copy.cli("ls", check=False)
        assert listing.returncode != 0, listing.stdout  # before: the original's job 1
        assert listing.stderr.startswith(
            f"gpuherd: error: no gpuherd daemon is running for {copy.home}"
        )
        removed = copy.cli("rm", str(job), check=False)
        assert removed.returncode != 0
        assert daemon.job(job)["state"] == "held"  # the original's queue is untouched

        copy.start()  # the copy gets its own daemon (before: "another daemon listens on ...")
        assert copy.json("show", str(job))["state"] == "held"
        copy.cli("rm", str(job))
        assert daemon.job(job)["state"] == "held"
    finally:
        copy.cleanup()


def test_a_folder_where_the_socket_goes_is_said_so_and_left_alone(herd: Herd) -> None:
    herd.start("--fake-gpus", "1")
    socket_path = herd.client.socket_path
    herd.kill9()  # leaves its socket file
    socket_path.unlink()
    (socket_path / "mine").mkdir(parents=True)  # made there by some other program
    refused = herd.cli("daemon", "start", check=False)
    lines = refused.stderr.splitlines()
    assert refused.returncode == 1 and len(lines) == 1, refused.stderr
    assert f"a folder stands where the daemon's socket goes, {socket_path}: move it" in lines[0]
    assert (socket_path / "mine").is_dir()
    shutil.rmtree(socket_path)
    herd.start()


def test_a_file_named_as_the_socket_is_never_removed(herd: Herd, tmp_path: Path) -> None:
    """GPUHERD_SOCKET naming a file of the user's: it was unlinked (as a dead daemon's
    socket) and the socket put in its place: `GPUHERD_SOCKET=$PWD/notes.txt` lost the notes."""
    notes = tmp_path / "notes.txt"
    notes.write_text("precious\n")
    herd.env["GPUHERD_SOCKET"] = str(notes)
    refused = herd.cli("daemon", "start", "--fake-gpus", "1", check=False)
    assert (refused.returncode, refused.stderr) == (
        1,
        f"gpuherd: error: a file that is no socket stands where the daemon's socket goes, "
        f"{notes}: move it away, then `gpuherd daemon start` again\n",
    )
    assert notes.read_text() == "precious\n"
    assert not herd.is_up()


@pytest.mark.parametrize("under", ["home", "runtime"])
def test_a_file_where_the_sockets_folder_goes_is_said_in_one_line(
    herd: Herd, runtime: Path, under: str
) -> None:
    """`GPUHERD_HOME/run` (or `$XDG_RUNTIME_DIR/gpuherd`) a file: `daemon start` said only
    `[Errno 17] File exists: '…/run'` (`[Errno 20] Not a directory: …`), `ls` named no file."""
    if under == "runtime":
        herd.env["XDG_RUNTIME_DIR"] = str(runtime)
    in_the_way = runtime / "gpuherd" if under == "runtime" else herd.home / "run"
    in_the_way.parent.mkdir(parents=True, exist_ok=True)
    in_the_way.write_text("someone's file\n")
    for args in (["daemon", "start", "--fake-gpus", "1"], ["ls"]):
        refused = herd.cli(*args, check=False)
        lines = refused.stderr.splitlines()
        assert refused.returncode == 1 and len(lines) == 1, refused.stderr
        assert lines[0].startswith(
            f"gpuherd: error: {in_the_way} is a file, not a folder, and the daemon's socket "
            f"{in_the_way}/"
        ), lines[0]
        assert lines[0].endswith(
            "goes under it: move the file aside, or set XDG_RUNTIME_DIR to a folder of yours"
        ), lines[0]
    assert in_the_way.read_text() == "someone's file\n"  # left alone
    assert not herd.is_up()
    in_the_way.unlink()  # as it says
    herd.start("--fake-gpus", "1")
    assert herd.ls_all() == []
