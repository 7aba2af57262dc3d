"""Shared fixtures: a real daemon in a temporary GPUHERD_HOME, driven through the console script."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import struct
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

pytest.register_assert_rewrite("waits", "herd_home", "recording_jobs", "run_process", "terminal")
import browsers
import forks
from herd_home import Herd, UnixConnection, homes_on_one_socket
from recording_jobs import (
    GPUHERD_BIN,
    MTIME_TICK,
    PROBE_SCRIPT,
    RECORDER_SCRIPT,
    Probe,
    Recorder,
    max_overlap,
)
from run_process import RunProcess, Runs
from terminal import on_a_terminal
from waits import (
    communicated,
    exited,
    gone,
    group_members,
    kill_jobs_under,
    load_stretch,
    read_line,
    stays,
    wait_dead,
    wait_for,
    wait_for_long_poll,
)

if TYPE_CHECKING:
    from gpuherd.engine import Engine
    from gpuherd.executors.base import Executor
    from gpuherd.service import Service
    from gpuherd.store import Store
    from gpuherd.wire import SubmitItem

__all__ = [  # (the helpers' modules re-exported: tests import them from here)
    "GPUHERD_BIN",
    "MTIME_TICK",
    "PROBE_SCRIPT",
    "RECORDER_SCRIPT",
    "Herd",
    "Probe",
    "Recorder",
    "RunProcess",
    "Runs",
    "UnixConnection",
    "communicated",
    "exited",
    "gone",
    "group_members",
    "homes_on_one_socket",
    "kill_jobs_under",
    "load_stretch",
    "max_overlap",
    "on_a_terminal",
    "read_line",
    "stays",
    "wait_dead",
    "wait_for",
    "wait_for_long_poll",
]

# A developer's GPUHERD_FAKE_GPUS (the docs suggest exporting it) would give every daemon a
# test starts without --fake-gpus (and every `gpuherd run`, every connect()) that developer's
# GPUs, changing what other tests see: gone from this process, and so from the environment
# that every fixture copies and every process a test starts inherits. Tests of the variable
# set it themselves.
os.environ.pop("GPUHERD_FAKE_GPUS", None)

# pytest keeps the test modules whose asserts it rewrote (~620) in __pycache__ only where
# bytecode may be written, and these machines set PYTHONDONTWRITEBYTECODE: every pytest
# process (each of the xdist workers) rewrote them all at every collection, ~13 of the
# ~17 CPU-s one took (2026-12-07). With them kept, a later collection takes ~4 CPU-s
# (.ci/run collects once ahead, beside mypy). This process only: the processes the tests
# start keep the variable.
sys.dont_write_bytecode = False

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
    browsers.close_kept()


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """The browser modules in units of several (tests/xdist_units.py)."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist_units import BrowserUnits

    return BrowserUnits(config, log)


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
    if getattr(getattr(item, "module", None), "browser", None) is None:
        browsers.close_kept()  # (kept for the next browser module only: tests/browsers.py)
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


def hooks_log(home: Path) -> str:
    """The home's hooks.log, "" while there is none. Read without a look first: the daemon
    renames it aside at 10 MiB, between a look and a read (a look at it failed a test so)."""
    try:
        return (home / "hooks.log").read_text()
    except FileNotFoundError:
        return ""


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


@pytest.fixture
def recorder(tmp_path: Path) -> Recorder:
    folder = tmp_path / "rec"
    folder.mkdir()
    return Recorder(folder)


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


@pytest.fixture
def probe(tmp_path: Path) -> Probe:
    return Probe(tmp_path / "probe")


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


@pytest.fixture
def runs(tmp_path: Path) -> Iterator[Runs]:
    runs = Runs(tmp_path)
    try:
        yield runs
    finally:
        runs.cleanup()


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
