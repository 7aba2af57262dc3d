"""gflow (PyPI `runqd`): its daemon with the stand-in NVML, jobs submitted with `gbatch`.

gflow detects GPUs only through NVML, so the harness gives it a stand-in libnvidia-ml with 4
idle GPUs (install.py). Everything it writes lives under the scratch folder: HOME (its
config, state and logs), TMUX_TMPDIR (the tmux server that runs its daemon and every job)
and a TCP port on localhost picked free. `teardown` stops the daemon with `gflowd down` and
ends the tmux server it started, by pid.
"""

from __future__ import annotations

import itertools
import json
import os
import socket
import statistics
import subprocess
import time
from collections import Counter
from pathlib import Path

from harness.common import fresh_dir, kill_tree, wait_lines, workdir
from harness.install import Peer
from harness.jobs import Work, read_stamps
from harness.tools import Tool, ToolError


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Gflow(Tool):
    name, label = "gflow", "gflow (runqd), gbatch --gpus 1"
    workloads = ("W2",)  # it starts about one job per second: W1 and W3 would take an hour
    fresh_each_run = True  # a run it did not finish must not leave its jobs to the next

    def __init__(self, peer: Peer, timeout: float = 90.0) -> None:
        self.bin = Path(peer.paths["bin"])
        self.home = workdir() / "gflow-home"
        self.timeout = timeout
        self.env = {
            **os.environ,
            "HOME": str(self.home),
            "TMUX_TMPDIR": str(self.home / "tmux"),
            "PATH": f"{self.bin}:{os.environ['PATH']}",
            "LD_LIBRARY_PATH": peer.paths.get("nvml", ""),
            "FAKE_NVML_GPUS": "4",
        }
        self.env.pop("TMUX", None)
        self.notes: list[str] = []

    def _gf(self, *args: str, check: bool = True) -> str:
        proc = subprocess.run(
            [str(self.bin / args[0]), *args[1:]],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        if check and proc.returncode != 0:
            raise ToolError(f"{' '.join(args)}: {(proc.stderr or proc.stdout).strip()[-300:]}")
        return proc.stdout

    def setup(self) -> None:
        fresh_dir(self.home)
        (self.home / "tmux").mkdir()
        # Jobs run in a login shell inside tmux: it must find gflow's own commands.
        profile = f'export PATH="{self.bin}:$PATH"\n'
        for name in (".bashrc", ".profile", ".bash_profile"):
            (self.home / name).write_text(profile)
        self._gf("gflowd", "init", "--yes", "--port", str(_free_port()), "--gpus", "0,1,2,3")
        self._gf("gflowd", "up")
        deadline = time.monotonic() + 20
        while "idle" not in self._gf("ginfo", check=False):
            if time.monotonic() > deadline:
                raise ToolError("gflowd did not report idle GPUs within 20 s")
            time.sleep(0.2)

    def teardown(self) -> None:
        try:
            self._gf("gflowd", "down", check=False)
        except subprocess.TimeoutExpired:
            pass
        sock = next((self.home / "tmux").glob("tmux-*/default"), None)
        if sock is not None:
            proc = subprocess.run(
                ["tmux", "-S", str(sock), "display-message", "-p", "#{pid}"],
                capture_output=True,
                text=True,
                env=self.env,
            )
            if proc.stdout.strip().isdigit():
                kill_tree(int(proc.stdout.strip()))

    def _state(self) -> str:
        """What gflow itself says about its jobs and GPUs (for a run that did not finish)."""
        try:
            jobs = json.loads(self._gf("gqueue", "-a", "-o", "json", check=False) or "[]")
        except ValueError:
            jobs = []
        if isinstance(jobs, dict):
            jobs = jobs.get("jobs", [])
        states = Counter(str(j.get("state", "?")) for j in jobs if isinstance(j, dict))
        gpus = " ".join(self._gf("ginfo", check=False).split()[5:9])
        return f"gqueue says {dict(states)}; ginfo says {gpus!r}"

    def run(self, work: Work, jobs_file: Path) -> tuple[float, float]:
        t0 = time.time()
        for line in work.lines:
            self._gf("gbatch", "--gpus", "1", "--auto-close", "sh", "-c", line)
        submitted = time.time() - t0
        t1 = wait_lines(work.record, work.n, self.timeout, work.marker)
        stamps = sorted(read_stamps(work.record), key=lambda s: s.start)
        starts = [b.start - a.start for a, b in itertools.pairwise(stamps)]
        spacing = (
            f"; median gap between job starts {statistics.median(starts):.2f} s" if starts else ""
        )
        self.notes.append(f"gbatch submission took {submitted:.1f} s for {work.n} jobs{spacing}")
        if t1 is None:
            raise ToolError(
                f"only {len(stamps)} of {work.n} jobs ran within {self.timeout:.0f} s"
                f"{spacing}; then {self._state()}"
            )
        return t0, t1
