"""The Ray actor that holds one attempt's GPUs and runs it on its node (node side).

One detached actor per attempt. Ray reserves as many GPUs of its node as the job asks for;
the actor sets `CUDA_VISIBLE_DEVICES` to exactly the GPUs gpuherd's placement chose on the
node (empty for a job without GPUs: Ray would show it every GPU), starts the supervisor
(ray_supervisor.py), and serves the daemon: log chunks, the exit status, signals.
Its folder on the node is a scratch copy; the daemon pulls everything into the attempt
folder on its own machine.

Nothing else is done in the constructor after the spawn but starting the node's fence (a
thread that ends the worker, and so the job, once the GCS counts this node dead: `_fence`)
and waiting for the command to start (its `pid` file): the supervisor watches the worker's
process itself (a pidfd), so an actor killed at any moment, even during its setup, never
leaves the job running. That wait is what lets a pause sent right after the launch reach the
job: Ray runs no method of an actor before its constructor has returned, and a signal sent
before the pid is known would reach no process.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import psutil
import ray

from gpuherd.executors.ray_scratch import claim, sweep
from gpuherd.executors.ray_supervisor import signal_tree
from gpuherd.file_holes import free_range
from gpuherd.jobfiles import RAY_NODE_VARIABLE
from gpuherd.own_files import replace_file

CHUNK = 1 << 20
"""Most bytes of each stream one pull returns."""
FREE_STEP = 1 << 20
"""Bytes the daemon must have pulled past the last freed offset before more is freed."""
START_WAIT = 10.0
"""Seconds the actor waits, at most, for the supervisor to start the command (its `pid`)."""
NODE_CHECK_EVERY = 2.0
"""Seconds between the actor's questions to the GCS whether it still counts the actor's node
alive (`_fence`); one costs ~0.2 ms of CPU here, and the daemon waits this long, and a second
more, before it retries a job lost with its node (ray_follow.py)."""

Stamp = tuple[str, int]
"""(the sending daemon's id, the number it gave the signal): see `supersedes`."""


def scratch_root() -> Path:
    return Path(tempfile.gettempdir()) / f"gpuherd-ray-{os.getuid()}"


def private_scratch_root() -> Path:
    """`scratch_root()`, the user's alone (0700), as the home is on the daemon's machine: each
    attempt's `spec.json` there holds the job's whole environment (API keys and all) and its
    logs what it prints, in a `/tmp` other users of the node share. A root an older gpuherd
    made open (0755) is closed; one that is not this user's own folder (another user's, a
    symlink) is refused, never written into."""
    root = scratch_root()
    with contextlib.suppress(FileExistsError):
        root.mkdir(mode=0o700)
    st = os.lstat(root)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
        raise RuntimeError(
            f"{root} on {socket.gethostname()} is not a folder of this user's own (uid "
            f"{os.getuid()}): remove it, and gpuherd makes it again, readable by you alone"
        )
    if stat.S_IMODE(st.st_mode) != 0o700:
        os.chmod(root, 0o700)
    return root


def node_gpu_ids(slots: list[int]) -> list[str]:
    """The device ids of the node's GPUs number `slots` (0, 1, ... in Ray's order), as Ray
    itself names them: through the node's own CUDA_VISIBLE_DEVICES when it had one."""
    worker = getattr(getattr(ray, "_private", None), "worker", None)
    original = getattr(
        getattr(worker, "global_worker", None), "original_visible_accelerator_ids", None
    )
    visible = original.get("GPU") if isinstance(original, dict) else None
    if not visible:
        return [str(s) for s in slots]
    return [str(visible[s]) if s < len(visible) else str(s) for s in slots]


def supersedes(sent: Stamp, last: Stamp | None) -> bool:
    """Whether a signal stamped `sent` is to be applied after the one stamped `last`: it is
    newer, or from another daemon (a restarted one: its numbers begin again).

    The actor runs its methods in several threads (max_concurrency: a pull waits there while
    a pause goes through), and Ray runs a threaded actor's calls out of order, even those of
    one caller (it refuses `allow_out_of_order_execution=False` with `max_concurrency > 1`),
    as it may a concurrency group of one thread (in the order they arrive, not as sent). A
    pause and a resume sent in quick succession could then be applied in reverse, the job
    left stopped while shown running. Only the last signal sent decides a job's state, so an
    older one that comes after a newer one is dropped: the daemon's order, on any Ray, with
    no wait on its side (waiting for each answer would hold a resume behind a pause sent to
    an actor out of reach)."""
    return last is None or sent[0] != last[0] or sent[1] > last[1]


class JobActor:
    def __init__(
        self, name: str, command: str, cwd: str, env: dict[str, str], gpus: list[int]
    ) -> None:
        root = private_scratch_root()
        sweep(root)  # (those of actors killed before their supervisor took over)
        self.folder = root / name
        if self.folder.exists():
            shutil.rmtree(self.folder, ignore_errors=True)
        self.folder.mkdir(mode=0o700)
        claim(self.folder)  # (first: killed from here on, the next actor's sweep removes it)
        self.node_id = ray.get_runtime_context().get_node_id()
        self.ray_gpu_ids = [str(i) for i in ray.get_gpu_ids()]
        self.gpu_ids = node_gpu_ids(gpus)
        env = dict(env)
        env["CUDA_VISIBLE_DEVICES"] = ",".join(self.gpu_ids)
        env[RAY_NODE_VARIABLE] = self.node_id
        spec = {"command": command, "cwd": cwd, "env": env}
        # Whole or not at all, and this user's alone (the environment holds API keys): a
        # reader that sees the file sees all of it, never the empty file a plain write opens.
        replace_file(self.folder / "spec.json", json.dumps(spec).encode(), mode=0o600)
        self._supervisor = self._start_supervisor()
        threading.Thread(target=self._fence, name="gpuherd-node-fence", daemon=True).start()
        self._freed = {"stdout.log": 0, "stderr.log": 0}
        self._signalling = threading.Lock()
        self._last_signal: Stamp | None = None
        # Every method called meanwhile (a pause, a stop) waits for this: it finds the job's
        # processes, in the order the daemon sent them. Normally milliseconds.
        self._await_start()

    def _start_supervisor(self) -> psutil.Process:
        argv = [sys.executable, "-m", "gpuherd.executors.ray_supervisor"]
        argv += [str(self.folder), str(os.getpid())]
        where = f"starting the job supervisor on {socket.gethostname()} in {self.folder}"
        try:
            with open(self.folder / "supervisor.log", "ab") as log:
                # It forks once more and this first process exits: the supervisor leaves the
                # worker's tree (see ray_supervisor.py) and says where it went.
                subprocess.run(
                    argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log, timeout=60, check=True
                )
            pid = int((self.folder / "supervisor.pid").read_text().strip())
            return psutil.Process(pid)
        except (OSError, ValueError, subprocess.SubprocessError, psutil.Error) as exc:
            raise RuntimeError(f"{where}: {exc}") from exc

    # ---- what the daemon calls ------------------------------------------------------------

    def info(self) -> dict[str, Any]:
        """Where the job runs: node id, host, its GPU ids (and those Ray assigned), its pid."""
        return {
            "node_id": self.node_id,
            "host": socket.gethostname(),
            "gpu_ids": self.gpu_ids,
            "ray_gpu_ids": self.ray_gpu_ids,
            "supervisor_pid": self._supervisor.pid,
            "pid": self._leader(),
        }

    def pull(self, out_offset: int, err_offset: int, wait: float) -> dict[str, Any]:
        """Log bytes past the offsets and the exit status once known; waits up to `wait` s
        for something new, so the daemon's follow loop is a long poll, not a busy one.
        The daemon has everything before the offsets: this copy frees it, so that a chatty
        job does not fill the node's /tmp (often memory) with a second copy of its log."""
        for name, offset in (("stdout.log", out_offset), ("stderr.log", err_offset)):
            if offset - self._freed[name] >= FREE_STEP:
                free_range(self.folder / name, 0, offset)
                self._freed[name] = offset
        deadline = time.monotonic() + wait
        while True:
            status = self._status()
            out = self._read("stdout.log", out_offset)
            err = self._read("stderr.log", err_offset)
            if out or err or status is not None or time.monotonic() >= deadline:
                return {"out": out, "err": err, "status": status, "age": self._age()}
            time.sleep(0.05)

    def status(self) -> int | None:
        """The job's exit status once it has ended (-1: none was recorded), else None."""
        return self._status()

    def signal_in_order(self, signum: int, sender: str, number: int) -> bool:
        """Send a signal to every process of the job (not to the supervisor), unless one sent
        after it by the same daemon was applied already (`supersedes`). False: it reached
        none, the job having ended (or not started within START_WAIT), or it was dropped."""
        # At once, unless the constructor's wait gave up: then in one of the actor's threads
        # (max_concurrency, ray.py), its pulls going on meanwhile.
        leader = self._await_start()
        with self._signalling:  # (the check and the sending, one signal at a time)
            if not supersedes((sender, number), self._last_signal):
                return False
            if leader is None or self._status() is not None:  # (its pid may be another's now)
                return False
            signal_tree(signum, leader, self._descendants())
            self._last_signal = (sender, number)
            return True

    def terminate(self, grace: float) -> None:
        """SIGCONT and SIGTERM to the job, SIGKILL after `grace` s (done by the supervisor)."""
        (self.folder / "grace").write_text(f"{grace}\n")
        with contextlib.suppress(psutil.Error):
            self._supervisor.send_signal(signal.SIGTERM)  # psutil: never a reused pid

    def release(self) -> None:
        """The daemon has everything: remove the scratch folder (the actor is killed next)."""
        shutil.rmtree(self.folder, ignore_errors=True)

    # ---- helpers --------------------------------------------------------------------------

    def _fence(self) -> None:
        """End this worker, and so the job (its supervisor kills every process of the job and
        removes the folder when the worker dies), once the GCS counts this node dead.

        Ray counts a node dead when its raylet misses its health checks: a raylet frozen
        (SIGSTOP) or stuck, while this worker, which talks to the GCS itself, lives on, and
        the job with it. Ray's own end of such a node comes
        from its raylet, once it runs again; the daemon meanwhile counts the attempt lost, and
        a retry ran elsewhere while this one still did. So the node fences itself. A check
        that fails (the head away, slow) is no verdict: the job goes on, as it does while the
        head is away (docs/cluster.md)."""
        gcs = getattr(ray._private.worker.global_worker, "gcs_client", None)
        if gcs is None:  # (not in a Ray worker: nothing to ask)
            return
        node = ray.NodeID.from_hex(self.node_id)
        while True:
            time.sleep(NODE_CHECK_EVERY)
            try:
                alive = gcs.check_alive([node], timeout=NODE_CHECK_EVERY)
            except Exception:  # (RpcError, a deadline): no answer, no verdict
                continue
            if alive == [False]:
                break
        # (to the worker's log: the daemon has counted the attempt lost already)
        sys.stderr.write(f"gpuherd: Ray counts node {self.node_id} dead: the job is killed\n")
        sys.stderr.flush()
        if self._status() is not None:  # (no supervisor left to remove the folder)
            shutil.rmtree(self.folder, ignore_errors=True)
        os._exit(1)  # (Ray's own exit asks the raylet, which may be frozen)

    def _leader(self) -> int | None:
        try:
            return int((self.folder / "pid").read_text().strip())
        except (OSError, ValueError):
            return None

    def _await_start(self) -> int | None:
        """The pid of the command's leader once the supervisor has started it; None once the
        job has ended (or never started: a missing folder), or after START_WAIT s."""
        deadline = time.monotonic() + START_WAIT
        while (leader := self._leader()) is None and self._status() is None:
            if time.monotonic() >= deadline:
                return None
            time.sleep(0.01)
        return leader

    def _descendants(self) -> list[psutil.Process]:
        try:
            return list(self._supervisor.children(recursive=True))
        except psutil.Error:
            return []

    def _age(self) -> float | None:
        """Seconds since the supervisor wrote the exit status (on this node's clock)."""
        try:
            return max(0.0, time.time() - (self.folder / "exit_status").stat().st_mtime)
        except OSError:
            return None

    def _recorded(self) -> int | None:
        try:
            return int((self.folder / "exit_status").read_text().strip())
        except (OSError, ValueError):
            return None

    def _status(self) -> int | None:
        status = self._recorded()
        if status is not None:
            return status
        try:
            alive = self._supervisor.status() != psutil.STATUS_ZOMBIE
        except psutil.Error:
            alive = False
        if alive:
            return None
        # Gone: it may have written the status just before exiting; else none will come.
        status = self._recorded()
        return -1 if status is None else status

    def _read(self, name: str, offset: int) -> bytes:
        try:
            with open(self.folder / name, "rb") as f:
                f.seek(offset)
                return f.read(CHUNK)
        except OSError:
            return b""
