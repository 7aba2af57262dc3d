"""The Unix socket: file modes and the peer-credential check (SO_PEERCRED)."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from conftest import Herd
from gpuherd import paths
from gpuherd.client import Client

NOBODY = 65534
SYSTEM_PYTHON = "/usr/bin/python3"
PROBE = """
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(10)
s.connect(sys.argv[1])
data = b""
try:
    s.sendall(b"GET /api/v1/daemon HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n")
    while b"\\r\\n\\r\\n" not in data:
        chunk = s.recv(4096)
        if not chunk:
            break
        data += chunk
except OSError as exc:  # the daemon closed the connection
    print("closed:", type(exc).__name__, file=sys.stderr)
print(data[:12].decode(errors="replace"))
"""


def test_socket_is_0600_in_a_0700_folder(daemon: Herd) -> None:
    sock = paths.socket_path(daemon.home)
    assert stat.S_IMODE(os.stat(sock).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(sock.parent).st_mode) == 0o700


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to connect as another user")
def test_a_connection_from_another_uid_is_refused(
    herd: Herd, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A socket in a folder another user can reach, 0666: only the peer-credential check
    # stands in the way (pytest's own temporary folders are closed to other users).
    folder = Path(tempfile.mkdtemp(prefix="gpuherd-peercred-"))
    try:
        _check_refused(herd, monkeypatch, folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _check_refused(herd: Herd, monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
    sock = folder / "run" / "herd.sock"
    monkeypatch.setenv("GPUHERD_SOCKET", str(sock))
    herd.env["GPUHERD_SOCKET"] = str(sock)
    herd.client = Client(herd.home)  # finds the socket through GPUHERD_SOCKET now
    herd.start("--fake-gpus", "1")
    os.chmod(folder, 0o755)
    os.chmod(sock.parent, 0o755)
    os.chmod(sock, 0o666)

    def ask(uid: int | None) -> str:
        # The system Python: another user may not be able to run this one (say, under /root).
        python = SYSTEM_PYTHON if os.path.exists(SYSTEM_PYTHON) else sys.executable
        proc = subprocess.run(
            [python, "-c", PROBE, str(sock)],
            capture_output=True,
            text=True,
            timeout=30,
            user=uid,
            cwd="/",
        )
        assert "Traceback" not in proc.stderr, proc.stderr
        return proc.stdout.strip()

    try:
        assert ask(None) == "HTTP/1.1 200"  # the daemon's own user gets an answer
        assert ask(NOBODY) == ""  # another user's connection is closed without one
        assert herd.client.is_up()  # and the daemon carries on
    finally:
        herd.kill9()  # now: the fixture's clean-up runs after GPUHERD_SOCKET is unset


def test_a_given_socket_leaves_the_mode_of_its_existing_folder(
    herd: Herd, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """GPUHERD_SOCKET=/tmp/herd.sock must not close /tmp to every other user."""
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    os.chmod(shared, 0o755)
    sock = shared / "herd.sock"
    monkeypatch.setenv("GPUHERD_SOCKET", str(sock))
    herd.env["GPUHERD_SOCKET"] = str(sock)
    herd.client = Client(herd.home)
    herd.start("--fake-gpus", "1")
    try:
        assert stat.S_IMODE(shared.stat().st_mode) == 0o755
        assert stat.S_IMODE(sock.stat().st_mode) == 0o600
        assert herd.client.is_up()
    finally:
        herd.kill9()
