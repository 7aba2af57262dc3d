"""How each tool is given a batch of jobs on GPUs 0-3, and when it has finished them.

`run(work, jobs_file)` returns (t0, t_done) as wall-clock times: t0 just before the tool is
given the work (one-shot tools: before they are started), t_done once every job is over
(one-shot tools: when they exit; queues: when their way of waiting, or the record file, says
so). Servers (the gpuherd daemon, task-spooler, Ray) are started by `setup` and stopped by
`teardown`, by handle or pid, never by name.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import psutil

from gpuherd.client import Client
from harness.common import (
    GPUS,
    fresh_dir,
    gpuherd_cmd,
    herd_env,
    herd_python,
    kill_tree,
    unused_dir,
    wait_lines,
    workdir,
)
from harness.install import Peer
from harness.jobs import Work

GPU_LIST = [str(g) for g in GPUS]
TIMEOUT = 900.0


class ToolError(Exception):
    pass


class Tool:
    name = ""
    label = ""
    workloads: tuple[str, ...] = ("W1", "W2", "W3")
    notes: list[str]
    fresh_each_run = False
    """Start the tool's server for each run alone (Ray, gflow), not once for the whole run."""

    def setup(self) -> None:
        pass

    def teardown(self) -> None:
        pass

    def run(self, work: Work, jobs_file: Path) -> tuple[float, float]:
        raise NotImplementedError

    def oneshot(
        self,
        cmd: list[str],
        jobs_file: Path | None,
        env: dict[str, str] | None = None,
        timeout: float = TIMEOUT,
    ) -> tuple[float, float]:
        log = workdir() / "logs" / f"{self.name}.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        stdin = open(jobs_file) if jobs_file else subprocess.DEVNULL  # noqa: SIM115
        with open(log, "w") as out:
            t0 = time.time()
            proc = subprocess.Popen(cmd, stdin=stdin, stdout=out, stderr=subprocess.STDOUT, env=env)
            try:
                code = proc.wait(timeout)
            except subprocess.TimeoutExpired:
                kill_tree(proc.pid)
                proc.wait()
                raise ToolError(f"did not finish within {timeout:.0f}s") from None
            finally:
                if jobs_file:
                    stdin.close()  # type: ignore[union-attr]
            t1 = time.time()
        if code != 0:
            tail = log.read_text(errors="replace").strip().splitlines()[-1:] or [""]
            raise ToolError(f"exit status {code}: {tail[0][:200]}")
        return t0, t1


class Xargs(Tool):
    name, label = "xargs", "xargs -P 4 sh -c (floor)"

    def run(self, work: Work, jobs_file: Path) -> tuple[float, float]:
        return self.oneshot(["xargs", "-d", "\n", "-P", "4", "-I{}", "sh", "-c", "{}"], jobs_file)


class Python4(Tool):
    name, label = "python4", "4-thread Python scheduler"

    def run(self, work: Work, jobs_file: Path) -> tuple[float, float]:
        script = Path(__file__).with_name("python4.py")
        return self.oneshot([herd_python(), str(script), *GPU_LIST], jobs_file)


class OnTmpfs(Tool):
    """A tool whose job folders may go to tmpfs (`on_tmpfs`), W1 only: on this machine's ext4
    each inode made in a new folder costs ~0.2 ms of system CPU (benchmarks/README.md, "The
    file system's share"), so the same tool with its folders in memory tells the scheduler's
    own cost from the file system's."""

    def __init__(self, on_tmpfs: bool = False) -> None:
        self.tmpfs: Path | None = None
        if on_tmpfs:
            self.name += "-tmpfs"
            self.label += ", its folders on tmpfs (/dev/shm)"
            self.workloads = ("W1",)

    def setup(self) -> None:
        if self.name.endswith("-tmpfs"):
            self.tmpfs = Path(tempfile.mkdtemp(prefix="gpuherd-bench-", dir="/dev/shm"))

    def teardown(self) -> None:
        if self.tmpfs is not None:
            shutil.rmtree(self.tmpfs, ignore_errors=True)
            self.tmpfs = None

    def out_dir(self, prefix: str) -> Path:
        # A new folder per run: deleting the last run's 2,000 job folders just before this one
        # would make ext4 slower at creating this run's (it scans recently freed inodes).
        return unused_dir((self.tmpfs or workdir()) / prefix)


class Python4Records(OnTmpfs):
    name, label = "python4-records", "4-thread Python scheduler that records each job (floor)"
    workloads = ("W1",)

    def run(self, work: Work, jobs_file: Path) -> tuple[float, float]:
        script = Path(__file__).with_name("python4_records.py")
        out = self.out_dir("records-out")
        return self.oneshot([herd_python(), str(script), str(out), *GPU_LIST], jobs_file)


class HerdRun(OnTmpfs):
    name, label = "gpuherd-run", "gpuherd run"

    def __init__(
        self,
        extra: tuple[str, ...] = (),
        name: str = "",
        label: str = "",
        rerun: bool = False,
        on_tmpfs: bool = False,
    ) -> None:
        super().__init__(on_tmpfs)
        self.extra = extra
        self.name, self.label = name or self.name, label or self.label
        self.rerun = rerun
        """Run the jobs once untimed first, and time a second run given the first's folder
        (`--order longest-first --times-from`: the run times are known from earlier runs)."""

    def run(self, work: Work, jobs_file: Path) -> tuple[float, float]:
        extra = self.extra
        if self.rerun:
            earlier = self._once(jobs_file, extra)[2]
            work.record.write_text("")  # only the timed run's stamps count
            extra = (*extra, "--times-from", str(earlier))
        return self._once(jobs_file, extra)[:2]

    def _once(self, jobs_file: Path, extra: tuple[str, ...]) -> tuple[float, float, Path]:
        out = self.out_dir("herd-run-out")  # (removed with the run's work folder, or tmpfs)
        gpus = ["--fake-gpus", "4"] if _fake_needed() else ["--gpus", ",".join(GPU_LIST)]
        cmd = [*gpuherd_cmd(), "run", *gpus, *extra, "--output-dir", str(out)]
        return (*self.oneshot([*cmd, str(jobs_file)], None), out)


def _fake_needed() -> bool:
    """Without a driver `--gpus 0,1,2,3` has nothing to probe: use `--fake-gpus 4` (same ids)."""
    return not Path("/dev/nvidiactl").exists()


class HerdDaemon(Tool):
    name, label = "gpuherd-daemon", "gpuherd daemon"

    def __init__(self, gpus: int = 4, home: Path | None = None) -> None:
        self.home = home or workdir() / "herd-daemon"
        self.gpus = gpus
        self.client: Client | None = None
        self.pid = 0

    def setup(self) -> None:
        fresh_dir(self.home)
        env = herd_env(self.home)
        subprocess.run(
            [*gpuherd_cmd(), "daemon", "start", "--fake-gpus", str(self.gpus)],
            env=env,
            check=True,
            capture_output=True,
        )
        self.client = Client(self.home, timeout=TIMEOUT)
        self.pid = int(self.client.get("/daemon")["pid"])

    def teardown(self) -> None:
        if self.client is None:
            return
        subprocess.run(
            [*gpuherd_cmd(), "daemon", "stop", "--kill"],
            env=herd_env(self.home),
            capture_output=True,
            timeout=120,
        )
        self.client = None

    def run(self, work: Work, jobs_file: Path) -> tuple[float, float]:
        assert self.client is not None
        env, cwd = dict(os.environ), str(workdir())
        t0 = time.time()
        # The environment once for the batch, as `gpuherd submit --file` sends it.
        jobs = [{"command": ln, "cwd": cwd, "env": None} for ln in work.lines]
        ids = self.client.post("/jobs", {"jobs": jobs, "env": env})["ids"]
        deadline = time.monotonic() + TIMEOUT
        while not self.client.get("/jobs/wait", ids=ids, timeout=30)["done"]:
            if time.monotonic() > deadline:
                raise ToolError("jobs did not finish in time")
        return t0, time.time()


class HerdSweepLpt(HerdDaemon):
    """W2 as a sweep whose run times are known from earlier points (the issue's case for
    `--order longest-first`): the jobs as the points of one sweep, submitted once untimed,
    then again (`force`) with `order="longest-first"`, timed from that second submission."""

    name = "gpuherd-sweep-lpt"
    label = "gpuherd daemon, sweep --order longest-first (times from the sweep's first run)"
    workloads = ("W2",)

    def __init__(self) -> None:
        super().__init__(home=workdir() / "herd-sweep")
        self.runs = 0

    def run(self, work: Work, jobs_file: Path) -> tuple[float, float]:
        self.runs += 1
        name, folder = f"w2-{self.runs}", workdir() / "herd-sweep-out" / f"w2-{self.runs}"
        self._sweep(name, folder, work.lines, order="given", force=False)
        work.record.write_text("")  # only the timed submission's stamps count
        t0 = time.time()
        self._sweep(name, folder, work.lines, order="longest-first", force=True)
        return t0, time.time()

    def _sweep(
        self, name: str, folder: Path, lines: tuple[str, ...], order: str, force: bool
    ) -> None:
        from gpuherd.pyapi import Herd  # the harness's own gpuherd: the repository's

        assert self.client is not None
        sweep = Herd(self.client).sweep(
            "eval {line}",  # each point's value, quoted by the sweep, is one job line
            {"line": list(lines)},
            name=name,
            results_dir=folder,
            order=order,
            force=force,
            cwd=workdir(),
        )
        ids = sweep.ids
        deadline = time.monotonic() + TIMEOUT
        while not self.client.get("/jobs/wait", ids=ids, timeout=30)["done"]:
            if time.monotonic() > deadline:
                raise ToolError("the sweep's points did not finish in time")


class SimpleGpuScheduler(Tool):
    name, label = "simple-gpu-scheduler", "simple-gpu-scheduler 0.1.4"

    def __init__(self, peer: Peer) -> None:
        self.bin = Path(peer.paths["bin"]) / "simple_gpu_scheduler"

    def run(self, work: Work, jobs_file: Path) -> tuple[float, float]:
        return self.oneshot([str(self.bin), "--gpus", *GPU_LIST], jobs_file)


class Parallel(Tool):
    name, label = "parallel", "GNU parallel"
    TEMPLATE = "export CUDA_VISIBLE_DEVICES=$(({%}-1)); eval {}"

    def __init__(self, peer: Peer) -> None:
        self.bin = peer.paths["bin"]
        self.env = {**os.environ, "HOME": str(workdir() / "parallel-home")}

    def setup(self) -> None:
        Path(self.env["HOME"]).mkdir(parents=True, exist_ok=True)

    def run(self, work: Work, jobs_file: Path) -> tuple[float, float]:
        cmd = [self.bin, "-j", "4", "--will-cite", self.TEMPLATE]
        return self.oneshot(cmd, jobs_file, self.env)


class Gpusched(Tool):
    name, label = "gpusched", "gpusched --sim 4 --poll 0.05"

    def __init__(self, peer: Peer) -> None:
        self.bin = Path(peer.paths["bin"]) / "gpusched"

    def run(self, work: Work, jobs_file: Path) -> tuple[float, float]:
        logs = unused_dir(workdir() / "gpusched-logs")  # as for gpuherd run: never a fresh delete
        env = {**os.environ, "GPUSCHED_SIM_DIR": str(logs / "sim")}
        cmd = [
            str(self.bin),
            "--sim",
            "4",
            "--gpus",
            ",".join(GPU_LIST),
            "--poll",
            "0.05",
            "--log-dir",
            str(logs),
            str(jobs_file),
        ]
        return self.oneshot(cmd, None, env)


class TaskSpooler(Tool):
    """One tsp server with 4 slots and its own TS_SOCKET; jobs are `tsp -n sh -c LINE`."""

    name, label = "task-spooler", "task-spooler (tsp -S 4)"

    def __init__(self, peer: Peer) -> None:
        self.bin = peer.paths["bin"]
        self.dir = workdir() / "tsp"
        self.env = {**os.environ, "TS_SOCKET": str(self.dir / "socket"), "TMPDIR": str(self.dir)}
        self.server: int | None = None

    def setup(self) -> None:
        fresh_dir(self.dir)
        subprocess.run([self.bin, "-S", "4"], env=self.env, check=True)
        self.server = _socket_owner(Path(self.env["TS_SOCKET"]))

    def teardown(self) -> None:
        if self.server is not None:
            kill_tree(self.server)
            self.server = None

    def run(self, work: Work, jobs_file: Path) -> tuple[float, float]:
        subprocess.run([self.bin, "-C"], env=self.env, check=True)
        submit = ["xargs", "-d", "\n", "-I{}", self.bin, "-n", "sh", "-c", "{}"]
        t0 = time.time()
        with open(jobs_file) as stdin:
            subprocess.run(
                submit,
                stdin=stdin,
                env=self.env,
                check=True,
                stdout=subprocess.DEVNULL,
                timeout=TIMEOUT,
            )
        t1 = wait_lines(work.record, work.n, TIMEOUT, work.marker)
        if t1 is None:
            raise ToolError("not every job finished")
        return t0, t1


def _socket_owner(path: Path) -> int | None:
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        for conn in psutil.net_connections(kind="unix"):
            if conn.laddr == str(path) and conn.pid:
                return int(conn.pid)
        time.sleep(0.05)
    return None


class Ray(Tool):
    """A persistent driver (harness/ray_driver.py in the Ray venv) with 4 fake GPUs."""

    fresh_each_run = True

    def __init__(self, peer: Peer, mode: str = "reuse") -> None:
        self.python = str(Path(peer.paths["bin"]) / "python")
        self.mode = mode
        self.name = "ray" if mode == "reuse" else "ray-default"
        self.label = "Ray 2.60 (max_calls=0)" if mode == "reuse" else "Ray 2.60 (default task)"
        self.workloads = ("W1", "W2", "W3") if mode == "reuse" else ("W2",)
        self.proc: subprocess.Popen[str] | None = None
        self.init_seconds = 0.0

    def setup(self) -> None:
        tmp = workdir() / "ray"
        if len(str(tmp)) > 40:  # Ray's socket paths must stay under 107 characters
            tmp = Path("/tmp") / f"gpuherd-bench-ray-{os.getpid()}"
        tmp.mkdir(parents=True, exist_ok=True)
        self.tmp = tmp
        log = open(workdir() / "logs" / f"{self.name}.log", "w")  # noqa: SIM115
        script = str(Path(__file__).with_name("ray_driver.py"))
        self.proc = subprocess.Popen(
            [self.python, script],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
            env={**os.environ, "BENCH_RAY_TMP": str(tmp), "RAY_AUTH_MODE": "disabled"},
        )
        self.init_seconds = float(self._read()["init"])

    def _read(self) -> dict[str, float]:
        assert self.proc is not None and self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise ToolError(f"the Ray driver exited (see {workdir()}/logs/{self.name}.log)")
        return json.loads(line)  # type: ignore[no-any-return]

    def request(self, lines: tuple[str, ...]) -> dict[str, float]:
        """Run the lines as tasks; the driver's times: t0, submitted (all .remote() done), t1."""
        assert self.proc is not None and self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"op": "run", "lines": lines, "mode": self.mode}) + "\n")
        self.proc.stdin.flush()
        return self._read()

    def run(self, work: Work, jobs_file: Path) -> tuple[float, float]:
        res = self.request(work.lines)
        return res["t0"], res["t1"]

    def teardown(self) -> None:
        if self.proc is None:
            return
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.write(json.dumps({"op": "quit"}) + "\n")
            self.proc.stdin.flush()
            self.proc.wait(timeout=60)
        except (OSError, subprocess.TimeoutExpired):
            kill_tree(self.proc.pid)
        self.proc = None
        shutil.rmtree(self.tmp, ignore_errors=True)

    def node_pids(self) -> list[int]:
        if self.proc is None:
            return []
        return [p.pid for p in psutil.Process(self.proc.pid).children(recursive=True)]
