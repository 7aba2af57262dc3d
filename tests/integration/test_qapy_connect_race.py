"""Scripts that call `gpuherd.connect()` at once with no daemon running (a shell loop of them,
a pool's workers): each starts one, one daemon wins the home's lock, and every script connects
to it. Before, each raised `a daemon is already running` (the winner's own script too: the
log they share held a loser's line while the winner was still starting)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conftest import Herd

CONNECT = """
import sys
import time
from pathlib import Path

import gpuherd

while not Path(sys.argv[1]).exists():  # all start together
    time.sleep(0.01)
herd = gpuherd.connect(fake_gpus=1)
print(herd.client.get("/daemon")["pid"])
"""


def test_scripts_connecting_at_once_share_the_one_daemon_started(
    herd: Herd, tmp_path: Path
) -> None:
    go = tmp_path / "go"
    scripts = [
        subprocess.Popen(
            [sys.executable, "-c", CONNECT, str(go)],
            env=herd.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    go.touch()
    ended = [script.communicate(timeout=110) for script in scripts]
    said = [
        (script.returncode, out.strip(), err)
        for script, (out, err) in zip(scripts, ended, strict=True)
    ]
    assert [(code, err) for code, _, err in said] == [(0, "")] * 4, said
    assert len({pid for _, pid, _ in said}) == 1, said  # one daemon, every script connected to it
    assert herd.is_up()
