"""A socket another user serves is never talked to: a GPUHERD_SOCKET in a folder others can
write (/tmp) could be taken first by another user's listener, which would receive every
request, each submission's whole environment (API keys) among them."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import Herd, wait_for

NOBODY = 65534
SYSTEM_PYTHON = "/usr/bin/python3"
SQUATTER = """
import os, socket, sys
path, took = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(path)
os.chmod(path, 0o777)
s.listen(8)
s.settimeout(120)
while True:
    c, _ = s.accept()
    c.settimeout(2)
    data = b""
    try:
        while chunk := c.recv(65536):
            data += chunk
    except OSError:
        pass
    with open(took, "ab") as f:
        f.write(data)
    c.close()
"""

pytestmark = pytest.mark.skipif(os.getuid() != 0, reason="needs root to act as another user")


@pytest.fixture
def squatted(herd: Herd) -> Iterator[tuple[Path, Path]]:
    """A socket path in a folder open to all, taken first by another user's listener: the
    path, and the file where that listener keeps all it received."""
    folder = Path(tempfile.mkdtemp(prefix="gpuherd-sec1-"))  # pytest's tmp_path is closed
    os.chmod(folder, 0o1777)
    sock, took = folder / "herd.sock", folder / "took"
    took.touch()
    os.chmod(took, 0o666)
    python = SYSTEM_PYTHON if os.path.exists(SYSTEM_PYTHON) else sys.executable
    squatter = subprocess.Popen([python, "-c", SQUATTER, str(sock), str(took)], user=NOBODY)
    herd.env["GPUHERD_SOCKET"] = str(sock)
    try:
        wait_for(sock.is_socket, timeout=30, what="the other user's socket")
        yield sock, took
    finally:
        squatter.kill()
        squatter.wait(timeout=30)
        shutil.rmtree(folder, ignore_errors=True)


def test_the_cli_sends_nothing_to_a_socket_another_user_serves(
    herd: Herd, squatted: tuple[Path, Path]
) -> None:
    sock, took = squatted
    refused = herd.cli("submit", "--env", "API_KEY=s3cret", "--", "echo", "hi", check=False)
    assert refused.returncode == 1, refused
    assert refused.stderr == (
        f"gpuherd: error: {sock} is served by another user's process (uid {NOBODY}), not by "
        "your daemon: nothing was sent to it. Put the socket in a folder only you can write "
        "(unset GPUHERD_SOCKET, or point it at such a folder)\n"
    )
    assert took.read_bytes() == b""


def test_a_daemon_does_not_start_on_a_socket_another_user_serves(
    herd: Herd, squatted: tuple[Path, Path]
) -> None:
    sock, took = squatted
    refused = herd.cli("daemon", "start", "--fake-gpus", "1", check=False)
    assert refused.returncode == 1, refused
    assert f"{sock} is served by another user's process (uid {NOBODY})" in refused.stderr
    assert "Traceback" not in refused.stderr
    assert took.read_bytes() == b""  # not one request, so no environment, went to it
