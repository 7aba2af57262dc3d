"""gpuherd on a Ray cluster (head without GPUs + 2 nodes x 2 fake GPUs, per module or handed on
intact from the module before: ray_fixtures)."""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import need, wait_for

need("ray.cluster_utils", "ray")

import ray
from ray_fixtures import (  # noqa: F401
    GPUS_PER_NODE,
    LocalCluster,
    RayHerd,
    cluster_fixture,
    rherd_fixture,
)

from gpuherd.executors.base import ExitStatus, LaunchRequest, NotStarted, SpawnError
from gpuherd.executors.local_escaped import stopped
from gpuherd.executors.ray import RayExecutor, handle_of
from gpuherd.executors.ray_actor import scratch_root
from gpuherd.executors.ray_errors import MISSING_GPUHERD, actor_died_note
from gpuherd.executors.ray_supervisor import START_DELAY as START_DELAY_VARIABLE
from gpuherd.gpus.base import ProbeError
from gpuherd.gpus.ray import RayNodes

pytestmark = pytest.mark.timeout(180)  # (with its module's cluster start: ~30 s under load)

RECORD = r"""
import json, os, sys, time
out, sleep = sys.argv[1], float(sys.argv[2])
start = time.time()
print("started", flush=True)
time.sleep(sleep)
record = {
    "id": int(os.environ["GPUHERD_JOB_ID"]),
    "node": os.environ["GPUHERD_RAY_NODE_ID"],
    "gpus": os.environ["CUDA_VISIBLE_DEVICES"],
    "start": start,
    "end": time.time(),
}
fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
os.write(fd, (json.dumps(record) + "\n").encode())
os.close(fd)
"""


def recorder(tmp_path: Path, sleep: float) -> tuple[str, Path]:
    script = tmp_path / "record.py"
    script.write_text(RECORD)
    out = tmp_path / "records.jsonl"
    return shlex.join([sys.executable, str(script), str(out), str(sleep)]), out


def records(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.read_text().splitlines()]


def test_eight_one_gpu_jobs_share_four_gpus_exactly(rherd: RayHerd, tmp_path: Path) -> None:
    cmd, out = recorder(tmp_path, 1.5)
    ids = rherd.submit_lines([cmd] * 8)
    for job_id in ids:
        rherd.wait_state(job_id, "succeeded", timeout=60)
    seen = records(out)
    assert len(seen) == 8
    for r in seen:
        assert r["gpus"] in {str(i) for i in range(GPUS_PER_NODE)}
    # At no moment more than 4 jobs, nor two on one (node, GPU).
    # Checked at each job's start: the busiest moments are among those instants.
    for r in seen:
        active = [o for o in seen if o["start"] <= r["start"] < o["end"]]
        assert len(active) <= 4
        places = [(o["node"], o["gpus"]) for o in active]
        assert len(places) == len(set(places)), places
    assert len({(r["node"], r["gpus"]) for r in seen}) == 4  # every GPU was used
    # The attempt records where it ran: the node's host and id, and gpuherd's GPU there.
    for job_id in ids:
        shown = rherd.json("show", str(job_id))
        (attempt,) = shown["attempts"]
        ran = next(r for r in seen if r["id"] == job_id)
        assert rherd.placement(job_id)["node_id"] == ran["node"]
        assert attempt["host"].endswith(f"(ray node {ran['node']})")
        assert attempt["gpu_uuids"] == [f"ray:{ran['node']}:{ran['gpus']}"]


def gpu_listing(rherd: RayHerd) -> list[dict[str, Any]]:
    listing = rherd.json("gpus")
    return list(listing["gpus"] if isinstance(listing, dict) else listing)


def test_two_gpu_job_gets_both_gpus_of_one_node(rherd: RayHerd, tmp_path: Path) -> None:
    cmd, out = recorder(tmp_path, 0.1)
    one = rherd.submit("--", "sleep", "300")  # a GPU of one node taken: the job goes to the other
    rherd.wait_state(one, "running", timeout=30)
    job = rherd.submit("--gpus", "2", "--", cmd)
    done = rherd.wait_state(job, "succeeded", timeout=30)
    (r,) = records(out)
    assert r["gpus"] == "0,1"
    assert r["node"] in rherd.ray.gpu_nodes()
    assert r["node"] != rherd.placement(one)["node_id"]
    # gpuherd's indices are exactly the GPUs the job saw, on the node it ran on.
    by_index = {g["index"]: g for g in gpu_listing(rherd)}
    assert [by_index[i]["uuid"] for i in done["gpus"]] == [f"ray:{r['node']}:{i}" for i in (0, 1)]
    assert {by_index[i]["node"] for i in done["gpus"]} == {r["node"]}
    rherd.cli("kill", str(one))
    rherd.wait_state(one, "killed", timeout=30)


def test_a_job_sees_the_gpu_gpuherd_chose_not_the_one_ray_would(
    rherd: RayHerd, tmp_path: Path
) -> None:
    # Ray hands out a node's lowest free GPU id; drained, those must stay unused.
    firsts = [g["index"] for g in gpu_listing(rherd) if g["uuid"].endswith(":0")]
    for index in firsts:
        rherd.cli("gpus", "drain", str(index))
    cmd, out = recorder(tmp_path, 1.0)
    # --mem is accepted on a cluster: Ray reports no GPU memory, the job takes a whole GPU.
    ids = [rherd.submit("--mem", "1GiB", "--", cmd), rherd.submit("--", cmd)]
    done = [rherd.wait_state(job_id, "succeeded", timeout=30) for job_id in ids]
    seen = records(out)
    assert sorted(r["gpus"] for r in seen) == ["1", "1"]
    assert len({r["node"] for r in seen}) == 2
    assert not {i for d in done for i in d["gpus"]} & set(firsts)
    for job_id in ids:
        actual = rherd.placement(job_id)
        assert actual["gpu_ids"] == [1]


def test_cpu_only_job_sees_no_gpu_and_where_it_ran_is_recorded(rherd: RayHerd) -> None:
    job = rherd.submit("--gpus", "0", "--", 'echo "[$CUDA_VISIBLE_DEVICES] $GPUHERD_RAY_NODE_ID"')
    rherd.wait_state(job, "succeeded", timeout=30)
    seen, node = (rherd.attempt_dir(job) / "stdout.log").read_text().split()
    assert seen == "[]"
    # Ray chose the node: ray.json and `show` name it all the same, as for a GPU job.
    place = rherd.placement(job)
    assert (place["node_id"], place["gpu_ids"]) == (node, [])
    assert (
        place["host"] == next(n for n in ray.nodes() if n["NodeID"] == node)["NodeManagerHostname"]
    )
    assert f"{place['host']} (ray node {node})" in rherd.cli("show", str(job)).stdout


def test_a_job_on_a_node_runs_in_the_shell_its_submitter_names(rherd: RayHerd) -> None:
    env = {**rherd.env, "GPUHERD_SHELL": "bash"}
    command = '[[ 1 == 1 ]] && echo "${BASH_VERSION:+bash}" {1..2}'
    job = int(rherd.cli("submit", "-q", "--gpus", "0", "--", command, env=env).stdout)
    rherd.wait_state(job, "succeeded", timeout=30)
    assert (rherd.attempt_dir(job) / "stdout.log").read_text() == "bash 1 2\n"


def test_impossible_request_is_refused_at_submit(rherd: RayHerd) -> None:
    proc = rherd.cli("submit", "--gpus", "3", "--", "true", check=False)
    assert proc.returncode != 0
    assert (
        "asks for 3 GPUs on one node: the largest node has 2: give fewer gpus (--gpus), at most 2"
        in proc.stderr
    )
    assert rherd.ls_all() == []
    gpus = gpu_listing(rherd)
    assert len(gpus) == 4
    assert len({g["node"] for g in gpus}) == 2
    table = rherd.cli("gpus").stdout.splitlines()
    assert table[0].split()[:2] == ["GPU", "NODE"]


def test_logs_stream_while_running_and_kill_leaves_nothing(rherd: RayHerd) -> None:
    # A job with a detached grandchild in its own session, and one that ignores SIGTERM.
    cmd = (
        "echo hello; setsid sh -c 'sleep 300' & sh -c 'trap \"\" TERM; sleep 300' & sleep 300; wait"
    )
    job = rherd.submit("--grace", "1", "--", cmd)
    rherd.wait_state(job, "running", timeout=30)
    log = rherd.attempt_dir(job) / "stdout.log"
    wait_for(lambda: log.exists() and log.read_text() == "hello\n", 30, "the log to stream")
    wait_for(lambda: len(rherd.job_processes()) >= 4, 30, "the job's processes")
    assert rherd.ray.free_gpus() == 3
    rherd.cli("kill", str(job))
    done = rherd.wait_state(job, "killed", timeout=30)
    assert done["state"] == "killed"
    assert rherd.job_processes() == []
    wait_for(lambda: rherd.ray.free_gpus() == 4, 15, "the GPU to be free in Ray")


def test_a_kill_sends_each_process_one_sigterm(rherd: RayHerd) -> None:
    # Sent to the job's group and again to each descendant, a trap ran twice: a checkpoint
    # its first SIGTERM began was cut by the second.
    job = rherd.submit("--grace", "2", "--", "trap 'echo term' TERM; while :; do sleep 0.05; done")
    rherd.wait_state(job, "running", timeout=30)
    wait_for(lambda: len(rherd.job_processes()) >= 1, 30, "the job's shell")
    rherd.cli("kill", str(job))
    rherd.wait_state(job, "killed", timeout=30)
    assert (rherd.attempt_dir(job) / "stdout.log").read_text() == "term\n"


def test_ray_killing_the_workers_group_still_ends_every_process_of_the_job(
    rherd: RayHerd,
) -> None:
    job = rherd.submit("--", "sh -c 'sleep 300' & sleep 300; wait")
    rherd.wait_state(job, "running", timeout=30)
    wait_for(lambda: len(rherd.job_processes()) >= 3, 30, "the job's processes")
    shell = min(rherd.job_processes(), key=lambda p: p.pid)
    supervisor = shell.parent()
    assert supervisor is not None and "ray_supervisor" in " ".join(supervisor.cmdline())
    worker = int(supervisor.cmdline()[-1])
    if os.getpgid(worker) != worker:
        pytest.skip("this Ray's workers do not lead their own process group")
    os.killpg(worker, signal.SIGKILL)  # what Ray does to a dead worker's group
    rherd.wait_state(job, "lost", "failed", timeout=60)
    wait_for(lambda: rherd.job_processes() == [], 20, "no process of the job left")


def test_job_end_kills_what_it_left_behind(rherd: RayHerd) -> None:
    job = rherd.submit("--", "setsid sh -c 'sleep 300' & echo bye; exit 3")
    done = rherd.wait_state(job, "failed", timeout=30)
    assert done["exit_code"] == 3
    wait_for(lambda: rherd.job_processes() == [], 10, "no process of the job")
    assert (rherd.attempt_dir(job) / "stdout.log").read_text() == "bye\n"


def test_pause_and_resume_stop_the_whole_job(rherd: RayHerd) -> None:
    job = rherd.submit("--", "echo go; sleep 300")
    rherd.wait_state(job, "running", timeout=30)
    wait_for(lambda: len(rherd.job_processes()) >= 2, 30, "the job's processes")
    rherd.cli("pause", str(job))
    rherd.wait_state(job, "paused")

    def all_stopped() -> bool:
        procs = rherd.job_processes()
        # (T, or D waiting in vfork for a child in T: stopped as gpuherd tells it)
        return bool(procs) and all(stopped(p.pid) for p in procs)

    wait_for(all_stopped, 15, "every process of the job to be stopped")
    rherd.cli("resume", str(job))
    rherd.wait_state(job, "running")
    wait_for(lambda: not all_stopped(), 15, "the job to run again")
    rherd.cli("kill", str(job))
    rherd.wait_state(job, "killed", timeout=30)


START_DELAY = 5
"""Seconds the job's supervisor waits before starting its command (GPUHERD_RAY_START_DELAY)."""


def slow_to_start(herd: RayHerd, verb: str) -> int:
    """A job whose supervisor waits START_DELAY s before starting its command, once `verb`
    (pause, kill) was sent to it in that wait: its supervisor up, its command not started."""
    env = f"{START_DELAY_VARIABLE}={START_DELAY}"
    job = herd.submit("--env", env, "--", "echo up; sleep 300")
    folder = scratch_root() / f"{herd.namespace}-{job}-1"
    wait_for(lambda: (folder / "supervisor.pid").exists(), 30, "the job's supervisor")
    herd.cli(verb, str(job))
    assert not (folder / "pid").exists(), f"the command started before the {verb}: too slow"
    return job


def test_a_pause_sent_before_the_command_started_stops_it_once_it_has(rherd: RayHerd) -> None:
    """The pause is sent before the job's pid is known. Before, the actor (its constructor
    done once the supervisor was up) sent its SIGSTOP to no process, and the job ran on,
    shown paused."""
    job = slow_to_start(rherd, "pause")
    assert rherd.job(job)["state"] == "paused"

    def all_stopped() -> bool:
        procs = rherd.job_processes()
        # (T, or D waiting in vfork for a child in T: stopped as gpuherd tells it)
        return bool(procs) and all(stopped(p.pid) for p in procs)

    wait_for(all_stopped, START_DELAY + 15, "every process of the job to be stopped")
    rherd.cli("kill", str(job))
    rherd.wait_state(job, "killed", timeout=30)


def test_a_pause_sent_before_the_command_started_survives_the_daemons_stop(
    rherd: RayHerd,
) -> None:
    """The daemon stopped right after the pause: the pause, not yet taken by the actor (it
    waits for the command's start), went with the daemon, and the job ran on, shown paused,
    until a next daemon came; the stop had said it stays paused."""
    job = slow_to_start(rherd, "pause")
    stopped_said = rherd.cli("daemon", "stop").stdout
    assert "1 paused job stays paused" in stopped_said, stopped_said

    def all_stopped() -> bool:
        procs = rherd.job_processes()
        return bool(procs) and all(stopped(p.pid) for p in procs)

    wait_for(all_stopped, START_DELAY + 15, "every process of the job to be stopped")
    rherd.start()
    rherd.cli("kill", str(job))
    rherd.wait_state(job, "killed", timeout=30)


def test_a_kill_sent_before_the_command_started_ends_it_once_it_has(rherd: RayHerd) -> None:
    """Its supervisor gets the SIGTERM (it waits, unread, until the command has started)."""
    job = slow_to_start(rherd, "kill")
    ended = rherd.wait_state(job, "killed", "failed", "lost", timeout=START_DELAY + 20)
    assert (ended["state"], ended["signal"]) == ("killed", signal.SIGTERM), ended  # not SIGKILL
    wait_for(lambda: rherd.job_processes() == [], 10, "no process of the job left")


def test_a_start_delay_that_is_no_number_is_ignored_and_said(tmp_path: Path) -> None:
    """The supervisor run as the actor runs it (this process as its worker), no cluster."""
    env = {**os.environ, START_DELAY_VARIABLE: "soon"}
    spec = {"command": "echo ran", "cwd": str(tmp_path), "env": env}
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    argv = [sys.executable, "-m", "gpuherd.executors.ray_supervisor", str(tmp_path)]
    subprocess.run([*argv, str(os.getpid())], check=True, timeout=30)
    wait_for(lambda: (tmp_path / "exit_status").exists(), 10, "the command's end")
    assert (tmp_path / "exit_status").read_text() == "0\n"
    assert (tmp_path / "stdout.log").read_text() == "ran\n"
    assert (tmp_path / "stderr.log").read_text() == (
        f"gpuherd: {START_DELAY_VARIABLE}=soon is not a number of seconds: ignored\n"
    )


def test_daemon_restarted_mid_job_reattaches(rherd: RayHerd, tmp_path: Path) -> None:
    go = tmp_path / "go"
    wait = f"while [ ! -e {shlex.quote(str(go))} ]; do sleep 0.05; done"
    cmd = f"echo before; {wait}; echo after; exit 5"
    job = rherd.submit("--", cmd)
    rherd.wait_state(job, "running", timeout=30)
    log = rherd.attempt_dir(job) / "stdout.log"
    wait_for(lambda: log.read_text() == "before\n", 30, "the first line")
    rherd.kill9()
    time.sleep(0.5)
    assert rherd.job_processes(), "the job must outlive the daemon"
    rherd.start()  # no options: the executor and the cluster are remembered
    assert rherd.job(job)["state"] == "running"
    go.touch()
    done = rherd.wait_state(job, "failed", timeout=30)
    assert done["exit_code"] == 5
    assert done["attempt"] == 1
    assert log.read_text() == "before\nafter\n"
    assert rherd.job_processes() == []
    # A graceful stop leaves a job running too, and the next daemon finds it.
    job2 = rherd.submit("--", "sleep 300")
    rherd.wait_state(job2, "running", timeout=30)
    rherd.cli("daemon", "stop")
    rherd.start()
    assert rherd.job(job2)["state"] == "running"
    rherd.cli("kill", str(job2))
    rherd.wait_state(job2, "killed", timeout=30)
    assert signal.SIGTERM  # (the kill went through the re-attached actor)


def launched(executor: RayExecutor, request: LaunchRequest) -> tuple[int, ExitStatus]:
    """Launch and watch an attempt as the engine does: (the handle `launch` returned, how
    `watch` said it ended)."""

    async def scenario() -> tuple[int, ExitStatus]:
        handle = executor.launch(request)
        ended: asyncio.Future[ExitStatus] = asyncio.get_running_loop().create_future()
        executor.watch(handle, request.attempt_dir, "key", ended.set_result)
        return handle, await asyncio.wait_for(ended, 30)

    return asyncio.run(scenario())


def gone_executor(tmp_path: Path, gone: str) -> RayExecutor:
    """An executor whose GPUs 6 and 7 are on node `gone`, which is not in the cluster."""
    (tmp_path / "ray-gpus.json").write_text(json.dumps({gone: [6, 7]}))
    return RayExecutor(RayNodes(tmp_path / "ray-gpus.json"), "gpuherd-test-gone", "gone")


def test_a_node_gone_before_its_job_started_is_not_started(
    cluster: LocalCluster, tmp_path: Path
) -> None:
    # gpuherd placed the job on GPU 7 of a node that has left the cluster since: `launch`
    # returns the handle at once (the check needs the cluster: off the event loop), no actor
    # is made, and `watch` tells NotStarted (the engine queues the job again:
    # test_not_started.py).
    gone = "f" * 56
    executor = gone_executor(tmp_path, gone)
    folder = tmp_path / "attempt-1"
    folder.mkdir()
    request = LaunchRequest(1, 1, "true", str(tmp_path), {"CUDA_VISIBLE_DEVICES": "7"}, str(folder))
    handle, status = launched(executor, request)
    assert handle == handle_of(1, 1)
    assert isinstance(status.unstarted, NotStarted)
    assert str(status.unstarted) == f"Ray node {gone} left the cluster before this attempt started"
    assert (folder / "stderr.log").read_text() == f"gpuherd: {status.unstarted}\n"
    assert (folder / "pid").read_text() == f"{handle}\n"  # (before anything else)
    assert not executor.is_running(handle_of(1, 1), 1, 1, "gone:1:1")
    names = {a["name"] for a in ray.util.list_named_actors(all_namespaces=True)}
    assert executor.actor_name(1, 1) not in names


def test_a_nodes_read_that_fails_before_the_start_queues_the_job_again(
    cluster: LocalCluster, tmp_path: Path
) -> None:
    # The fresh read of the nodes gives up (a GCS slow for 3-5 s: its read's deadline comes
    # before the cluster counts as down; not reproducible on demand, so the read here is one
    # that fails as Ray's does then): the job did not fail, the cluster was slow. NotStarted:
    # the engine queues it again (it was spawn_error: the job failed).
    def unanswered(fresh: bool) -> list[dict[str, Any]]:
        raise ProbeError("the Ray cluster did not answer within 3 s")

    nodes = RayNodes(tmp_path / "ray-gpus.json", read=unanswered)
    executor = RayExecutor(nodes, "gpuherd-test-slow", "slow")
    folder = tmp_path / "attempt-1"
    folder.mkdir()
    request = LaunchRequest(3, 1, "true", str(tmp_path), {"CUDA_VISIBLE_DEVICES": ""}, str(folder))
    _, status = launched(executor, request)
    assert isinstance(status.unstarted, NotStarted), status
    assert str(status.unstarted) == (
        "placing job 3 on the Ray cluster: the Ray cluster did not answer within 3 s"
    )
    names = {a["name"] for a in ray.util.list_named_actors(all_namespaces=True)}
    assert executor.actor_name(3, 1) not in names


def test_an_actor_that_cannot_be_created_is_told_late_as_a_spawn_error(
    cluster: LocalCluster, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # Ray refuses the actor's creation (here: an argument it cannot send to the node) after
    # `launch` has returned: `watch` tells a SpawnError (the engine fails the job as
    # spawn_error with it: test_not_started.py) of one line that keeps Ray's reason. Ray's
    # text is 20 lines, coloured, and its first is the argument's whole value (the job's
    # environment): the job's detail had all of it (`ls` cut it to that first line).
    executor = gone_executor(tmp_path, "f" * 56)
    folder = tmp_path / "attempt-1"
    folder.mkdir()
    env: dict[str, Any] = {"CUDA_VISIBLE_DEVICES": "", "UNSENDABLE": threading.Lock()}
    request = LaunchRequest(2, 1, "true", str(tmp_path), env, str(folder))
    _, status = launched(executor, request)
    assert type(status.unstarted) is SpawnError
    message = str(status.unstarted)
    assert message == (
        "starting job 2 (attempt 1) on the Ray cluster: serialization: cannot pickle "
        "'_thread.lock' object; check `gpuherd gpus` and the cluster's state (`ray status`); "
        "Ray's whole error: `gpuherd log 2 --stderr`"
    )
    # Ray's whole text, without its colours, where the message says (and in the daemon's log).
    stderr = (folder / "stderr.log").read_text()
    assert stderr.startswith(f"gpuherd: {message}\nCould not serialize the argument {{"), stderr
    assert "\n!!! FAIL serialization: cannot pickle '_thread.lock' object\n" in stderr, stderr
    assert "\x1b" not in stderr
    logged = [r.getMessage() for r in caplog.records if r.name == "gpuherd.ray"]
    assert [m for m in logged if "not started" in m and "!!! FAIL serialization" in m], logged
    names = {a["name"] for a in ray.util.list_named_actors(all_namespaces=True)}
    assert executor.actor_name(2, 1) not in names


def test_a_node_without_gpuherd_is_named_in_the_attempts_stderr() -> None:
    # What Ray 2.60 says when the actor's class cannot be imported on the node.
    died = RuntimeError(
        "The actor died because of an error raised in its creation task, \x1b[36mray::"
        "JobActor.__init__()\x1b[39m (pid=1, ip=192.0.2.2)\n"
        "RuntimeError: The actor with name JobActor failed to import on the worker.\n"
        "ModuleNotFoundError: No module named 'gpuherd'"
    )
    note = actor_died_note(died)
    assert note == (
        "gpuherd: the job's Ray actor ended without an exit status: ModuleNotFoundError: "
        f"No module named 'gpuherd'; {MISSING_GPUHERD}\n"
    )
