"""On a GPU server shared with colleagues who do not use gpuherd, gpuherd says why a job
waits, and what to do with a GPU it does not use (docs/gpus.md, "Placement rules", "`gpuherd
gpus`"); who holds each GPU, on the dashboard: tests/e2e/test_shared_server_dashboard.py.

- a queued job's reason named only the GPU busy with other users' processes, as if that were
  all that kept it waiting, while gpuherd's own jobs filled the others;
- `gpuherd gpus drain 9` said the GPU was not configured, not what to do.

Real daemons on fake GPUs from a state file."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import Herd

A100 = {"name": "Fake A100", "memory_total": "80GiB"}


def test_a_waiting_job_names_every_gpu_it_could_use(herd: Herd, tmp_path: Path) -> None:
    colleague = {"pid": 4_194_401, "memory": "2GiB"}  # (past the largest pid: no process here)
    gpus = [{**A100, "processes": [colleague]}, A100, A100, A100]
    (tmp_path / "gpus.json").write_text(json.dumps({"gpus": gpus}))
    herd.start("--fake-gpus", str(tmp_path / "gpus.json"))
    running = [herd.submit("--", "sleep", "60") for _ in range(3)]
    assert sorted(herd.wait_state(job, "running")["gpus"][0] for job in running) == [1, 2, 3]
    waiting = herd.submit("--", "true")
    empty = herd.submit("--exclusive", "--", "true")
    foreign = "GPU 0 is busy with other users' processes"
    assert herd.job(waiting)["reason"] == (
        f"waiting for a free GPU ({foreign}; GPUs 1-3 are full of gpuherd jobs)"
    )  # before: "waiting for a free GPU (GPU 0 is busy with other users' processes)"
    assert herd.job(empty)["reason"] == (
        f"waiting for an empty GPU ({foreign}; GPUs 1-3 run gpuherd jobs)"
    )
    herd.cli("gpus", "drain", "3")
    reason = (
        f"waiting for a free GPU ({foreign}; GPUs 1, 2 are full of gpuherd jobs; GPU 3 is draining)"
    )
    assert herd.job(waiting)["reason"] == reason
    listed = herd.cli("ls", "--state", "queued").stdout
    assert reason in listed.splitlines()[1]  # `ls` says it too, whole at 200 columns


def test_naming_a_gpu_that_is_not_configured_says_what_to_do(herd: Herd) -> None:
    herd.start("--fake-gpus", "3")
    # Every verb alike: `add` said "GPU 9 is not present (the probe sees: 0,1,2)".
    for verb in ("drain", "enable", "remove", "add"):
        refused = herd.cli("gpus", verb, "9", check=False)
        assert (refused.returncode, refused.stdout) == (1, ""), verb
        assert refused.stderr == (
            "gpuherd: error: GPU 9 is not configured (configured: 0,1,2), nor seen by the "
            "probe: name a GPU that `gpuherd gpus` lists\n"
        ), verb
    herd.cli("gpus", "remove", "2")
    refused = herd.cli("gpus", "enable", "2", check=False)
    assert (refused.returncode, refused.stderr) == (
        1,
        "gpuherd: error: GPU 2 is not configured (configured: 0,1): `gpuherd gpus add 2` adds it\n",
    )
    herd.cli("gpus", "add", "2")  # as it says: then the GPU is there to drain
    assert herd.cli("gpus", "drain", "2").stdout.startswith("GPU 2 draining")
