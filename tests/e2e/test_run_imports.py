"""`gpuherd run` loads only what a one-shot run needs: none of the daemon's HTTP stack, Ray or
pydantic (each import is start-up time before the first job; benchmarks/README.md), and it
still runs its jobs with the cycle collector back on once the engine's modules are in."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

DAEMON_ONLY = {"pydantic", "pydantic_core", "fastapi", "starlette", "uvicorn", "ray", "yaml"}
NOT_ASKED_FOR = {"ssl", "ctypes", "gpuherd.runner_live", "gpuherd.runner_gpu_file"}
"""Asyncio's TLS (no_tls.py), ctypes (file_holes, for hooks.log: ~2 ms), --live's and
--gpu-file's modules: not on a plain run's way."""

PROBE = """
import gc, json, sys
from gpuherd.cli.main import main
try:
    main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
print(json.dumps({"code": code, "modules": sorted(sys.modules), "gc": gc.isenabled()}),
      file=sys.stderr)
"""


def test_run_imports_nothing_of_the_daemons_stack(tmp_path: Path) -> None:
    stamp = tmp_path / "stamp"
    jobs = tmp_path / "jobs.txt"
    jobs.write_text(f"echo ran >> {stamp}\necho ran >> {stamp}\n")
    args = ["run", "--fake-gpus", "2", "--output-dir", str(tmp_path / "out"), str(jobs)]
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
    )
    found = json.loads(proc.stderr.splitlines()[-1])
    assert found["code"] == 0, proc.stderr + proc.stdout
    assert stamp.read_text() == "ran\nran\n"
    assert "2 succeeded, 0 failed" in proc.stdout
    loaded = {name.split(".")[0] for name in found["modules"]}
    assert not DAEMON_ONLY & loaded
    assert not NOT_ASKED_FOR & set(found["modules"])
    assert found["gc"]  # paused only while the modules were imported
