"""Shared fixtures: a real daemon in a temporary GPUHERD_HOME, driven through the console script."""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import json
import os
import pty
import select
import shlex
import signal
import socket
import struct
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import psutil
import pytest

import forks
from gpuherd.client import Client

if TYPE_CHECKING:
    from gpuherd.engine import Engine
    from gpuherd.executors.base import Executor
    from gpuherd.service import Service
    from gpuherd.store import Store
    from gpuherd.wire import SubmitItem

# A developer's GPUHERD_FAKE_GPUS (the docs suggest exporting it) would give every daemon a
# test starts without --fake-gpus (and every `gpuherd run`, every connect()) that developer's
# GPUs, changing what other tests see: gone from this process, and so from the environment
# that every fixture copies and every process a test starts inherits. Tests of the variable
# set it themselves.
os.environ.pop("GPUHERD_FAKE_GPUS", None)

NO_SUCH_PIDS = (4_194_401, 4_194_402, 4_194_403)
"""Pids past Linux's largest (PID_MAX_LIMIT, 2**22), for fake GPUs' foreign processes: no
process can have one, so their user is never readable (`?`), as another container's are. A
small made-up pid (4242) names whatever process has it on the machine running the tests."""


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def pytest_sessionstart(session: pytest.Session) -> None:
    """Compile the package once: the tests start hundreds of `gpuherd` processes, and where
    PYTHONDONTWRITEBYTECODE is set (as on these machines) each one compiled every module it
    imports (~12% of the suite's time)."""
    import compileall

    import gpuherd

    compileall.compile_dir(Path(gpuherd.__file__).parent, quiet=2)


def pytest_sessionfinish(session: pytest.Session) -> None:
    forks.stop()  # this worker's fork server, if a test started it


_BREAKPOINT_HOOK = os.environ.get("PYTHONBREAKPOINT")


def forget_rays_breakpoint_hook() -> None:
    """Put PYTHONBREAKPOINT back as pytest started with it. `ray.init` in this process (the
    Ray tests' cluster) sets it in os.environ for good (its debugger's hook, for a
    breakpoint() in the driver: the tests call none), and every Herd copies os.environ: the
    variable then differs from the fork server's (an interpreter setting, forks.py), and every
    later CLI call and daemon start of this worker, of any module, ran as a real process
    (1,559 calls in a full run, ~0.1 CPU-s more each, ~0.6 more a start)."""
    if os.environ.get("PYTHONBREAKPOINT") != _BREAKPOINT_HOOK:
        if _BREAKPOINT_HOOK is None:
            del os.environ["PYTHONBREAKPOINT"]
        else:
            os.environ["PYTHONBREAKPOINT"] = _BREAKPOINT_HOOK


def pytest_runtest_setup(item: pytest.Item) -> None:
    """SIGTERM (a CI time limit, a closed terminal) ends the run as Ctrl-C does, so fixture
    teardown still stops the daemons and jobs the tests started; by default it ended pytest
    at once and left them running (they lead sessions of their own). Set before every test:
    an in-process `gpuherd run` puts SIGTERM back to its default when it ends."""
    forget_rays_breakpoint_hook()
    if signal.getsignal(signal.SIGTERM) is not _interrupt:
        signal.signal(signal.SIGTERM, _interrupt)
    # The processes a test starts inherit this worker's ignored signals and its signal mask.
    # In 2 of 4 full runs, `gpuherd run` and `submit --wait` were deaf to a test's Ctrl-C and
    # hangup, as under a shell's `nohup`/`&`; a library an earlier test used inside the worker
    # (Ray, Playwright) leaving SIGINT or SIGHUP ignored or blocked is the suspect (not caught
    # in the act). Start each test as a terminal does: both at their defaults, none blocked.
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if signal.getsignal(signal.SIGHUP) is signal.SIG_IGN:
        signal.signal(signal.SIGHUP, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGHUP, signal.SIGTERM})


def need(module: str, extra: str) -> None:
    """Import an optional dependency, or skip the module's tests without it. CI installs every
    extra (.ci/run), so there a missing one is a failure, never a silent skip."""
    if os.environ.get("CI"):
        __import__(module)
    else:
        pytest.importorskip(module, reason=f"{module} is not installed (pip install '.[{extra}]')")


def load_stretch() -> float:
    """How much longer than a test says a wait for something that will happen may take now:
    1 up to a load average of twice the cores, then the load over that, at most 3. CI runs
    beside other suites on 2 cores (load 4-12, and up to 39 seen); a wait is a guard against
    a hang, not a measure of speed (benchmarks/ measures), so a loaded machine gets longer."""
    cores = os.cpu_count() or 1
    return min(3.0, max(1.0, os.getloadavg()[0] / (2 * cores)))


def wait_for(predicate: Callable[[], Any], timeout: float = 15.0, what: str = "condition") -> Any:
    """Poll `predicate` until it returns something truthy; fail the test after `timeout`
    (stretched on a loaded machine: load_stretch)."""
    stretch = load_stretch()
    deadline = time.monotonic() + timeout * stretch
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            waited = (
                f"{timeout * stretch:.0f}s (load {os.getloadavg()[0]:.1f})"
                if stretch > 1
                else f"{timeout}s"
            )
            raise AssertionError(f"timed out after {waited} waiting for {what}")
        time.sleep(0.02)


def busy_port(port: int = 0) -> socket.socket:
    """A TCP port of 127.0.0.1 taken (listened on) by the test: a --listen there cannot bind
    (`port` 0: a free one)."""
    taken = socket.socket()
    try:
        taken.bind(("127.0.0.1", port))
        taken.listen()
    except OSError:
        taken.close()
        raise
    return taken


def wait_for_long_poll(process: psutil.Process, held: float = 2.0) -> None:
    """Until `process` (a `gpuherd wait`, a `submit --wait`) holds its long poll open: a
    connection to the daemon it has held for `held` seconds. Any connection did not do: the
    command's asks before its wait (the held jobs' listing, the submission) are connections
    too, and a daemon stopped during one was gone before the wait began (its "went away" note
    never came: 2 in 12 of test_restart's, at a load of 12)."""
    seen: dict[str, float] = {}

    def held_open() -> bool:
        now, sockets = time.monotonic(), set()
        for connection in process.net_connections(kind="unix"):
            with contextlib.suppress(OSError):  # (closed meanwhile)
                sockets.add(os.readlink(f"/proc/{process.pid}/fd/{connection.fd}"))
        for closed in set(seen) - sockets:
            del seen[closed]
        for socket_ in sockets:
            seen.setdefault(socket_, now)
        return any(now - since >= held for since in seen.values())

    wait_for(held_open, what="the wait's long poll")


def wal_index(database: Path) -> tuple[int, int]:
    """(frames in herd.db's write-ahead log, frames copied into the database) as the WAL
    index says: mxFrame of the index header (offset 16), nBackfill of the checkpoint info
    after the header's two copies (offset 96), in the machine's byte order (the `-shm` file's
    layout: sqlite.org/walformat.html). Read, never checkpointed, by the test."""
    head = (database.parent / (database.name + "-shm")).read_bytes()[:100]
    return struct.unpack_from("=I", head, 16)[0], struct.unpack_from("=I", head, 96)[0]


def checkpointed(database: Path) -> bool:
    """Whether all the log holds is in the database file (the daemon checkpoints a quiet
    queue's log after a while: a test about herd.db's own bytes waits for that)."""
    frames, copied = wal_index(database)
    return frames == copied


def stays(predicate: Callable[[], Any], seconds: float = 0.5, what: str = "condition") -> None:
    """Check that `predicate` holds throughout a short window (for "nothing happens" claims).

    Use only where no event can tell that the thing did not happen; prefer a witness job.
    """
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert predicate(), f"{what} stopped holding within {seconds}s"
        time.sleep(0.05)


def hooks_log(home: Path) -> str:
    """The home's hooks.log, "" while there is none. Read without a look first: the daemon
    renames it aside at 10 MiB, between a look and a read (a look at it failed a test so)."""
    try:
        return (home / "hooks.log").read_text()
    except FileNotFoundError:
        return ""


def exited(process: psutil.Process) -> bool:
    """Has `process` exited: gone, or a zombie (its files and locks are released)?

    A zombie counts: in a container the reaper (pid 1) may take seconds to reap it. But only
    once it is its last thread: a SIGKILLed daemon's main thread is shown a zombie while its
    other threads still exit, its files (its socket, which still took a connection) open
    until the last one has.
    """
    try:
        return process.status() == psutil.STATUS_ZOMBIE and process.num_threads() <= 1
    except psutil.NoSuchProcess:
        return True


def wait_dead(process: psutil.Process, timeout: float = 10.0) -> None:
    """Wait until `process` has exited (see `exited`)."""
    wait_for(lambda: exited(process), timeout, f"process {process.pid} to exit")


class Herd:
    """One GPUHERD_HOME with helpers to run the CLI and start, stop or crash its daemon."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.env = {**os.environ, "GPUHERD_HOME": str(home)}
        self.env.pop("XDG_RUNTIME_DIR", None)
        self.client = Client(home)

    def cli(
        self,
        *args: str,
        check: bool = True,
        input: str | None = None,
        timeout: float = 60,
        env: dict[str, str] | None = None,
        cwd: Path | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """Run `python -m gpuherd ARGS`; `env` replaces the whole environment, `cwd` the folder.
        Forked from this worker's fork server where that behaves as a new process (forks.py)."""
        proc = forks.gpuherd(
            list(args),
            env=env or self.env,
            cwd=cwd or self.home.parent,
            input=input,
            timeout=timeout,
        )
        if check and proc.returncode != 0:
            raise AssertionError(
                f"gpuherd {' '.join(args)} failed ({proc.returncode}): {proc.stderr}{proc.stdout}"
            )
        return proc

    def usage_error(self, *args: str) -> str:
        """`gpuherd ARGS`, a mistake of the command line: exit 2 and one error line, which is
        returned."""
        refused = self.cli(*args, check=False)
        assert refused.returncode == 2, refused
        assert refused.stderr.startswith("gpuherd: error: "), refused.stderr
        assert len(refused.stderr.splitlines()) == 1, refused.stderr
        return refused.stderr

    def popen(self, *args: str) -> subprocess.Popen[bytes]:
        """`python -m gpuherd ARGS` left running, its output piped (read it, then end it)."""
        return subprocess.Popen(
            [sys.executable, "-m", "gpuherd", *args],
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )

    def json(self, *args: str) -> Any:
        return json.loads(self.cli(*args, "--json").stdout)

    def start(self, *options: str) -> None:
        """`gpuherd daemon start OPTIONS`: forked, its daemon forked too (forks_child.py)."""
        self.cli("daemon", "start", *options)

    @property
    def pid(self) -> int:
        return int(self.client.get("/daemon")["pid"])

    def kill9(self) -> None:
        """Crash the daemon (SIGKILL) and wait until it is gone."""
        process = psutil.Process(self.pid)
        process.send_signal(signal.SIGKILL)
        wait_dead(process)

    def kill9_held(self) -> None:
        """Crash a daemon a test knob holds (SIGKILL), found by its lock file: held, it
        answers no request for its pid."""
        process = psutil.Process(int((self.home / "daemon.lock").read_text().split()[0]))
        assert "gpuherd.daemon" in process.cmdline()
        process.send_signal(signal.SIGKILL)
        wait_dead(process)

    def submit(self, *args: str) -> int:
        return int(self.cli("submit", "-q", *args).stdout.split()[0])

    def running_until(self, go: Path) -> int:
        """A job that runs until the file `go` exists, once it runs: its id."""
        job = self.submit(f"while [ ! -e {go} ]; do sleep 0.02; done")
        self.wait_state(job, "running")
        return job

    def submit_lines(self, lines: list[str], *args: str) -> list[int]:
        """Submit one job per line in a single `submit --file -` call."""
        out = self.cli("submit", "-q", *args, "--file", "-", input="\n".join(lines) + "\n")
        return [int(word) for word in out.stdout.split()]

    def ls_all(self) -> list[dict[str, Any]]:
        return list(self.json("ls", "--all"))

    def all_jobs(self) -> list[dict[str, Any]]:
        """What `ls_all` returns (`ls --all --json` prints the API's list as it is), asked in
        this process: for a check that a refused command changed nothing, without the two CLI
        starts (~0.1 s of CPU each) around every refusal."""
        return list(self.client.get("/jobs", all=True)["jobs"])

    def page(self, path: str) -> str:
        """A dashboard page's HTML, asked over the home's socket (no token needed there)."""
        conn = UnixConnection(self.client.socket_path, timeout=15)
        try:
            conn.request("GET", path)
            return conn.getresponse().read().decode()
        finally:
            conn.close()

    def request(
        self, method: str, path: str, body: str | None = None
    ) -> tuple[int, dict[str, str], bytes]:
        """A raw HTTP request over the home's socket, `body` sent as written (as JSON): its
        status, headers (lower-case names) and body, for what the Client would not send."""
        conn = UnixConnection(self.client.socket_path, timeout=15)
        try:
            headers = {} if body is None else {"Content-Type": "application/json"}
            conn.request(method, path, body=body, headers=headers)
            response = conn.getresponse()
            heads = {k.lower(): v for k, v in response.headers.items()}
            return response.status, heads, response.read()
        finally:
            conn.close()

    def job(self, job_id: int) -> dict[str, Any]:
        return dict(self.client.get(f"/jobs/{job_id}"))

    def wait_state(self, job_id: int, *states: str, timeout: float = 15.0) -> dict[str, Any]:
        seen: dict[str, Any] = {}

        def reached() -> dict[str, Any] | None:
            seen.update(self.job(job_id))
            return dict(seen) if seen["state"] in states else None

        try:
            return dict(wait_for(reached, timeout, f"job {job_id} to be {'/'.join(states)}"))
        except AssertionError as exc:  # say where it was instead, and how it got there
            events = [(e.get("event"), e.get("detail")) for e in seen.get("events", [])][-8:]
            where = f"{seen.get('state')} ({seen.get('outcome')}; {seen.get('message')})"
            raise AssertionError(f"{exc}: it is {where}, last events {events}") from None

    def _daemons(self) -> list[psutil.Process]:
        """This home's daemon processes: the pid in its lock file, and any process whose
        command line names the home. Never asked over HTTP: a daemon that hangs, or is dying,
        would hang or fail the cleanup, and be left running."""
        found = []
        for proc in psutil.process_iter():
            try:
                cmdline = proc.cmdline()
            # (OSError: psutil let a /proc/PID/cmdline gone mid-read through, as the process
            # ended between its listing and the read: seen in CI)
            except (psutil.Error, OSError):
                continue
            if "gpuherd.daemon" in cmdline and str(self.home) in cmdline:
                found.append(proc)
        try:
            locked = psutil.Process(int((self.home / "daemon.lock").read_text().split()[0]))
            if "gpuherd.daemon" in locked.cmdline() and locked not in found:
                found.append(locked)
        except (OSError, ValueError, IndexError, psutil.Error):
            pass  # no lock file, or its pid is gone (or now another program's)
        return found

    def is_up(self) -> bool:
        """Does a daemon listen on this home's socket? (No HTTP: works while it stops.)"""
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
            try:
                probe.connect(str(self.client.socket_path))
            except OSError:
                return False
        return True

    def cleanup(self) -> None:
        """Stop the daemon and every process of every job this home started."""
        for process in self._daemons():
            try:
                process.kill()
                wait_dead(process)
            except psutil.NoSuchProcess:
                pass
        for proc in psutil.process_iter():
            try:
                if proc.environ().get("GPUHERD_JOB_DIR", "").startswith(str(self.home)):
                    os.killpg(proc.pid, signal.SIGKILL) if os.getpgid(
                        proc.pid
                    ) == proc.pid else proc.kill()
            except (psutil.Error, OSError):
                continue


@contextmanager
def homes_on_one_socket(root: Path) -> Iterator[tuple[Herd, Herd]]:
    """Two homes (root/a, root/b) whose daemons would listen on one GPUHERD_SOCKET, none
    started yet; both stopped after."""
    first, second = Herd(root / "a"), Herd(root / "b")
    try:
        for herd in (first, second):
            herd.env["GPUHERD_SOCKET"] = str(root / "shared.sock")
        yield first, second
    finally:
        first.cleanup()
        second.cleanup()


def group_members(pgid: int) -> list[int]:
    """Pids of the live (non-zombie) processes of process group `pgid`.

    Zombies are left out: they are dead, and in a container nobody may ever reap them.
    """
    found = []
    for proc in psutil.process_iter(["status"]):
        try:
            if proc.info["status"] != psutil.STATUS_ZOMBIE and os.getpgid(proc.pid) == pgid:
                found.append(proc.pid)
        except (psutil.Error, OSError):
            continue
    return found


def one_gpu_engine(home: Path, store: Store, executor: Executor) -> Engine:
    """An engine built as the daemon builds it, on one fake GPU, with its job folders under
    `home` (call it inside the running event loop; `store` has one device of one slot)."""
    from gpuherd.core.model import Policy
    from gpuherd.devices import DeviceTable
    from gpuherd.engine import Engine
    from gpuherd.gpus.fake import FakeGpu, FakeProbe
    from gpuherd.jobfiles import Layout

    store.replace_devices({0: 1})
    return Engine(
        store, DeviceTable(store, FakeProbe([FakeGpu()])), executor, Layout.for_home(home), Policy()
    )


@asynccontextmanager
async def serving(engine: Engine, home: Path) -> AsyncIterator[Service]:
    """Inside the running event loop: the engine started as the daemon starts it, and a
    Service on it (homed in `home`) to submit, kill or pause through; the engine is closed
    on the way out, whatever happened inside (jobs still running are left running, for the
    next engine to find, as Engine.close leaves them)."""
    from gpuherd.service import Service

    service = Service(engine, home)
    engine.start()
    try:
        yield service
    finally:
        engine.close()


def item(home: Path, command: str, **options: Any) -> SubmitItem:
    """A job of `command` for Service.submit, run in `home` with this process's environment;
    `options` are SubmitItem's other fields (retries=1, begin=...)."""
    from gpuherd.wire import SubmitItem

    return SubmitItem(command=command, cwd=str(home), env=dict(os.environ), **options)


async def settled(store: Store, job_id: int, timeout: float = 10.0) -> None:
    """Inside an in-process engine's loop: wait until the job succeeded, or `timeout` passed
    (the caller asserts the state, so a failure shows the job as it is)."""
    from gpuherd.core.states import JobState

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = store.get_job(job_id)
        if job is not None and job.state is JobState.SUCCEEDED:
            return
        await asyncio.sleep(0.05)


RECORDER_SCRIPT = r'''
"""A job that records what it saw: python3 record.py OUT [wait FILE] [sleep S] [exit N]."""
import json, os, sys, time

start = time.time()
out, rest = sys.argv[1], sys.argv[2:]
opts = dict(zip(rest[::2], rest[1::2]))
if "wait" in opts:
    with open(out + ".waiting", "a") as f:  # Recorder.waiting: this job has begun, and waits
        f.write(os.environ["GPUHERD_JOB_ID"] + "\n")
    while not os.path.exists(opts["wait"]):
        time.sleep(0.01)
if "sleep" in opts:
    time.sleep(float(opts["sleep"]))
record = {
    "id": int(os.environ["GPUHERD_JOB_ID"]),
    "attempt": int(os.environ["GPUHERD_ATTEMPT"]),
    "gpus": os.environ.get("CUDA_VISIBLE_DEVICES"),
    "start": start,
    "end": time.time(),
    "pid": os.getpid(),
    "pgid": os.getpgid(0),
}
fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
os.write(fd, (json.dumps(record) + "\n").encode())  # one write: lines never interleave
os.close(fd)
sys.exit(int(opts.get("exit", 0)))
'''


class Recorder:
    """Builds job commands that append what they saw (id, GPUs, times) to files in `folder`."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.script = folder / "record.py"
        self.script.write_text(RECORDER_SCRIPT)

    def path(self, name: str) -> Path:
        return self.folder / name

    def cmd(
        self,
        out: str,
        *,
        wait: str | None = None,
        sleep: float | None = None,
        exit: int | None = None,
    ) -> str:
        """A shell command line for a job that records into `out` (a file name in folder)."""
        args = [sys.executable, str(self.script), str(self.path(out))]
        for key, value in (
            ("wait", wait and str(self.path(wait))),
            ("sleep", sleep),
            ("exit", exit),
        ):
            if value is not None:
                args += [key, str(value)]
        return shlex.join(args)

    def lines(self, out: str) -> list[dict[str, Any]]:
        try:
            text = self.path(out).read_text()
        except FileNotFoundError:
            return []
        return [json.loads(line) for line in text.splitlines()]

    def waiting(self, out: str) -> int:
        """How many jobs recording into `out` have started and wait for their file (a job
        can be running for the daemon some milliseconds before its own start stamp)."""
        try:
            return len(self.path(out + ".waiting").read_text().splitlines())
        except FileNotFoundError:
            return 0

    def go(self, name: str = "go") -> None:
        self.path(name).touch()


@pytest.fixture
def recorder(tmp_path: Path) -> Recorder:
    folder = tmp_path / "rec"
    folder.mkdir()
    return Recorder(folder)


def read_line(fd: int, buffer: bytearray, timeout: float = 15.0) -> bytes:
    """One line from a pipe's file descriptor, or fail after `timeout` (no blocking forever)."""
    deadline = time.monotonic() + timeout
    while b"\n" not in buffer:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            raise AssertionError(f"no full line within {timeout}s; got {bytes(buffer)!r}")
        chunk = os.read(fd, 4096)
        if not chunk:
            raise AssertionError(f"end of output before a full line; got {bytes(buffer)!r}")
        buffer += chunk
    line, _, rest = bytes(buffer).partition(b"\n")
    buffer[:] = rest
    return line


@pytest.fixture
def herd(tmp_path: Path) -> Iterator[Herd]:
    herd = Herd(tmp_path / "home")
    try:
        yield herd
    finally:
        herd.cleanup()


@pytest.fixture
def daemon(herd: Herd) -> Herd:
    """A running daemon with 4 fake GPUs (one slot each)."""
    herd.start("--fake-gpus", "4")
    return herd


@contextmanager
def started_once(factory: pytest.TempPathFactory, *options: str) -> Iterator[Herd]:
    """A daemon started with `options` in a home of its own, for a module-scoped fixture: one
    start for the module's tests instead of one each (~0.45 s of CPU per start)."""
    herd = Herd(factory.mktemp("shared") / "home")
    try:
        herd.start(*options)
        yield herd
    finally:
        herd.cleanup()


@contextmanager
def paused_with_a_held_job(factory: pytest.TempPathFactory) -> Iterator[Herd]:
    """A module's daemon (2 fake GPUs) whose queue is paused, job 1 held: for requests that
    must change nothing, checked against a queue that stays as it is."""
    with started_once(factory, "--fake-gpus", "2") as herd:
        herd.cli("pause")
        herd.submit("--hold", "--", "true")
        yield herd


@pytest.fixture(scope="module")
def module_daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Herd]:
    """One daemon with 4 fake GPUs for a module's tests (use it through `shared_daemon`)."""
    with started_once(tmp_path_factory, "--fake-gpus", "4") as herd:
        yield herd


@pytest.fixture
def shared_daemon(module_daemon: Herd) -> Iterator[Herd]:
    """The module's daemon (4 fake GPUs, one slot each), for a test that looks only at the
    jobs it submits (by their ids) and changes nothing daemon-wide: no queue pause, no
    restart or crash, no setting, no count or listing of the whole queue. A daemon start
    costs ~1 s, most tests' whole time. A test ends with every job it left unfinished
    killed (and ended), so each test finds the 4 GPUs free."""
    yield from reused(module_daemon, "--fake-gpus", "4")


def reused(herd: Herd, *options: str) -> Iterator[Herd]:
    """A module's daemon for one more test (started again with `options` if an earlier test
    stopped it); after the test, the queue resumed and every job it left unfinished killed
    (and ended)."""
    if not herd.is_up():  # an earlier test failed in a way that stopped it
        herd.cleanup()
        herd.start(*options)
    yield herd
    client = herd.client
    client.post("/queue/resume")

    def unfinished() -> list[int]:
        jobs = client.get("/jobs", all=True)["jobs"]
        return [j["id"] for j in jobs if j["state"] in ("queued", "held", "running", "paused")]

    if left := unfinished():
        client.post("/jobs/kill", {"ids": left})
        wait_for(lambda: not unfinished(), 30, "the test's jobs to end")


# ---- `gpuherd run`: a job script that records what it saw, and the run process ----------------

GPUHERD_BIN = str(Path(sys.executable).parent / "gpuherd")
MTIME_TICK = 0.01
"""How far a file's mtime (the kernel's coarse clock) may lag a time.time() stamp: an
attempt's `ended_at` is its `process` file's mtime, up to a scheduler tick (1-10 ms) before
the moment its shell wrote it, which may be before a stop's stamp."""

PROBE_SCRIPT = r'''
"""A `gpuherd run` job: python3 probe.py RECDIR NAME [barrier N] [wait FILE] [sleep S]
[exit N] [fail-attempts K]. Writes RECDIR/NAME.started at start (its pid), appends one JSON
line to RECDIR/records.jsonl at the end. Every wait gives up after 30 s (exit 3)."""
import json, os, sys, time

start = time.time()
rec, name, rest = sys.argv[1], sys.argv[2], sys.argv[3:]
opts = dict(zip(rest[::2], rest[1::2]))
with open(os.path.join(rec, name + ".started.tmp"), "w") as f:
    f.write(str(os.getpid()))
os.replace(os.path.join(rec, name + ".started.tmp"), os.path.join(rec, name + ".started"))


def wait(what, ready):
    deadline = time.monotonic() + 30
    while not ready():
        if time.monotonic() > deadline:
            print(f"probe {name}: gave up waiting for {what}", file=sys.stderr)
            sys.exit(3)
        time.sleep(0.01)


if "barrier" in opts:
    folder = os.path.join(rec, "barrier")
    os.makedirs(folder, exist_ok=True)
    open(os.path.join(folder, name), "w").close()
    wait("the barrier", lambda: len(os.listdir(folder)) >= int(opts["barrier"]))
if "wait" in opts:
    wait(opts["wait"], lambda: os.path.exists(opts["wait"]))
if "sleep" in opts:
    time.sleep(float(opts["sleep"]))
attempt = int(os.environ.get("GPUHERD_ATTEMPT", "0"))
code = int(opts.get("exit", 0))
if attempt <= int(opts.get("fail-attempts", -1)):
    code = 1
record = {
    "name": name,
    "argv": sys.argv[1:],
    "gpus": os.environ.get("CUDA_VISIBLE_DEVICES"),
    "job_dir": os.environ.get("GPUHERD_JOB_DIR"),
    "attempt": attempt,
    "probe_env": {k: v for k, v in os.environ.items() if k.startswith("PROBE_")},
    "start": start,
    "end": time.time(),
    "pid": os.getpid(),
    "pgid": os.getpgid(0),
    "exit": code,
}
fd = os.open(os.path.join(rec, "records.jsonl"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
os.write(fd, (json.dumps(record) + "\n").encode())  # one write: lines never interleave
os.close(fd)
sys.exit(code)
'''


class Probe:
    """Builds `gpuherd run` job lines that record what they saw into `folder`."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.folder = folder
        self.script = folder / "probe.py"
        self.script.write_text(PROBE_SCRIPT)

    def cmd(self, name: str, **opts: object) -> str:
        """A job line; options: barrier=N, wait=FILE-NAME (in folder), sleep=S, exit=N,
        fail_attempts=K."""
        args = [sys.executable, str(self.script), str(self.folder), name]
        for key, value in opts.items():
            if key == "wait":
                value = self.folder / str(value)
            args += [key.replace("_", "-"), str(value)]
        return shlex.join(args)

    def records(self) -> list[dict[str, Any]]:
        try:
            text = (self.folder / "records.jsonl").read_text()
        except FileNotFoundError:
            return []
        return [json.loads(line) for line in text.splitlines()]

    def by_name(self) -> dict[str, dict[str, Any]]:
        """The one record of each job name (fails if a job ran more than once)."""
        found: dict[str, dict[str, Any]] = {}
        for record in self.records():
            assert record["name"] not in found, f"job {record['name']} ran twice"
            found[record["name"]] = record
        return found

    def started(self, name: str) -> bool:
        return (self.folder / f"{name}.started").exists()

    def touch(self, name: str) -> None:
        (self.folder / name).touch()


@pytest.fixture
def probe(tmp_path: Path) -> Probe:
    return Probe(tmp_path / "probe")


def max_overlap(intervals: list[tuple[float, float]]) -> int:
    """The most intervals that were open at one instant (an end before a start at a tie)."""
    points = sorted([(s, 1) for s, _ in intervals] + [(e, -1) for _, e in intervals])
    most = now = 0
    for _, step in points:
        now += step
        most = max(most, now)
    return most


def retried_after(daemon: Herd, go: Path, say_after: bool = False) -> int:
    """A job of two attempts: each prints `start N` and waits for `go`; the first then fails
    (exit 3), the second succeeds (`after N` printed before the end with `say_after`)."""
    after = 'echo "after $GPUHERD_ATTEMPT"; ' if say_after else ""
    return daemon.submit(
        "--retries",
        "1",
        f'echo "start $GPUHERD_ATTEMPT"; while [ ! -e {go} ]; do sleep 0.02; done; '
        f'{after}[ "$GPUHERD_ATTEMPT" = 2 ] || exit 3',
    )


def kill_jobs_under(root: Path) -> None:
    """SIGKILL the process group of every job whose GPUHERD_JOB_DIR lies under `root`, and
    reap those that are this process's children (an engine run in-process spawned them): a
    job left to die later would be a zombie child of this pytest process, which a later test
    counting its children finds."""
    for proc in psutil.process_iter():
        try:
            if proc.environ().get("GPUHERD_JOB_DIR", "").startswith(str(root)):
                os.killpg(os.getpgid(proc.pid), signal.SIGKILL)
                if proc.ppid() == os.getpid():
                    os.waitpid(proc.pid, 0)
        except (psutil.Error, OSError):
            continue


@pytest.fixture
def work(daemon: Herd) -> Iterator[Path]:
    """The submitter's working folder beside the daemon's home; every job started there is
    killed at the end (a file may add what its jobs run: override `work`, asking for it)."""
    folder = daemon.home.parent / "work"
    folder.mkdir()
    try:
        yield folder
    finally:
        kill_jobs_under(folder)


@pytest.fixture
def shared_work(tmp_path: Path) -> Iterator[Path]:
    """As `work`, for a test on the module's daemon (`shared_daemon`; `work` starts a daemon
    of its own): the test's own folder, every job started there killed at the end."""
    folder = tmp_path / "work"
    folder.mkdir()
    try:
        yield folder
    finally:
        kill_jobs_under(folder)


@contextmanager
def api_daemon(root: Path, module: str, text: str) -> Iterator[Herd]:
    """A daemon (4 fake GPUs) in `root`/home, with the Python API's working folder
    `root`/work holding `module`.py: GPUHERD_HOME, the folder and sys.path point there."""
    herd = Herd(root / "home")
    work = root / "work"
    work.mkdir()
    (work / f"{module}.py").write_text(text)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("GPUHERD_HOME", str(herd.home))
        patch.delenv("XDG_RUNTIME_DIR", raising=False)
        patch.chdir(work)
        patch.syspath_prepend(str(work))
        herd.start("--fake-gpus", "4")
        try:
            yield herd
        finally:
            kill_jobs_under(root)
            herd.cleanup()
            sys.modules.pop(module, None)


def job_info(folder: Path) -> dict[str, Any]:
    """A `gpuherd run` job folder's job.json."""
    info: dict[str, Any] = json.loads((folder / "job.json").read_text())
    return info


def gone(pid: int) -> bool:
    """Has `pid` exited (gone, or a zombie nobody reaped yet: see `exited`)?"""
    try:
        return exited(psutil.Process(pid))
    except psutil.NoSuchProcess:
        return True


class RunProcess:
    """One `gpuherd run` started with Popen in its own session (signals reach it alone)."""

    def __init__(self, args: list[str], cwd: Path, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            [GPUHERD_BIN, "run", *args],
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        assert self.proc.stdout is not None
        self._buffer = bytearray()
        self.lines: list[str] = []

    def write(self, text: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(text.encode())
        self.proc.stdin.flush()

    def close_stdin(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
            self.proc.stdin = None  # so that communicate() does not flush it

    def expect_line(self, start: str, timeout: float = 15.0) -> str:
        """Read stdout lines until one starts with `start`; fail after `timeout`. (Not "contains":
        the `[0] started` lines hold the job's command, and its paths the test's name.)"""
        assert self.proc.stdout is not None
        deadline = time.monotonic() + timeout
        while True:
            left = max(0.01, deadline - time.monotonic())
            line = read_line(self.proc.stdout.fileno(), self._buffer, left).decode()
            self.lines.append(line)
            if line.startswith(start):
                return line

    def finish(self, timeout: float = 30.0) -> tuple[int, str, str]:
        """Wait for the exit; (status, the rest of stdout, all of stderr)."""
        self.close_stdin()
        try:
            out, err = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired as exc:  # the whole output says where it stuck
            out = bytes(self._buffer) + (exc.output or b"")
            said = "\n".join([*self.lines, out.decode(), "stderr:", (exc.stderr or b"").decode()])
            raise AssertionError(f"gpuherd run still runs after {timeout:g}s:\n{said}") from None
        rest = bytes(self._buffer).decode() + out.decode()
        self._buffer.clear()
        return self.proc.returncode, rest, err.decode()

    def stop(self) -> None:
        """Kill it if it still runs (by its handle) and close its pipes."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=10)
        for pipe in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if pipe is not None:
                try:
                    pipe.close()
                except OSError:  # stdin: a pipe whose reader is gone
                    pass


class Runs:
    """Runs `gpuherd run` in a scratch folder; stops every run and job it started."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.cwd = root / "cwd"
        self.cwd.mkdir(parents=True, exist_ok=True)
        self.tmp = root / "tmpdir"  # the run's temporary state goes here: checked to be gone
        self.tmp.mkdir(exist_ok=True)
        self.env = {**os.environ, "TMPDIR": str(self.tmp)}
        self.env.pop("GPUHERD_HOME", None)
        self._started: list[RunProcess] = []

    def run(
        self, *args: str, input: str | None = "", timeout: float = 60, cwd: Path | None = None
    ) -> subprocess.CompletedProcess[str]:
        """`gpuherd run ARGS` to its end; `input` is its standard input (None: /dev/null)."""
        return subprocess.run(
            [GPUHERD_BIN, "run", *args],
            cwd=cwd or self.cwd,
            env=self.env,
            input=input,
            stdin=subprocess.DEVNULL if input is None else None,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def start(self, *args: str) -> RunProcess:
        process = RunProcess(list(args), self.cwd, self.env)
        self._started.append(process)
        return process

    def cleanup(self) -> None:
        for process in self._started:
            process.stop()
        kill_jobs_under(self.root)


@pytest.fixture
def runs(tmp_path: Path) -> Iterator[Runs]:
    runs = Runs(tmp_path)
    try:
        yield runs
    finally:
        runs.cleanup()


class UnixConnection(http.client.HTTPConnection):
    """http.client over the daemon's socket, for tests that send raw HTTP (the CLI's own
    client does not use http.client: it is slow to import)."""

    def __init__(self, path: Path, timeout: float | None) -> None:
        super().__init__("localhost", timeout=timeout)
        self._path = path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            if self.timeout is not None:
                sock.settimeout(self.timeout)
            sock.connect(str(self._path))
        except BaseException:
            sock.close()
            raise
        self.sock = sock


def on_a_terminal(
    args: list[str],
    env: dict[str, str],
    cwd: Path,
    timeout: float = 30,
    typed: bool = False,
    term: str = "xterm",
    keys: Sequence[bytes] = (),
) -> tuple[int, bytes]:
    """Run `args` on a terminal of 100 columns (a pseudo-terminal) of type `term`: its exit
    status, and all it wrote there up to its exit. `typed`: its stdin is the terminal too, as
    a command typed in one (else nothing: it reads no input). `keys` are typed there one at a
    time, a second after the start, then 0.3 s apart (a progress bar redraws meanwhile)."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        args,
        stdin=follower if typed or keys else subprocess.DEVNULL,
        stdout=follower,
        stderr=follower,
        cwd=cwd,
        env={**env, "TERM": term, "COLUMNS": "100"},
        start_new_session=True,
    )
    os.close(follower)
    seen = b""

    def read_for(seconds: float) -> None:
        nonlocal seen
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            if not select.select([leader], [], [], left)[0]:
                return
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # EIO: every writer closed the terminal
                return
            if not chunk:
                return
            seen += chunk

    try:
        for n, key in enumerate(keys):
            read_for(1.0 if n == 0 else 0.3)
            os.write(leader, key)
        read_for(timeout)
        status = proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
        os.close(leader)
    return status, seen


def form_submitted(herd: Herd, cwd: Path) -> int:
    """The job the dashboard's submit form queues (held, CPU-only) with every box under its
    "More options" left blank: what the daemon gives a job that names none of them."""
    from urllib.parse import urlencode  # (this use alone)

    body = urlencode({"commands": "true", "gpus": "0", "hold": "1", "cwd": str(cwd)})
    conn = UnixConnection(herd.client.socket_path, timeout=30)
    try:
        form = {"Content-Type": "application/x-www-form-urlencoded"}
        conn.request("POST", "/submit", body, form)
        answer = conn.getresponse()
        assert answer.status == 303, answer.read()
        return int(str(answer.headers["location"]).rpartition("=")[2])
    finally:
        conn.close()
