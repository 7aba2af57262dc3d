"""A job whose name (%x) makes a part of its output file's path longer than the file system
takes (255 bytes) fails its attempt saying to give it a shorter name: it said to make the
folder above exist and writable and retry, which met the same error again."""

from __future__ import annotations

from pathlib import Path

from conftest import Herd


def _submit(herd: Herd, work: Path, *args: str) -> int:
    return int(herd.cli("submit", "-q", *args, cwd=work).stdout.split()[0])


def test_a_name_too_long_for_a_folder_says_to_shorten_it(
    shared_daemon: Herd, shared_work: Path
) -> None:
    herd, long_name = shared_daemon, "n" * 300
    (shared_work / "runs").mkdir()
    job = _submit(herd, shared_work, "-n", long_name, "-o", "runs/%x/out.log", "echo hi")
    ended = herd.wait_state(job, "failed")
    assert ended["outcome"] == "spawn_error"
    assert ended["message"] == (
        f"cannot create the folder {shared_work}/runs/{long_name} for the file its stdout "
        "goes to: File name too long; each part of a path holds at most 255 bytes: give the "
        f"job a shorter name: `gpuherd retry --hold {job}`, `gpuherd edit {job} --name "
        f"NAME`, `gpuherd release {job}`"
    )
    herd.cli("retry", "--hold", str(job))
    herd.cli("edit", str(job), "--name", "short")
    herd.cli("release", str(job))
    herd.wait_state(job, "succeeded")
    assert (shared_work / "runs" / "short" / "out.log").read_text() == "hi\n"


def test_a_file_name_too_long_says_to_shorten_it(shared_daemon: Herd, shared_work: Path) -> None:
    herd, long_name = shared_daemon, "é" * 200  # 400 bytes
    job = _submit(herd, shared_work, "-n", long_name, "-o", "%x.log", "echo hi")
    ended = herd.wait_state(job, "failed")
    assert ended["message"].endswith(
        f"File name too long; each part of a path holds at most 255 bytes: give the job a "
        f"shorter name: `gpuherd retry --hold {job}`, `gpuherd edit {job} --name NAME`, "
        f"`gpuherd release {job}`"
    )
