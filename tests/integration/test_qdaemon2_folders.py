"""The folders a daemon and a CLI call stand in. A daemon kept the folder `daemon start` was
run in as its own (pinning it; removed, the on-end hooks' shells failed their getcwd()); a
failed start left its options remembered for the next plain start; a `submit` from a folder
removed since said "No such file or directory (writing the output)"."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

from conftest import Herd, busy_port, wait_for
from gpuherd.store import Store


def test_the_daemon_runs_in_its_home_not_in_the_folder_it_was_started_in(
    herd: Herd, tmp_path: Path
) -> None:
    started_in = tmp_path / "started-here"
    started_in.mkdir()
    herd.cli("daemon", "start", "--fake-gpus", "2", cwd=started_in)
    assert os.readlink(f"/proc/{herd.pid}/cwd") == str(herd.home)
    started_in.rmdir()  # (a folder the user is done with)
    herd.cli("config", "set", "on-end", "echo hooked in $(pwd)")
    job = herd.submit("--cwd", str(tmp_path), "--", "pwd")
    herd.wait_state(job, "succeeded")
    assert herd.cli("log", str(job)).stdout == f"{tmp_path}\n"  # the submission's folder
    log = herd.home / "hooks.log"
    wait_for(lambda: log.exists() and "hooked in" in log.read_text(), what="the hook's output")
    assert "getcwd" not in log.read_text()  # (its shell's "getcwd() failed" before)
    assert f"hooked in {herd.home}\n" in log.read_text()


def _start_at_a_taken_port(herd: Herd, gpus: str) -> tuple[int, subprocess.CompletedProcess[str]]:
    """`daemon start --fake-gpus GPUS --listen` at a port another socket holds: (port, call)."""
    with busy_port() as taken:
        port = taken.getsockname()[1]
        failed = herd.cli(
            "daemon", "start", "--fake-gpus", gpus, "--listen", f"127.0.0.1:{port}", check=False
        )
    assert failed.returncode == 1
    return port, failed


def test_a_failed_first_start_leaves_none_of_its_options_remembered(herd: Herd) -> None:
    port, failed = _start_at_a_taken_port(herd, "2")
    assert failed.stderr.startswith(f"gpuherd: error: cannot listen on 127.0.0.1:{port}: ")
    store = Store(herd.home / "herd.db")
    try:  # the next plain start ran with --fake-gpus 2, as if given
        assert (store.get_setting("probe"), store.get_setting("executor")) == (None, None)
    finally:
        store.close()


def test_a_taken_listen_port_says_what_to_do_and_port_0_as_it_advises_starts(herd: Herd) -> None:
    # It said only `cannot listen on 127.0.0.1:PORT: Address already in use`.
    port, failed = _start_at_a_taken_port(herd, "1")
    assert failed.stderr.splitlines() == [
        f"gpuherd: error: cannot listen on 127.0.0.1:{port}: Address already in use: free that "
        "port, or start the daemon with another --listen address (port 0 takes a free one: "
        "--listen 127.0.0.1:0)"
    ]
    started = herd.cli("daemon", "start", "--fake-gpus", "1", "--listen", "127.0.0.1:0")
    assert "dashboard: http://127.0.0.1:" in started.stdout, started.stdout


def test_a_listen_address_not_this_machines_is_not_told_to_free_a_port(herd: Herd) -> None:
    # 203.0.113.1 (TEST-NET-3) is no address of this machine: nothing to free (review).
    failed = herd.cli(
        "daemon", "start", "--fake-gpus", "1", "--listen", "203.0.113.1:8888", check=False
    )
    assert failed.returncode == 1
    [said] = failed.stderr.splitlines()
    assert said.startswith("gpuherd: error: cannot listen on 203.0.113.1:8888: "), said
    assert "free that port" not in said, said
    # It stopped at "Cannot assign requested address", with no word of an address that does.
    assert said.endswith(
        " (no address of this machine): give one of its own, --listen 127.0.0.1:8888 (this"
        " machine only) or --listen 0.0.0.0:8888 (every interface)"
    ), said


def test_a_restart_where_the_last_daemon_listened_no_more_says_what_to_start(
    herd: Herd,
) -> None:
    # The machine's address changed since (another network): the restart was told to "free
    # that port", which nothing holds.
    herd.start("--fake-gpus", "1", "--listen", "127.0.0.1:0")
    herd.cli("daemon", "stop")
    store = Store(herd.home / "herd.db")
    try:
        store.set_setting("listen", "203.0.113.1:8888")
    finally:
        store.close()
    failed = herd.cli("daemon", "restart", check=False)
    assert (failed.returncode, failed.stderr.splitlines()[-1]) == (
        1,
        "gpuherd: error: cannot listen on 203.0.113.1:8888: Cannot assign requested address"
        " (where the last daemon listened; no address of this machine now): start one with"
        " gpuherd daemon start --listen 127.0.0.1:8888 (this machine only) or --listen"
        " 0.0.0.0:8888 (every interface)",
    )


def test_a_failed_start_leaves_the_last_starts_gpus(herd: Herd) -> None:
    herd.start("--fake-gpus", "3")
    herd.cli("daemon", "stop")
    with busy_port() as taken:
        port = taken.getsockname()[1]
        failed = herd.cli(
            "daemon", "start", "--fake-gpus", "2", "--listen", f"127.0.0.1:{port}", check=False
        )
    assert failed.returncode == 1
    assert not (herd.home / "run" / "herd.sock").exists()  # its socket went with it
    herd.start()
    assert [g["index"] for g in herd.json("gpus")["gpus"]] == [0, 1, 2]


def in_removed_folder(herd: Herd, folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`gpuherd ARGS` run in `folder`, removed after the shell went into it (as a `cd` into a
    temporary folder that another terminal then deletes)."""
    return python_in_removed_folder(herd, folder, "-m", "gpuherd", *args)


def python_in_removed_folder(
    herd: Herd, folder: Path, *args: str
) -> subprocess.CompletedProcess[str]:
    """`python ARGS` run in `folder`, removed after the shell went into it."""
    folder.mkdir()
    python = shlex.join([sys.executable, *args])
    script = f"cd {shlex.quote(str(folder))} && rmdir ../{folder.name} && exec {python}"
    return subprocess.run(
        ["sh", "-c", script], env=herd.env, capture_output=True, text=True, timeout=60
    )


def test_config_set_from_a_removed_folder_sets_it_and_exits_0(herd: Herd, tmp_path: Path) -> None:
    """(It saved the hook, then failed on the hint's look for a file of that name there.)"""
    herd.start("--fake-gpus", "1")
    said = in_removed_folder(herd, tmp_path / "gone", "config", "set", "on-end", "./notify.sh")
    assert (said.returncode, said.stderr) == (  # (none in the daemon's home either)
        0,
        f"gpuherd: warning: on-end: ./notify.sh does not exist in {herd.home} (the hook's "
        "working directory): the hook will fail unless it is made before it starts; check the "
        "path\n",
    ), said
    assert herd.json("config")["on-end"] == "./notify.sh"


def test_the_python_api_from_a_removed_folder_says_so_in_one_line(
    herd: Herd, tmp_path: Path
) -> None:
    herd.start("--fake-gpus", "1")
    script = (
        "import gpuherd\n"
        "try:\n"
        "    gpuherd.connect().submit('true')\n"
        "except gpuherd.HerdError as exc:\n"
        "    print(type(exc).__name__, exc)\n"
    )
    said = python_in_removed_folder(herd, tmp_path / "gone", "-c", script)
    assert (said.returncode, said.stderr) == (0, ""), said
    assert said.stdout == (
        "HerdError the current folder no longer exists (it was removed): cd to an existing "
        "folder, or give cwd=FOLDER\n"
    )
    assert herd.all_jobs() == []


def test_submit_from_a_removed_folder_says_so_in_one_line(herd: Herd, tmp_path: Path) -> None:
    herd.start("--fake-gpus", "2")
    said = in_removed_folder(herd, tmp_path / "gone", "submit", "--", "true")
    assert (said.returncode, said.stdout) == (1, "")
    assert said.stderr == (
        "gpuherd: error: the current folder no longer exists (it was removed): cd to an "
        "existing folder, or give --cwd DIR\n"
    )
    assert herd.all_jobs() == []
    given = in_removed_folder(herd, tmp_path / "gone2", "submit", "--cwd", str(tmp_path), "true")
    assert given.returncode == 0, given  # a folder given: the one removed is not asked for


def test_run_from_a_removed_folder_says_so_in_one_line(herd: Herd, tmp_path: Path) -> None:
    jobs = tmp_path / "jobs.txt"  # (a job.py is refused as a script first: not_job_file.py)
    jobs.write_text("echo ran\n")
    said = in_removed_folder(herd, tmp_path / "gone", "run", "--fake-gpus", "1", str(jobs))
    assert (said.returncode, said.stdout) == (1, "")
    assert said.stderr == (
        "gpuherd: error: the current folder no longer exists (it was removed): cd to an "
        "existing folder\n"
    )
