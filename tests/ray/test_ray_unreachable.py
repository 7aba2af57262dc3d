"""A cluster the daemon cannot reach for a while: a restart's recovery that does not wait on
its jobs' actors one by one, and a `daemon stop --kill` that does not wait for jobs it
cannot reach, whose kill the next daemon carries out. And one that is slow: a launch that
waits on its GCS does not hold the daemon (nor lets a job killed meanwhile run, nor one
paused meanwhile run on).

"Cannot reach" is made by freezing Ray's processes (SIGSTOP by pid, SIGCONT after): to the
daemon, a frozen process is one behind a network cut, and thawed, the same cluster is back
with its actors, as a head with GCS fault tolerance would be (which needs a Redis these
tests do not have). The jobs' own processes are never frozen: they run on, as they would.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from conftest import need, stays, wait_for

need("ray.cluster_utils", "ray")

import ray
from ray._private import ray_constants
from ray_fixtures import RayHerd, cluster_fixture, rherd_fixture  # noqa: F401

from gpuherd.executors.local_escaped import stopped
from gpuherd.executors.ray_actor import scratch_root

pytestmark = pytest.mark.timeout(180)  # (with its module's cluster start: ~30 s under load)

LOST_AFTER = 60
"""GPUHERD_RAY_LOST_AFTER: what a stop with --kill waited for (at most) before."""
PROMPT = 15.0
"""Seconds a start or a stop may take here (recovery's deadline is 10 s, a kill's reach 1 s)."""
SLOW = 2.0
"""Seconds the GCS is frozen to make a launch slow: under the daemon's STALE (3 s), so that
it counts the cluster slow, not away (it goes on starting jobs), as a GCS under load is."""
KILL_MARGIN = 1
"""GPUHERD_TEST_KILL_MARGIN: seconds past a kill's grace after which the daemon kills the
actor (5 s outside tests): a test that lets that kill fall due, refused, waits it out."""


@pytest.fixture(autouse=True)
def daemon_timings(monkeypatch: pytest.MonkeyPatch) -> None:
    """The daemon `rherd` starts reads them (set before it is started)."""
    monkeypatch.setenv("GPUHERD_RAY_LOST_AFTER", str(LOST_AFTER))
    monkeypatch.setenv("GPUHERD_TEST_KILL_MARGIN", str(KILL_MARGIN))


def actor_workers(herd: RayHerd) -> list[psutil.Process]:
    """The Ray workers of this home's job actors (each job's supervisor names its worker's
    pid on its command line; the job's processes are out of the worker's tree)."""
    workers = []
    for folder in scratch_root().glob(f"{herd.namespace}-*"):
        supervisor = psutil.Process(int((folder / "supervisor.pid").read_text()))
        workers.append(psutil.Process(int(supervisor.cmdline()[-1])))
    return workers


def cluster_processes(cluster: Any) -> list[psutil.Process]:
    """Every process the local cluster's nodes started (GCS, raylets, ...), not the workers."""
    nodes = [cluster.head_node, *cluster.worker_nodes]
    return [
        psutil.Process(info.process.pid)
        for node in nodes
        for infos in node.all_processes.values()
        for info in infos
    ]


@contextlib.contextmanager
def frozen(processes: list[psutil.Process]) -> Iterator[None]:
    for process in processes:
        process.suspend()
    try:
        yield
    finally:
        for process in processes:
            with contextlib.suppress(psutil.Error):
                process.resume()


def submitted(herd: RayHerd, *commands: str) -> list[int]:
    """Jobs submitted from this process, not by a `gpuherd submit` (a Python start of ~1 s on
    a loaded machine, which left too little of a frozen GCS's SLOW s to the command tested)."""
    cwd, env = str(herd.home.parent), dict(os.environ)
    items = [{"command": command, "cwd": cwd, "env": env} for command in commands]
    return list(herd.client.post("/jobs", {"jobs": items})["ids"])


def timed(herd: RayHerd, *args: str) -> tuple[Any, float]:
    began = time.monotonic()
    proc = herd.cli(*args, check=False, timeout=LOST_AFTER + 30)
    return proc, time.monotonic() - began


def test_a_restart_does_not_wait_on_silent_actors_nor_count_them_lost(
    rherd: RayHerd, tmp_path: Path
) -> None:
    """Before: recovery asked each actor in turn, 10 s each, then killed it as lost (3 jobs:
    30 s, and `daemon start` gave up)."""
    jobs = [
        rherd.submit(
            "--",
            f"echo start >> {tmp_path}/runs-{n}; echo up; "
            f"while [ ! -e {tmp_path}/go-{n} ]; do sleep 0.1; done; echo done",
        )
        for n in range(3)
    ]
    for job in jobs:
        log = rherd.attempt_dir(job) / "stdout.log"
        wait_for(lambda log=log: log.exists() and log.read_text() == "up\n", 30, "the jobs")
    rherd.cli("daemon", "stop")

    with frozen(actor_workers(rherd)):  # their node answers, they do not
        proc, took = timed(rherd, "daemon", "start")
        assert proc.returncode == 0, proc.stderr
        assert took < PROMPT, f"`daemon start` took {took:.1f}s"
        for job in jobs:  # not lost on a guess, nor run again
            assert (rherd.job(job)["state"], rherd.job(job)["attempt"]) == ("running", 1)

    for n in range(3):
        (tmp_path / f"go-{n}").touch()
    for n, job in enumerate(jobs):
        assert rherd.wait_state(job, "succeeded", "failed", "lost", timeout=60)["state"] == (
            "succeeded"
        )
        assert (rherd.attempt_dir(job) / "stdout.log").read_text() == "up\ndone\n"
        assert (tmp_path / f"runs-{n}").read_text() == "start\n"


def test_stop_kill_does_not_wait_for_jobs_out_of_reach_and_the_next_daemon_kills_them(
    rherd: RayHerd,
) -> None:
    """Before: the stop waited for the job's actor to go unheard for GPUHERD_RAY_LOST_AFTER
    s, then recorded the job killed while it ran on."""
    job = rherd.submit("--grace", "1", "--", "echo up; exec sleep 300")
    log = rherd.attempt_dir(job) / "stdout.log"
    wait_for(lambda: log.exists() and log.read_text() == "up\n", 30, "the job to run")
    wait_for(rherd.job_processes, 10, "the job's processes")
    address = rherd.ray.address
    cause = f"the Ray cluster at {address} does not answer (since "

    with frozen(cluster_processes(rherd.ray.cluster) + actor_workers(rherd)):
        seen = lambda: cause in rherd.cli("daemon", "status").stdout  # noqa: E731
        wait_for(seen, 20, "the daemon to see the cluster away")
        proc, took = timed(rherd, "daemon", "stop", "--kill")
        assert took < PROMPT, f"`daemon stop --kill` took {took:.1f}s"
        assert proc.returncode == 1, proc.stdout + proc.stderr
        assert proc.stdout == "stopping after killing 1 running job\ndaemon stopped\n"
        [line] = proc.stderr.splitlines()
        assert line.startswith(f"gpuherd: error: job {job} could not be killed: {cause}"), line
        assert line.endswith(
            "Its kill is kept, and the next `gpuherd daemon start` carries it out: start the "
            "daemon again once the cluster answers; until then it may go on running"
        ), line
        assert not rherd.is_up()
        assert rherd.job_processes()  # as the line says: out of reach, it runs on

    rherd.start()  # the cluster answers again: the stop stored is carried out
    ended = rherd.wait_state(job, "killed", "lost", "failed", timeout=30)
    assert (ended["state"], ended["attempt"]) == ("killed", 1), ended
    wait_for(lambda: rherd.job_processes() == [], 20, "no process of the job left")


def test_a_kill_refused_while_the_cluster_is_away_is_carried_out_when_it_answers_again(
    rherd: RayHerd,
) -> None:
    """Frozen, the actor gets its SIGTERM (and a SIGKILL after the full grace) only once
    thawed, and the daemon's kill past the grace is refused. Before: that kill was never
    asked again (only actors no attempt owns were killed once the cluster answered): the
    job ended a whole grace after the thaw, and had its SIGTERM failed, not at all."""
    grace = 6  # the ended job must come well within a grace of the thaw (below)
    job = rherd.submit("--grace", str(grace), "--", "echo up; trap '' TERM; exec sleep 300")
    log = rherd.attempt_dir(job) / "stdout.log"
    wait_for(lambda: log.exists() and log.read_text() == "up\n", 30, "the job to run")
    wait_for(rherd.job_processes, 10, "the job's processes")
    cause = f"the Ray cluster at {rherd.ray.address} does not answer (since "

    with frozen(cluster_processes(rherd.ray.cluster) + actor_workers(rherd)):
        seen = lambda: cause in rherd.cli("daemon", "status").stdout  # noqa: E731
        wait_for(seen, 20, "the daemon to see the cluster away")
        rherd.cli("kill", str(job))
        # Out of reach, it runs on past its grace and the daemon's margin (KILL_MARGIN):
        # its kill was due, and refused.
        stays(
            lambda: rherd.job(job)["state"] == "running", grace + KILL_MARGIN + 1, "the job running"
        )
        assert rherd.job_processes()
    thawed = time.monotonic()

    # The kill is overdue: it is done as soon as the cluster answers, not a grace later.
    ended = rherd.wait_state(job, "killed", "lost", "failed", "succeeded", timeout=grace - 2)
    assert (ended["state"], ended["attempt"]) == ("killed", 1), ended
    wait_for(lambda: rherd.job_processes() == [], 5, "no process of the job left")
    print(f"killed {time.monotonic() - thawed:.1f}s after the thaw", file=sys.stderr)


def gcs_process(cluster: Any) -> psutil.Process:
    [info] = cluster.head_node.all_processes[ray_constants.PROCESS_TYPE_GCS_SERVER]
    return psutil.Process(info.process.pid)


@contextlib.contextmanager
def slow_gcs(herd: RayHerd) -> Iterator[float]:
    """The cluster's GCS frozen for SLOW s from now (or until the block ends, if sooner):
    every call to it meanwhile waits; the daemon's watcher does not count it away. Gives
    the time.monotonic() at which it thaws: a command that ends before it did not wait for
    the GCS (a bound in seconds failed on a loaded machine, 1.2 s against 1.0)."""
    gcs = gcs_process(herd.ray.cluster)
    gcs.suspend()
    thaws_at = time.monotonic() + SLOW
    thaw = threading.Timer(SLOW, gcs.resume)
    thaw.start()
    try:
        yield thaws_at
    finally:
        thaw.cancel()
        gcs.resume()


def home_actors(herd: RayHerd) -> list[str]:
    named = ray.util.list_named_actors(all_namespaces=True)
    return [entry["name"] for entry in named if entry["namespace"] == herd.namespace]


def test_launches_waiting_on_a_slow_gcs_do_not_hold_the_daemon(rherd: RayHerd) -> None:
    """Before: a launch waited on the daemon's event loop for a fresh read of the nodes and
    the actor's creation, and every request waited with it: `ls` took as long as the GCS
    (SLOW s here; up to ~10 s per job launched). Two launches are under way at once here."""
    with slow_gcs(rherd) as thaws_at:
        jobs = submitted(rherd, "echo one", "echo two")
        proc, took = timed(rherd, "ls")
        print(f"`gpuherd ls` took {took:.2f}s during two slow launches", file=sys.stderr)
        assert time.monotonic() < thaws_at, f"`gpuherd ls` waited for the GCS ({took:.1f}s)"
        rows = [line.split() for line in proc.stdout.splitlines() if line[:1].isdigit()]
        states = {int(row[0]): row[1] for row in rows}
        assert states == dict.fromkeys(jobs, "running"), proc.stdout  # (actors being created)
    for job, word in zip(jobs, ("one", "two"), strict=True):
        done = rherd.wait_state(job, "succeeded", "failed", "lost", timeout=30)
        assert (done["state"], done["attempt"]) == ("succeeded", 1), done
        assert (rherd.attempt_dir(job) / "stdout.log").read_text() == f"{word}\n"


def test_a_job_killed_while_its_actor_is_created_ends_killed_and_leaves_nothing(
    rherd: RayHerd,
) -> None:
    """Its kill is carried out once the actor exists (it is killed at once), and the job
    ends `killed`, not queued or run. Before: the kill waited for the launch to finish."""
    with slow_gcs(rherd) as thaws_at:
        [job] = submitted(rherd, "echo up; exec sleep 300")
        began = time.monotonic()
        assert rherd.job(job)["state"] == "running"  # (its actor being created)
        rherd.cli("kill", str(job))
        took = time.monotonic() - began
        assert time.monotonic() < thaws_at, f"`gpuherd kill` waited for the GCS ({took:.1f}s)"
    ended = rherd.wait_state(job, "killed", "failed", "lost", "succeeded", timeout=30)
    assert (ended["state"], ended["attempt"]) == ("killed", 1), ended
    wait_for(lambda: home_actors(rherd) == [], 20, "no actor of the job left")
    wait_for(lambda: rherd.job_processes() == [], 20, "no process of the job left")


def test_a_daemon_stopped_while_an_actor_is_created_leaves_the_job_to_the_next_one(
    rherd: RayHerd, tmp_path: Path
) -> None:
    """The stop waits for the creation (the actor exists for the next daemon to find, by the
    handle written first): the job runs once, and is followed, not counted lost."""
    runs, go = tmp_path / "runs", tmp_path / "go"
    with slow_gcs(rherd):
        job = rherd.submit("--", f"echo x >> {runs}; while [ ! -e {go} ]; do sleep 0.1; done")
        assert rherd.job(job)["state"] == "running"
        rherd.cli("daemon", "stop")
    rherd.start()
    assert (rherd.job(job)["state"], rherd.job(job)["attempt"]) == ("running", 1)
    go.touch()
    done = rherd.wait_state(job, "succeeded", "failed", "lost", timeout=30)
    assert (done["state"], done["attempt"]) == ("succeeded", 1), done
    assert runs.read_text() == "x\n"


def all_stopped(herd: RayHerd) -> bool:
    """Whether `herd`'s job has started (its shell and `sleep`), every process of it stopped."""
    procs = herd.job_processes()
    # Stopped as gpuherd tells it: T, or the shell in D, waiting in vfork for a child in T (a
    # SIGSTOP between dash's vfork of `sleep` and its exec).
    return len(procs) >= 2 and all(stopped(p.pid) for p in procs)


def test_a_job_paused_while_its_actor_is_created_is_paused_once_it_runs(rherd: RayHerd) -> None:
    """The pause is answered at once (`paused`), and its SIGSTOP reaches the job once its
    actor exists and has started the command; `resume` lets it run on."""
    with slow_gcs(rherd) as thaws_at:
        [job] = submitted(rherd, "echo up; sleep 300")
        assert rherd.job(job)["state"] == "running"  # (its actor being created)
        proc, took = timed(rherd, "pause", str(job))
        assert proc.returncode == 0, proc.stderr
        assert time.monotonic() < thaws_at, f"`gpuherd pause` waited for the GCS ({took:.1f}s)"
        assert rherd.job(job)["state"] == "paused"
    wait_for(lambda: all_stopped(rherd), 20, "every process of the job to be stopped")
    assert (rherd.job(job)["state"], rherd.job(job)["attempt"]) == ("paused", 1)
    rherd.cli("resume", str(job))
    rherd.wait_state(job, "running")
    wait_for(lambda: not all_stopped(rherd), 15, "the job to run again")
    rherd.cli("kill", str(job))
    ended = rherd.wait_state(job, "killed", "failed", "lost", "succeeded", timeout=30)
    assert (ended["state"], ended["attempt"]) == ("killed", 1), ended


def test_a_job_paused_while_its_actor_is_created_stays_paused_across_a_daemon_stop(
    rherd: RayHerd,
) -> None:
    """The daemon stops before the pause's SIGSTOP could reach the actor (still being
    created): the next one, which finds the job paused, sends it. Before, the job ran on,
    shown paused."""
    with slow_gcs(rherd):
        job = rherd.submit("--", "echo up; sleep 300")
        rherd.cli("pause", str(job))
        rherd.cli("daemon", "stop")
    rherd.start()
    assert (rherd.job(job)["state"], rherd.job(job)["attempt"]) == ("paused", 1)
    wait_for(lambda: all_stopped(rherd), 20, "every process of the job to be stopped")
    rherd.cli("kill", str(job))
    ended = rherd.wait_state(job, "killed", "failed", "lost", "succeeded", timeout=30)
    assert (ended["state"], ended["attempt"]) == ("killed", 1), ended
