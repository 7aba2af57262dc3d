"""W4-W8: the daemon idle, submitting, a big database, placement, and CLI start-up.

gpuherd is measured in full; peers appear where they have the same thing to measure (an idle
task-spooler server or Ray node, a task-spooler submission, a Ray batch, a C or Python CLI).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import time
from pathlib import Path

import psutil

from harness.common import (
    cpu_seconds,
    gpuherd_cmd,
    herd_env,
    herd_python,
    percentile,
    tree,
    wall,
    workdir,
)
from harness.engine_pass import pass_times
from harness.jobs import check_stamps, handoff_gaps, read_stamps, stamped_lines, w3_lengths
from harness.tools import HerdDaemon, Ray, TaskSpooler, Tool
from harness.workloads import Results

MB = 1 << 20


def _cli(home: Path, *args: str) -> float:
    return wall([*gpuherd_cmd(), *args], herd_env(home))


def w4_idle(res: Results, seconds: float, peers: list[Tool]) -> HerdDaemon:
    """Idle servers side by side: CPU seconds per minute and resident memory."""
    herd = HerdDaemon(gpus=8, home=workdir() / "herd-idle")
    herd.setup()
    watched: dict[str, tuple[str, list[int]]] = {
        "herd-idle": ("gpuherd daemon, 8 fake GPUs, idle", [herd.pid])
    }
    for peer in peers:
        peer.setup()
        if isinstance(peer, TaskSpooler) and peer.server:
            watched["tsp-server"] = ("task-spooler server, idle", [peer.server])
        elif isinstance(peer, Ray):
            watched["ray-node"] = ("Ray node, idle (all its processes)", peer.node_pids())
    time.sleep(min(5.0, seconds / 4))  # let start-up work finish
    procs = {row: [p for pid in pids for p in tree(pid)] for row, (_, pids) in watched.items()}
    before = {row: sum(map(cpu_seconds, ps)) for row, ps in procs.items()}
    time.sleep(seconds)
    for row, (label, _) in watched.items():
        alive = [p for p in procs[row] if p.is_running()]
        cpu = (sum(map(cpu_seconds, alive)) - before[row]) * 60 / seconds
        rss = sum(p.memory_info().rss for p in alive) / MB
        res.fig("W4-cpu", row, label).add(cpu)
        res.fig("W4-rss", row, label).add(rss)
        res.log(f"  W4 {row}: {cpu:.3f} CPU s/min, {rss:.1f} MB")
    for peer in peers:
        if isinstance(peer, Ray):
            peer.teardown()
    return herd


def w8_startup(res: Results, herd: HerdDaemon, reps: int, peers: list[Tool]) -> None:
    env = herd_env(herd.home)
    rows = [
        ("gpuherd --help", [*gpuherd_cmd(), "--help"], env),
        ("gpuherd ls (empty queue)", [*gpuherd_cmd(), "ls"], env),
        ("python3 -c pass (interpreter floor)", [herd_python(), "-c", "pass"], env),
    ]
    for peer in peers:
        if isinstance(peer, TaskSpooler) and peer.server is None:
            peer.setup()  # W8 without W4, which starts it (`measure` stops it either way)
    rows += [
        ("tsp -l (a C client)", [p.bin, "-l"], p.env) for p in peers if isinstance(p, TaskSpooler)
    ]
    for label, cmd, cmd_env in rows:
        times = [wall(cmd, cmd_env) * 1000 for _ in range(reps)]
        fig = res.fig("W8", label, label)
        for t in times:
            fig.add(t)
        res.log(f"  W8 {label}: {statistics.median(times):.0f} ms")


def w5_submit(res: Results, n_batch: int, n_cli: int, peers: list[Tool]) -> None:
    herd = HerdDaemon(gpus=4, home=workdir() / "herd-submit")
    herd.setup()
    assert herd.client is not None
    try:
        herd.client.post("/queue/pause")
        env, cwd = dict(os.environ), str(workdir())
        items = [{"command": "true", "cwd": cwd, "env": env} for _ in range(n_batch)]
        label = f"gpuherd, one POST /jobs of {n_batch:,}"
        for batch in range(3):  # three batches: 10,000, then 20,000, then 30,000 queued
            t = time.perf_counter()
            ids = herd.client.post("/jobs", {"jobs": items})["ids"]
            seconds = time.perf_counter() - t
            res.fig("W5-batch", "herd-submit", label).add(seconds)
            if batch == 0:
                rss = psutil.Process(herd.pid).memory_info().rss / MB
                res.fig("W5-rss", "herd-submit", f"gpuherd daemon with {len(ids):,} queued").add(
                    rss
                )
            res.log(f"  W5 batch {batch + 1} of {n_batch}: {seconds:.2f}s")
        res.log(f"  W5 daemon RSS with {n_batch:,} queued: {rss:.0f} MB")
        calls = [_cli(herd.home, "submit", "-q", "--", "true") * 1000 for _ in range(n_cli)]
        _calls(res, "herd-submit", f"gpuherd submit -- true ({3 * n_batch:,}+ queued)", calls)
    finally:
        herd.teardown()
    for peer in peers:
        if isinstance(peer, TaskSpooler):
            peer.setup()
            try:
                calls = [
                    wall([peer.bin, "-n", "sh", "-c", "true"], peer.env) * 1000
                    for _ in range(n_cli)
                ]
            finally:
                peer.teardown()
            _calls(res, "tsp-cli", "tsp -n sh -c true", calls)
        elif isinstance(peer, Ray):
            peer.setup()
            try:
                answer = peer.request(("true",) * n_batch)
                seconds = answer["submitted"] - answer["t0"]
                label = f"Ray, {n_batch:,} task.remote() calls"
                res.fig("W5-batch", "ray-batch", label).add(seconds)
                res.log(f"  W5 {label}: {seconds:.2f}s")
            finally:
                peer.teardown()


def _calls(res: Results, row: str, label: str, calls: list[float]) -> None:
    res.fig("W5-cli", row, label).add(statistics.median(calls))
    res.fig("W5-cli-p99", row, label).add(percentile(calls, 0.99))
    res.log(
        f"  W5 {label}: median {statistics.median(calls):.0f} ms, "
        f"p99 {percentile(calls, 0.99):.0f} ms over {len(calls)} calls"
    )


def w6_big(res: Results, queued: int, reps: int) -> HerdDaemon:
    """100,000 jobs in the database (queue paused), then ls / show / log wall times."""
    herd = HerdDaemon(gpus=8, home=workdir() / "herd-big")
    herd.setup()
    assert herd.client is not None
    env, cwd = dict(os.environ), str(workdir())
    first = [
        {"command": f"seq 1 200; echo job {i} done", "cwd": cwd, "env": env} for i in range(19)
    ]
    first.append({"command": "echo about to fail >&2; exit 3", "cwd": cwd, "env": env})
    done_ids = herd.client.post("/jobs", {"jobs": first})["ids"]
    while not herd.client.get("/jobs/wait", ids=done_ids, timeout=30)["done"]:
        pass
    herd.client.post("/queue/pause")
    t = time.perf_counter()
    step = 10_000
    for start in range(0, queued, step):
        batch = [
            {"command": "true", "cwd": cwd, "env": env} for _ in range(min(step, queued - start))
        ]
        herd.client.post("/jobs", {"jobs": batch})
    res.extra["w6_fill"] = (queued, time.perf_counter() - t)
    res.log(f"  W6 filled {queued:,} jobs in {time.perf_counter() - t:.1f}s")
    middle = str(done_ids[-1] + queued // 2)
    for label, args in (
        ("gpuherd ls", ["ls"]),
        ("gpuherd show (finished job)", ["show", str(done_ids[0])]),
        ("gpuherd show (failed job)", ["show", str(done_ids[-1])]),
        ("gpuherd show (queued job)", ["show", middle]),
        ("gpuherd log (finished job)", ["log", str(done_ids[0])]),
    ):
        times = [_cli(herd.home, *args) * 1000 for _ in range(reps)]
        fig = res.fig("W6", label, label)
        for v in times:
            fig.add(v)
        res.log(f"  W6 {label}: {statistics.median(times):.0f} ms")
    return herd


def w7_daemon_tick(res: Results, herd: HerdDaemon, n: int) -> None:
    """Hand-off latency on 8 GPUs with the big queue behind: a tick's cost seen from jobs."""
    assert herd.client is not None
    record = workdir() / "runs" / "W7-daemon.rec"
    record.unlink(missing_ok=True)
    lines = stamped_lines("gpuherd-daemon", w3_lengths(n, seed=7), record)
    env, cwd = dict(os.environ), str(workdir())
    ids = herd.client.post(
        "/jobs", {"jobs": [{"command": ln, "cwd": cwd, "env": env, "priority": 10} for ln in lines]}
    )["ids"]
    herd.client.post("/queue/resume")
    while not herd.client.get("/jobs/wait", ids=ids, timeout=30)["done"]:
        pass
    herd.client.post("/queue/pause")
    stamps = read_stamps(record)
    gaps = handoff_gaps(stamps)
    problems = check_stamps_8(record, n)
    label = "gpuherd daemon, 8 GPUs, big queue behind"
    fig50 = res.fig("W7-tick-p50", "herd-deep", label)
    fig99 = res.fig("W7-tick-p99", "herd-deep", label)
    for p in problems:
        fig50.fail(p)
    if gaps:
        fig50.add(statistics.median(gaps))
        fig99.add(percentile(gaps, 0.99))
        res.log(
            f"  W7 daemon hand-off with deep queue: p50 {statistics.median(gaps):.1f} ms, "
            f"p99 {percentile(gaps, 0.99):.1f} ms"
        )


def check_stamps_8(record: Path, n: int) -> list[str]:
    """The W3 check, less its 4-slot limit (this daemon has 8 GPUs)."""
    return [
        p
        for p in check_stamps(record, n)
        if "on 4 slots" not in p and "not one of the GPUs" not in p
    ]


def w7_plan(res: Results, queued: int, reps: int) -> None:
    """gpuherd.core.placement.plan on `queued` Job objects and 8 GPUs, called directly."""
    from gpuherd.core.model import Device, Job, JobSpec, Policy, Reservation
    from gpuherd.core.placement import plan
    from gpuherd.core.states import JobState

    now = time.time()
    spec = JobSpec(command="true", cwd="/tmp")
    jobs = [
        Job(id=i, spec=spec, state=JobState.QUEUED, position=float(i), queued_at=now)
        for i in range(1, queued + 1)
    ]
    cpu_spec = JobSpec(command="true", cwd="/tmp", gpus=0)
    cpu_jobs = [
        Job(id=queued + i, spec=cpu_spec, state=JobState.QUEUED, position=float(queued + i))
        for i in range(1, 101)
    ]
    devices = [Device(index=i) for i in range(8)]
    busy7 = [Reservation(job_id=10**9 + i, gpus=(i,)) for i in range(7)]
    busy8 = [*busy7, Reservation(job_id=10**9 + 7, gpus=(7,))]
    # As the engine calls it (engine_scan.py): the queue in dispatch order, and the CPU-only
    # jobs from their own index, read once every GPU is taken.
    cases = (
        ("plan(): 1 of 8 GPUs free, no CPU-only job queued", busy7, []),
        ("plan(): all 8 busy, no CPU-only job queued", busy8, []),
        ("plan(): all 8 busy, 100 CPU-only jobs queued behind them all", busy8, cpu_jobs),
    )
    for label, reservations, cpu_only in cases:
        behind = lambda gpus, cpu=cpu_only: cpu if gpus == 0 else []  # noqa: E731
        times = []
        for _ in range(reps):
            t = time.perf_counter()
            plan(iter(jobs), devices, reservations, Policy(), now, behind=behind)
            times.append((time.perf_counter() - t) * 1000)
        fig = res.fig("W7-plan", label, label)
        for v in times:
            fig.add(v)
        res.log(f"  W7 {label}: {statistics.median(times):.3f} ms")


def w7_pass(res: Results, queued: int, reps: int) -> None:
    """The engine's placement pass over a herd.db of `queued` jobs and 8 GPUs (what it reads
    of the queue, and `place`: harness/engine_pass.py)."""
    cases = (
        ("engine pass: 1-GPU jobs, 1 of 8 GPUs free", 1, 7, 0.0),
        ("engine pass: 1-GPU jobs, all 8 busy", 1, 8, 0.0),
        ("engine pass: 4-GPU jobs, 3 of 8 GPUs free", 4, 5, 0.0),
        ("engine pass: 4-GPU jobs, 3 of 8 free, past reserve-after", 4, 5, 3600.0),
    )
    for label, per_job, busy, waited in cases:
        times = [t * 1000 for t in pass_times(queued, 8, busy, per_job, reps, waited)]
        fig = res.fig("W7-pass", label, label)
        for v in times:
            fig.add(v)
        res.log(f"  W7 {label}: {statistics.median(times):.3f} ms")


def stop(*tools: Tool | None) -> None:
    for tool in tools:
        if tool is not None:
            tool.teardown()


def git_free_version() -> str:
    out = subprocess.run([*gpuherd_cmd(), "--version"], capture_output=True, text=True)
    return out.stdout.strip() or out.stderr.strip()
