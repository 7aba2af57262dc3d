"""A cluster with token authentication: a daemon that sends no token, or a wrong one, is refused
at once with one line saying what to set (Ray's own `ray.init` tries for 20 s, then says only
that it failed to connect), and one with RAY_AUTH_MODE=token and the token joins.

A module of its own: its head (no GPU node: cheap) is `ray start --head --block` with a token,
in a HOME and temporary folder of its own, stopped by its pid (its processes leave with it).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import Herd, need, wait_for

need("ray.cluster_utils", "ray")

from test_ray_dead_cluster import free_port

pytestmark = pytest.mark.timeout(180)  # (with its module's cluster start: ~30 s under load)

TOKEN = "gpuherd-test-token-0123456789abcdef"
HELP = (
    "the cluster's token (`ray get-auth-token` on its head prints it) in RAY_AUTH_TOKEN or "
    "~/.ray/auth_token"
)


@dataclass
class TokenHead:
    address: str
    home: Path
    """A HOME whose ~/.ray/auth_token holds the cluster's token."""


@pytest.fixture(scope="module", name="head")
def head_fixture() -> Iterator[TokenHead]:
    # Short: Ray's socket paths under its temporary folder must stay under 108 characters.
    folder = Path(tempfile.mkdtemp(prefix="gh-auth-", dir="/tmp"))
    home = folder / "home"
    (home / ".ray").mkdir(parents=True)
    (home / ".ray" / "auth_token").write_text(TOKEN)
    port = free_port()
    env = {**clean(os.environ), "HOME": str(home), "RAY_AUTH_MODE": "token"}
    ray = str(Path(sys.executable).parent / "ray")  # CI's venv is not on PATH
    command = [ray, "start", "--head", "--block", "--port", str(port), "--num-cpus", "1"]
    command += ["--num-gpus", "0", "--include-dashboard", "false", "--disable-usage-stats"]
    command += ["--temp-dir", str(folder / "ray")]
    with (folder / "head.log").open("w") as log:
        head = subprocess.Popen(command, env=env, stdout=log, stderr=log, start_new_session=True)
    try:
        said = folder / "head.log"
        wait_for(lambda: "block forever" in said.read_text(), 60, "the Ray head to start")
        yield TokenHead(f"127.0.0.1:{port}", home)
    finally:
        # `ray start --block` stops the processes it started when it gets SIGTERM.
        head.send_signal(signal.SIGTERM)
        head.wait(30)
        shutil.rmtree(folder, ignore_errors=True)


def clean(environ: dict[str, str] | os._Environ[str]) -> dict[str, str]:
    """The environment without the Ray settings a developer may have exported."""
    ray_settings = ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH", "RAY_ADDRESS")
    return {k: v for k, v in environ.items() if k not in ray_settings}


def start(
    herd: Herd, head: TokenHead, **ray: str
) -> tuple[subprocess.CompletedProcess[str], float]:
    """`daemon start --address` on the head with the Ray settings `ray`; how long it took."""
    env = {**clean(herd.env), "HOME": str(head.home), **ray}
    began = time.monotonic()
    proc = herd.cli("daemon", "start", "--address", head.address, env=env, check=False)
    return proc, time.monotonic() - began


REFUSED = [
    # A token alone is not sent to a cluster named by its address (Ray 2.60's rule).
    (
        {"RAY_AUTH_TOKEN": TOKEN},
        "uses token authentication, and this daemon sends it no token (RAY_AUTH_MODE is not "
        f"`token` here): start the daemon with RAY_AUTH_MODE=token and {HELP}",
    ),
    # RAY_AUTH_TOKEN comes before ~/.ray/auth_token (which holds the right one here).
    (
        {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": "wrong"},
        "refuses this daemon's Ray auth token (from RAY_AUTH_TOKEN, which Ray reads before any "
        f"file): put {HELP}",
    ),
]


def test_a_daemon_without_the_clusters_token_is_refused_at_once_and_one_with_it_joins(
    herd: Herd, head: TokenHead
) -> None:
    for ray, said in REFUSED:
        proc, took = start(herd, head, **ray)
        assert proc.returncode == 1, (ray, proc.stdout)
        assert proc.stderr == f"gpuherd: error: the Ray cluster at {head.address} {said}\n"
        assert took < 15, (ray, took)  # not Ray's 20 s of tries
        wait_for(lambda: not herd._daemons(), 10, "the daemon to exit")
    # As docs/cluster.md says: RAY_AUTH_MODE=token, and the token in ~/.ray/auth_token.
    proc, _ = start(herd, head, RAY_AUTH_MODE="token")
    assert proc.returncode == 0, proc.stderr
    assert f"ray at {head.address}: 1 node, 0 GPUs" in proc.stdout
