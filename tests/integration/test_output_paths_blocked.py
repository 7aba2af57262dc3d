"""`--output`/`--error` files that cannot be made for a reason other than a missing folder or
the user's permissions, named for what it is: a file standing where a folder of the path
should be (`mkdir -p`, which was advised, fails there), and a folder on a read-only mount
(said "permission denied", which no chmod mends)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from conftest import Herd
from gpuherd.errors import InvalidValue


def held_in(herd: Herd, work: Path) -> int:
    """A held job submitted from the folder `work`."""
    return int(herd.cli("submit", "-q", "--hold", "true", cwd=work).stdout.split()[0])


def test_a_file_where_the_folder_should_be_is_named_as_in_the_way(
    shared_daemon: Herd, shared_work: Path
) -> None:
    herd = shared_daemon
    in_the_way = shared_work / "afile"
    in_the_way.touch()
    said = (
        f"a file stands where a folder should be on its path ({in_the_way} is a file): move it "
        "aside, or name a file elsewhere"
    )
    assert herd.usage_error("submit", "-o", f"{in_the_way}/x.log", "true") == (
        f"gpuherd: error: --output {in_the_way}/x.log: {said} (see gpuherd submit --help)\n"
    )
    # Below it, and up to a placeholder's folder (`afile/runs/%j/`, made as the job starts).
    assert herd.usage_error(
        "submit", "--cwd", str(shared_work), "-e", "afile/runs/%j/x.log", "true"
    ) == (f"gpuherd: error: --error afile/runs/%j/x.log: {said} (see gpuherd submit --help)\n")
    job = held_in(herd, shared_work)
    assert herd.usage_error("edit", str(job), "-o", f"{in_the_way}/x.log") == (
        f"gpuherd: error: --output {in_the_way}/x.log: {said} (see gpuherd edit --help)\n"
    )
    # The daemon says it to every client, in the same words.
    item = {"command": "true", "cwd": str(shared_work), "output": "afile/x.log"}
    with pytest.raises(InvalidValue) as refused:
        herd.client.post("/jobs", {"jobs": [item]})
    assert str(refused.value) == f"output (--output) afile/x.log: {said}"
    assert [j["id"] for j in herd.ls_all() if j["cwd"] == str(shared_work)] == [job]
    assert herd.job(job)["output"] is None


@contextmanager
def read_only_mount(at: Path) -> Iterator[Path]:
    """`at`, a folder holding `was-there.log`, bind-mounted read-only over itself; unmounted
    after. Mounting takes root: the test is skipped without it."""
    if os.geteuid() != 0:
        pytest.skip("a read-only bind mount needs root")
    at.mkdir()
    (at / "was-there.log").touch()
    subprocess.run(["mount", "--bind", str(at), str(at)], check=True)
    try:
        subprocess.run(["mount", "-o", "remount,bind,ro", str(at)], check=True)
        yield at
    finally:
        subprocess.run(["umount", str(at)], check=True)


def test_a_read_only_file_system_is_said_so(shared_daemon: Herd, shared_work: Path) -> None:
    herd = shared_daemon
    with read_only_mount(shared_work / "ro") as folder:
        assert herd.usage_error("submit", "--cwd", str(shared_work), "-o", "ro/x.log", "true") == (
            f"gpuherd: error: --output ro/x.log: cannot create a file in {folder} (read-only "
            "file system): name a file elsewhere (see gpuherd submit --help)\n"
        )
        existing = folder / "was-there.log"  # a file written before, now on the mount
        assert herd.usage_error("submit", "-e", str(existing), "true") == (
            f"gpuherd: error: --error {existing}: {existing} cannot be written (read-only file "
            "system): name another file (see gpuherd submit --help)\n"
        )
        job = held_in(herd, shared_work)
        assert herd.usage_error("edit", str(job), "-o", f"{folder}/%j.log") == (
            f"gpuherd: error: --output {folder}/%j.log: cannot create a file in {folder} "
            "(read-only file system): name a file elsewhere (see gpuherd edit --help)\n"
        )
        assert herd.job(job)["output"] is None
