"""Screenshots of every page for docs/ (GPUHERD_SCREENSHOTS=1), in Debian's chromium.

    GPUHERD_SCREENSHOTS=1 pytest tests/e2e/test_dashboard_screenshots.py

A daemon with four fake A100s whose telemetry moves (for the sparklines), a few jobs, and
two sweeps: one finished (a log-scale parameter, a failed point), one in progress.
"""

from __future__ import annotations

import json
import math
import os
import time
from typing import Any

import pytest
from test_dashboard import SCREENSHOTS, TIMEOUT_MS, browser

from conftest import NO_SUCH_PIDS, Herd, wait_for

__all__ = ["browser"]  # the fixture, shared with test_dashboard.py


TRAIN = r"""
import os, sys, time
lr, epochs, pause = float(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
print(f"CUDA_VISIBLE_DEVICES={os.environ['CUDA_VISIBLE_DEVICES']} lr={lr}", flush=True)
loss = 0.69
for epoch in range(1, epochs + 1):
    loss *= 1 - min(lr, 0.5) / 4
    print(f"epoch {epoch:3d}  loss {loss:.4f}  acc {1 - loss / 1.4:.3f}", flush=True)
    time.sleep(pause)
if lr > 0.9:
    print("loss is nan: diverged", file=sys.stderr)
    sys.exit(1)
"""


SWEEP_TRAIN = r"""
import json, math, os, sys, time
lr, model, out = float(sys.argv[1]), sys.argv[2], sys.argv[3]
seed = int(sys.argv[4]) if len(sys.argv) > 4 else 0
time.sleep(0.3 if len(sys.argv) <= 4 else 20)
big = model == "resnet50"
acc = 0.93 - 0.035 * (math.log10(lr) + 2.4) ** 2 + (0.02 if big else 0) + 0.003 * seed
diverged = big and lr >= 0.03
metrics = {"val_acc": round(0.1 if diverged else acc, 4), "val_loss": round(2.3 * (1 - acc), 4)}
json.dump(metrics, open(os.path.join(out, "metrics.json"), "w"))
if diverged:
    print("loss is nan: diverged", file=sys.stderr)
    sys.exit(1)
"""
A100 = {"name": "NVIDIA A100-SXM4-80GB", "memory_total": "80GiB"}


def _telemetry(tick: int, on: dict[int, int]) -> str:
    """The fake GPUs' state file at reading `tick`: utilisation and memory that move, on the
    GPUs `on` lists (GPU index: its job's pid), held by that job's process; someone else's
    process on GPU 3. No memory held by no listed process: the pages say such memory is
    another container's (before, each job's memory was shown so, its GPU seemingly shared)."""
    gpus: list[dict[str, Any]] = []
    for index, phase in enumerate((0.0, 1.3, 2.1, 0.7)):
        wave = math.sin(tick / 3 + phase)
        processes = [{"pid": on[index], "memory": f"{31 + 3 * wave:.1f}GiB"}] if index in on else []
        if index == 3:
            processes.append({"pid": NO_SUCH_PIDS[0], "memory": "18GiB"})
        busy = 85 + 10 * wave if index in on else 35 + 15 * wave if processes else 0
        gpus.append({**A100, "utilization": round(busy), "processes": processes})
    return json.dumps({"gpus": gpus})


def _running(job: dict[str, Any]) -> dict[str, Any] | None:
    """The job once it runs with its pid known (the state file lists its process by it)."""
    return job if job["state"] == "running" and job["pid"] else None


@pytest.mark.skipif(
    os.environ.get("GPUHERD_SCREENSHOTS") != "1",
    reason="set GPUHERD_SCREENSHOTS=1 to regenerate docs/screenshots/",
)
def test_screenshots(browser: Any, tmp_path_factory: pytest.TempPathFactory) -> None:
    folder = tmp_path_factory.mktemp("shots")
    train = folder / "train.py"
    train.write_text(TRAIN)
    (folder / "sweep_train.py").write_text(SWEEP_TRAIN)
    gpus = folder / "gpus.json"

    def telemetry(tick: int, on: dict[int, int]) -> None:
        (folder / "gpus.tmp").write_text(_telemetry(tick, on))
        (folder / "gpus.tmp").replace(gpus)

    telemetry(0, {})
    herd = Herd(folder / "home")
    try:
        herd.start("--fake-gpus", str(gpus), "--listen", "127.0.0.1:0")

        def run(name: str, lr: float, epochs: int, pause: float, *opts: str) -> int:
            cmd = f"python train.py {lr} {epochs} {pause}"
            return herd.submit("--name", name, "--cwd", str(folder), *opts, "--", cmd)

        done = [run(f"resnet50-lr{lr}", lr, 8, 0.0, "--project", "resnet") for lr in (0.3, 0.1)]
        failed = run("resnet50-lr1.0", 1.0, 3, 0.0, "--project", "resnet")
        for job_id in (*done, failed):
            herd.wait_state(job_id, "succeeded", "failed")
        running = [
            run("vit-b16-lr0.03", 0.03, 400, 0.5, "--project", "vit"),
            run("vit-b16-lr0.01", 0.01, 400, 0.5, "--project", "vit", "--mem", "40GiB"),
        ]
        on: dict[int, int] = {}  # GPU: the pid of the job on it, its memory's holder
        for job_id in running:
            job = wait_for(lambda j=job_id: _running(herd.job(j)), what=f"job {job_id} to run")
            on[job["gpus"][0]] = job["pid"]
        run("vit-l16-lr0.01", 0.01, 400, 0.5, "--project", "vit", "--gpus", "2")
        run("sweep-check", 0.1, 5, 0.5, "--hold")
        grid = "-p lr 0.0001 0.0003 0.001 0.003 0.01 0.03 -p model resnet18 resnet50 --gpus 0"
        resnet = "python sweep_train.py {lr} {model} {run_dir}"
        herd.cli("sweep", resnet, *grid.split(), "--name", "resnet-lr", cwd=folder)
        seeds = "-p seed 0 1 2 3 4 5 6 7 8 9 --gpus 0 --max-parallel 2 --name vit-seeds"
        vit = "python sweep_train.py 0.001 vit-b16 {run_dir} {seed}"
        herd.cli("sweep", vit, *seeds.split(), cwd=folder)
        for tick in range(1, 24):  # readings every 2 s: the sparklines get some history
            time.sleep(2.0)
            telemetry(tick, on)
        url = herd.cli("ui", "--url").stdout.strip()
        context = browser.new_context(viewport={"width": 1280, "height": 760})
        page = context.new_page()
        page.set_default_timeout(TIMEOUT_MS)
        page.goto(url)
        base = url.split("/?")[0]
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        shots = {
            "overview": "/",
            "jobs": "/jobs",
            "job": f"/jobs/{running[0]}",
            "submit": "/submit",
            "gpus": "/gpus",
            "sweeps": "/sweeps",
            "sweep": "/sweeps/resnet-lr?sort=-val_acc",
        }
        for name, path in shots.items():
            page.goto(base + path)
            if name == "job":
                page.wait_for_function(
                    "document.querySelector('#log-stdout').textContent.includes('epoch   4')"
                )
            page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)
        context.close()
    finally:
        herd.cleanup()
