"""CPU-only jobs (`--gpus 0`) run at most `cpu-jobs` at once: one per core unless set.

Without the cap a sweep of 2,000 CPU-only points started 2,000 processes at once. The jobs
record their own start and end, so the overlap is seen from the jobs' side.
"""

from __future__ import annotations

import os

from conftest import Herd, Probe, Recorder, Runs, max_overlap, wait_for

CORES = len(os.sched_getaffinity(0))


def test_cpu_jobs_cap_holds_cpu_only_jobs_back_and_lets_gpu_jobs_pass(
    daemon: Herd, recorder: Recorder
) -> None:
    assert daemon.cli("config", "set", "cpu-jobs", "2").stdout.strip() == "cpu-jobs = 2"
    cpu = [daemon.submit("--gpus", "0", recorder.cmd("out", wait="go")) for _ in range(3)]
    gpu = daemon.submit(recorder.cmd("out", wait="go"))
    # The GPU job, queued behind the third CPU-only job, is the witness: once it runs, the
    # third has been passed over (placement goes in queue order).
    daemon.wait_state(gpu, "running")
    for job_id in cpu[:2]:
        daemon.wait_state(job_id, "running")
    third = daemon.job(cpu[2])
    assert third["state"] == "queued"
    assert third["reason"] == "waiting for a CPU slot (2 running: config cpu-jobs)"

    # Raising the cap starts it at once; the change is kept across a restart.
    daemon.cli("config", "set", "cpu-jobs", "3")
    wait_for(lambda: recorder.waiting("out") == 4, what="the third CPU-only job to start")
    recorder.go()
    for job_id in [*cpu, gpu]:
        daemon.wait_state(job_id, "succeeded")
    assert len(recorder.lines("out")) == 4


def test_cpu_jobs_default_is_the_cores_and_auto_goes_back_to_it(daemon: Herd) -> None:
    assert daemon.cli("config", "get", "cpu-jobs").stdout.strip() == str(CORES)
    daemon.cli("config", "set", "cpu-jobs", "none")
    assert daemon.cli("config", "get", "cpu-jobs").stdout.strip() == "none"
    daemon.cli("config", "set", "cpu-jobs", "7")
    daemon.cli("daemon", "stop")
    daemon.start()  # the saved value comes back
    assert daemon.cli("config", "get", "cpu-jobs").stdout.strip() == "7"
    assert daemon.cli("config", "set", "cpu-jobs", "AUTO").stdout.strip() == f"cpu-jobs = {CORES}"

    for wrong in ("many", "--", "-3", "2.5", "0"):  # 0 meant "no cap": the opposite
        bad = daemon.cli("config", "set", "cpu-jobs", "--", wrong, check=False)
        assert bad.returncode == 2  # a mistake in the command line
        assert bad.stderr.strip().splitlines() == [
            f"gpuherd: error: cpu-jobs: invalid count '{wrong}': use a number from 1 to "
            "2**63 - 1, auto (one per core of this machine) or none (no cap) (see gpuherd "
            "config set --help)"
        ]
    assert daemon.cli("config", "get", "cpu-jobs").stdout.strip() == str(CORES)


def test_run_starts_cpu_only_jobs_one_per_core(runs: Runs, probe: Probe) -> None:
    names = [f"j{i}" for i in range(2 * CORES + 1)]
    text = "".join(probe.cmd(n, sleep=0.3) + "\n" for n in names)
    out = runs.root / "out"
    proc = runs.run("--fake-gpus", "1", "--gpus-per-job", "0", "--output-dir", str(out), input=text)
    assert proc.returncode == 0, proc.stderr
    seen = probe.by_name()
    assert sorted(seen) == sorted(names)
    assert max_overlap([(r["start"], r["end"]) for r in seen.values()]) <= CORES


def test_run_of_cpu_only_jobs_needs_no_gpu_at_all(runs: Runs, probe: Probe) -> None:
    # No --gpus nor --fake-gpus: on a machine without a driver (CI) the probe finds nothing,
    # which jobs that ask for no GPU do not need; on one with GPUs they are left alone.
    out = runs.root / "out"
    proc = runs.run("--gpus-per-job", "0", "--output-dir", str(out), input=probe.cmd("cpu") + "\n")
    assert proc.returncode == 0, proc.stderr
    assert probe.by_name()["cpu"]["gpus"] == ""
    assert "[0] started on no GPU" in proc.stdout


def test_run_without_a_driver_says_how_to_run_jobs_that_need_no_gpu(runs: Runs) -> None:
    proc = runs.run("--output-dir", str(runs.root / "out"), input="true\n")
    if proc.returncode == 0:
        return  # this machine has a GPU driver: nothing to refuse
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("gpuherd: error: no NVIDIA driver found")
    assert lines[0].endswith("or --gpus-per-job 0 for jobs that need no GPU")


def test_a_cpu_only_job_is_not_kept_waiting_by_a_long_queue_of_gpu_jobs(
    daemon: Herd, recorder: Recorder
) -> None:
    # Placement reads at most SCAN_LIMIT queued jobs per pass: a CPU-only job behind more
    # GPU jobs than that stayed queued with every GPU busy and the cores free ("starting").
    from gpuherd.engine_scan import SCAN_LIMIT

    busy = daemon.submit_lines([recorder.cmd("busy", wait="go")] * 4)
    wait_for(lambda: recorder.waiting("busy") == 4, what="the four GPUs to be busy")
    backlog = daemon.submit_lines(["true"] * (SCAN_LIMIT + 100))
    cpu = daemon.submit("--gpus", "0", "--", recorder.cmd("cpu"))
    assert daemon.wait_state(cpu, "succeeded")["gpus"] == []
    assert all(daemon.job(job_id)["state"] == "running" for job_id in busy)
    # The GPU jobs behind the busy GPUs say so, and start only when a GPU frees.
    assert daemon.job(backlog[-1])["reason"] == "waiting for a free GPU"
    daemon.cli("kill", f"{backlog[0]}-{backlog[-1]}")
    recorder.go()
    for job_id in busy:
        daemon.wait_state(job_id, "succeeded")
