"""GPU memory in use that no listed process holds (another container's processes, which NVML
does not list) is taken: placement never hands it to a job (QA pass on GPU placement)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from conftest import Herd, Recorder, wait_for

GiB = 2**30


def write_state(path: Path, gpus: list[dict[str, object]]) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"gpus": gpus}))
    tmp.replace(path)  # a new inode: the probe sees the change even within one mtime tick


def test_memory_in_use_without_a_listed_process_is_never_handed_out(
    herd: Herd, recorder: Recorder, tmp_path: Path
) -> None:
    state = tmp_path / "gpus.json"
    idle = {"memory_total": "24GiB"}
    write_state(state, [idle, {"memory_total": "80GiB", "memory_used": "70GiB"}])
    herd.start("--fake-gpus", str(state))

    # The roomiest GPU is the idle 24 GiB one, not the 80 GiB one with 70 GiB in use.
    first = herd.submit("--mem", "20GiB", "--", recorder.cmd("first", wait="go"))
    wait_for(lambda: recorder.waiting("first"), what="the first job to start")
    assert herd.job(first)["gpus"] == [0]

    # Only GPU 1 is left to it, and it has 10 GiB free: the job waits, and says why.
    second = herd.submit("--mem", "20GiB", "--", recorder.cmd("second"))
    reason = wait_for(lambda: herd.job(second).get("reason"), what="a reason")
    assert reason == (
        "waiting for 20.0 GiB free on 1 GPU "
        "(70.0 GiB of GPU 1 is in use outside gpuherd, by no listed process; "
        f"job {first} holds 20.0 GiB of GPU 0)"
    ), reason
    assert herd.job(second)["state"] == "queued"

    # The memory is freed: the job starts there within a tick.
    write_state(state, [idle, {"memory_total": "80GiB", "memory_used": "0GiB"}])
    herd.wait_state(second, "succeeded")
    assert [r["gpus"] for r in recorder.lines("second")] == ["1"]
    recorder.go()
    herd.wait_state(first, "succeeded")


def test_the_drivers_own_memory_leaves_a_whole_gpu_to_a_job_that_asks_for_it(
    herd: Herd, tmp_path: Path
) -> None:
    # An idle GPU shows some memory in use by no process: the driver's. A job asking for the
    # whole GPU (`--mem 24GiB` on a 24 GiB GPU) waited for ever for memory no one frees.
    state = tmp_path / "gpus.json"
    write_state(state, [{"memory_total": "24GiB", "memory_used": "300MiB"}])
    herd.start("--fake-gpus", str(state))
    whole = herd.submit("--mem", "24GiB", "--", "true")
    assert herd.wait_state(whole, "succeeded")["gpus"] == [0]


def test_a_job_without_mem_takes_the_gpu_with_the_most_memory_really_free(
    herd: Herd, recorder: Recorder, tmp_path: Path
) -> None:
    state = tmp_path / "gpus.json"
    write_state(
        state,
        [{"memory_total": "80GiB", "memory_used": "70GiB"}, {"memory_total": "24GiB"}],
    )
    herd.start("--fake-gpus", str(state))
    job = herd.submit(recorder.cmd("plain"))
    herd.wait_state(job, "succeeded")
    assert [r["gpus"] for r in recorder.lines("plain")] == ["1"]


USES = r"""
import json, os, sys
with open(os.path.join(os.environ["GPUHERD_JOB_DIR"], "fake_gpu_usage.json"), "w") as f:
    json.dump({"memory": sys.argv[1]}, f)
"""


def test_a_waiting_job_names_the_jobs_holding_the_memory_gpus_shows_free(
    herd: Herd, recorder: Recorder, tmp_path: Path
) -> None:
    herd.start("--fake-gpus", "1x24GiB")
    script = tmp_path / "uses.py"
    script.write_text(USES)
    # Asks for 20 GiB, uses 1 GiB so far: `gpuherd gpus` shows 23 GiB free.
    command = f"{sys.executable} {script} 1GiB && {recorder.cmd('holder', wait='go')}"
    holder = herd.submit("--mem", "20GiB", command)
    wait_for(lambda: herd.json("gpus")["gpus"][0]["memory_used"] == GiB, what="the usage")
    waiting = herd.submit("--mem", "8GiB", "--", "true")
    reason = wait_for(lambda: herd.job(waiting).get("reason"), what="a reason")
    assert reason == f"waiting for 8.0 GiB free on 1 GPU (job {holder} holds 20.0 GiB of GPU 0)"
    recorder.go()
    herd.wait_state(waiting, "succeeded")
