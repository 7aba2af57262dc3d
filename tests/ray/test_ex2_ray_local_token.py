"""`gpuherd ray-local` with RAY_AUTH_MODE=token and no token: one line saying what to do, at
once. Before, the head's GCS server aborted on it, and after Ray's wait for its port the
command ended in a traceback (RuntimeError: Timed out waiting for file …gcs_server_port…).

A HOME of its own, so that no ~/.ray/auth_token of the machine is found (or made), and a
temporary folder of its own for Ray (short: Ray's socket paths must fit in 107 bytes).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from conftest import need

need("ray.cluster_utils", "ray")

pytestmark = pytest.mark.timeout(180)


def test_ray_local_without_a_token_says_what_to_do(tmp_path: Path) -> None:
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("RAY_AUTH_TOKEN", "RAY_ADDRESS"))
    }
    ray_tmp = tempfile.mkdtemp(prefix="rl")
    env.update(HOME=str(tmp_path), RAY_AUTH_MODE="token", RAY_TMPDIR=ray_tmp)
    try:
        ran = subprocess.run(
            [sys.executable, "-m", "gpuherd", "ray-local", "--nodes", "1", "--gpus-per-node", "0"],
            env=env,
            capture_output=True,
            text=True,
            timeout=150,
        )
    finally:
        shutil.rmtree(ray_tmp, ignore_errors=True)
    assert (ran.returncode, ran.stdout) == (1, "")
    assert ran.stderr == (
        "gpuherd: error: RAY_AUTH_MODE=token, but no Ray auth token is found here (Token "
        "authentication is enabled but no authentication token was found): `ray "
        "get-auth-token --generate` makes one in ~/.ray/auth_token (or set RAY_AUTH_TOKEN); or "
        "unset RAY_AUTH_MODE for a cluster without token authentication\n"
    )
    assert not (tmp_path / ".ray" / "auth_token").exists()
