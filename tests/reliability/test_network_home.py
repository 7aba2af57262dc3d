"""A home on a network file system is refused before anything is written there: SQLite sets
up its write-ahead log on NFS without a word, and the queue is damaged later.

No network file system can be mounted here, so the daemon reads a mount table of the test's
(daemon_home.MOUNT_TABLE, in this process) that says the test's folder is NFS; the parser is
also run on this machine's real table."""

from __future__ import annotations

import logging
import os
import re
from pathlib import Path

import pytest

import gpuherd.daemon as daemon_module
from gpuherd import daemon_home
from gpuherd.core.mounts import mount_of, network_kind

# A real mountinfo's shape: id, parent, dev, root, mount point, options - type source options.
TABLE = """\
22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw
30 22 0:40 / /home rw,relatime shared:2 - nfs4 fs1:/export/home rw,vers=4.2
31 30 0:41 / /home/ann/local\\040disk rw - ext4 /dev/sdb1 rw
32 22 0:42 / /mnt/remote rw,nosuid - fuse.sshfs ann@gpu2:/data rw
33 22 0:43 / /mnt/fuse rw - fuse.mergerfs a:b rw
34 22 0:44 / /scratch rw - lustre 10.0.0.1@tcp:/scratch rw
35 22 0:45 / /scratch rw - xfs /dev/sdc1 rw
36 22 0:46 / /data/cache rw - ext4 /dev/sdd1 rw
37 22 0:47 / /data rw - nfs4 fs2:/data rw
"""


@pytest.mark.parametrize(
    ("path", "where"),
    [
        ("/home/ann/.local/share/gpuherd", ("/home", "nfs4")),
        ("/home", ("/home", "nfs4")),
        ("/homework", ("/", "ext4")),  # not under /home: a prefix of the name is no folder
        ("/home/ann/local disk/herd", ("/home/ann/local disk", "ext4")),  # \040: a space
        ("/mnt/remote/x", ("/mnt/remote", "fuse.sshfs")),
        ("/scratch/ann", ("/scratch", "xfs")),  # mounted over lustre: the last one counts
        ("/var/tmp/ann", ("/", "ext4")),
        ("/data/cache/x", ("/data", "nfs4")),  # /data mounted over it later hides /data/cache
    ],
)
def test_the_mount_that_holds_a_path_is_the_deepest_and_latest(
    path: str, where: tuple[str, str]
) -> None:
    assert mount_of(TABLE, path) == where


def test_network_kinds() -> None:
    assert [network_kind(k) for k in ("nfs", "nfs4", "cifs", "lustre", "gpfs", "beegfs")] == [
        True
    ] * 6
    assert network_kind("fuse.sshfs") and network_kind("fuse.s3fs")
    assert network_kind("fuse.ceph-fuse")  # how ceph-fuse mounts show
    assert not any(network_kind(k) for k in ("ext4", "xfs", "btrfs", "zfs", "tmpfs"))
    assert not network_kind("fuse.mergerfs") and not network_kind("overlay")


def test_this_machines_own_table_finds_the_test_folder_local(tmp_path: Path) -> None:
    with open(daemon_home.MOUNT_TABLE) as f:
        where = mount_of(f.read(), os.path.realpath(tmp_path))
    assert where is not None and not network_kind(where[1]), where


@pytest.fixture
def nfs_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A mount table that says the test's folder is an NFS mount; returns that folder."""
    folder = Path(os.path.realpath(tmp_path))
    table = tmp_path.parent / f"{tmp_path.name}-mountinfo"
    escaped = str(folder).replace(" ", "\\040")
    table.write_text(
        "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n"
        f"30 22 0:40 / {escaped} rw,relatime - nfs fs1:/export rw,vers=3\n"
    )
    monkeypatch.setattr(daemon_home, "MOUNT_TABLE", str(table))
    monkeypatch.delenv(daemon_home.NETWORK_HOME_VARIABLE, raising=False)
    return folder


def test_the_daemon_refuses_a_home_on_nfs_in_one_line_and_writes_nothing_there(
    nfs_table: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = nfs_table / "share" / "gpuherd"  # not made yet: the folder above it is looked at
    assert daemon_module.main(["--home", str(home), "--fake-gpus", "1"]) == 1
    err = capsys.readouterr().err
    assert err.splitlines() == [
        f"gpuherd daemon: {home} is on a network file system (nfs at {nfs_table}), where the "
        "queue's database (SQLite with a write-ahead log) gets damaged: set GPUHERD_HOME to a "
        "folder on this machine's own disk (`df -T` shows which are local), or "
        "GPUHERD_ALLOW_NETWORK_HOME=1 to run there anyway"
    ]
    assert not home.exists()  # refused before the lock, the database or the socket


def test_the_variable_lets_it_run_there_said_in_the_log(
    nfs_table: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv(daemon_home.NETWORK_HOME_VARIABLE, "1")
    home = nfs_table / "home"
    with caplog.at_level(logging.WARNING, logger="gpuherd.daemon"):
        daemon_home.refuse_a_network_home(home)
    assert [r.getMessage() for r in caplog.records] == [
        f"{home} is on a network file system (nfs at {nfs_table}): run there anyway"
    ]
    monkeypatch.setenv(daemon_home.NETWORK_HOME_VARIABLE, "yes")  # only 1 means it
    with pytest.raises(daemon_home.HerdError, match="network file system"):
        daemon_home.refuse_a_network_home(home)


def test_a_local_home_and_a_missing_table_are_let_through(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    daemon_home.refuse_a_network_home(tmp_path / "home")  # this machine's real table
    monkeypatch.setattr(daemon_home, "MOUNT_TABLE", str(tmp_path / "no-such-table"))
    daemon_home.refuse_a_network_home(tmp_path / "home")  # no /proc: nothing to tell by


def test_an_automounted_home_is_looked_up_before_the_table_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # autofs (lab servers mount /home/NAME over NFS so) mounts a folder when it is first looked
    # up: the table read before that shows only the autofs mount, which is no network file
    # system. No automounter runs here: the lookup of the home adds its NFS line to the table.
    folder = Path(os.path.realpath(tmp_path))
    table = tmp_path.parent / f"{tmp_path.name}-mountinfo"
    table.write_text(
        "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n"
        f"30 22 0:40 / {folder} rw,relatime shared:2 - autofs auto.home rw,fd=7\n"
    )
    monkeypatch.setattr(daemon_home, "MOUNT_TABLE", str(table))
    monkeypatch.delenv(daemon_home.NETWORK_HOME_VARIABLE, raising=False)
    looked_up = daemon_home._nearest_existing

    def mounting(path: Path) -> Path:
        with table.open("a") as f:
            f.write(f"31 30 0:41 / {folder} rw,relatime shared:3 - nfs4 fs1:/home/ann rw\n")
        return looked_up(path)

    monkeypatch.setattr(daemon_home, "_nearest_existing", mounting)
    with pytest.raises(daemon_home.HerdError, match=rf"\(nfs4 at {re.escape(str(folder))}\)"):
        daemon_home.refuse_a_network_home(folder / "gpuherd")
