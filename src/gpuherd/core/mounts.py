"""Which file system holds a path, read from the kernel's mount table (the text of
/proc/self/mountinfo, given by the caller: no I/O here), and whether it is one shared over a
network, where SQLite's write-ahead log must not live (DESIGN: keep state on local disk).

SQLite cannot tell: on NFS `PRAGMA journal_mode = WAL` succeeds, and the damage comes later
(a WAL's index is shared memory, which a network file system does not keep coherent between
machines, and its locks may not hold at all).
"""

from __future__ import annotations

import re

NETWORK_FILE_SYSTEMS = frozenset(
    {
        # NFS and SMB, what lab servers share home folders over
        "nfs", "nfs4", "cifs", "smb3", "smbfs", "ncpfs",
        # cluster and parallel file systems of HPC sites
        "lustre", "gpfs", "beegfs", "ceph", "glusterfs", "wekafs", "panfs", "orangefs",
        "pvfs2", "afs", "coda",
        # shared folders of virtual machines and WSL's Windows drives
        "9p", "vboxsf", "vmhgfs",
    }
)  # fmt: skip
"""Kernel file system types shared over a network (or with another machine)."""

NETWORK_FUSE = frozenset(
    {"sshfs", "s3fs", "gcsfuse", "rclone", "glusterfs", "ceph", "ceph-fuse", "cephfs", "juicefs",
     "lizardfs", "mfs", "moosefs", "davfs", "vmhgfs-fuse", "gvfsd-fuse", "beegfs"}
)  # fmt: skip
"""FUSE file systems (`fuse.NAME` in the table) that keep their files on another machine."""

_ESCAPE = re.compile(r"\\([0-7]{3})")


def mount_of(mountinfo: str, path: str) -> tuple[str, str] | None:
    """(mount point, file system type) of the mount that holds the absolute, resolved `path`:
    the deepest mount point above it that is still seen. The table lists mounts in the order
    they were made, and a mount hides those made before it at its point or below it (a mount
    over /a hides an earlier /a/b); None if the table names none."""
    seen: list[tuple[str, str]] = []
    for line in mountinfo.splitlines():
        mount, sep, rest = line.partition(" - ")
        fields, kind = mount.split(), rest.split()
        if not sep or len(fields) < 5 or not kind:
            continue
        point = _ESCAPE.sub(lambda m: chr(int(m.group(1), 8)), fields[4])
        if _holds(point, path):  # only mounts above the path can hide one another here
            seen = [(p, k) for p, k in seen if not _holds(point, p)]
            seen.append((point, kind[0]))
    return max(seen, key=lambda pk: len(pk[0]), default=None)


def network_kind(fs_type: str) -> bool:
    """Whether a file system of this type keeps its files on another machine."""
    if fs_type.startswith("fuse."):
        return fs_type.removeprefix("fuse.") in NETWORK_FUSE
    return fs_type in NETWORK_FILE_SYSTEMS


def _holds(point: str, path: str) -> bool:
    return point == "/" or path == point or path.startswith(point.rstrip("/") + "/")
