"""The per-user daemon: one per GPUHERD_HOME, serving the API on a Unix socket.

Run as `python -m gpuherd.daemon --home DIR [--gpus SPEC | --fake-gpus SPEC] [--slots N]
[--listen HOST:PORT] [--executor local|ray --address ADDR]`; `gpuherd daemon start` does that
in the background and waits until the socket answers. With --listen the same app is also
served over TCP, behind a token (api/listener.py, api/auth.py). With --executor ray the jobs
run on a Ray cluster (executors/ray.py, docs/cluster.md).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import fcntl
import json
import logging
import os
import signal
import socket
import sqlite3
import stat
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from gpuherd import paths
from gpuherd.core.model import MAX_SLOTS
from gpuherd.core.units import plural
from gpuherd.devices import DeviceTable
from gpuherd.engine import Engine
from gpuherd.errors import HerdError
from gpuherd.executors.base import Executor
from gpuherd.executors.local import LocalExecutor
from gpuherd.gpus import GpuProbe, ProbeError, make_probe
from gpuherd.hooks import EndHooks
from gpuherd.layout import Layout
from gpuherd.service import Service
from gpuherd.store import Store

log = logging.getLogger("gpuherd.daemon")


class AlreadyRunning(HerdError):
    pass


def acquire_lock(home: Path) -> IO[str]:
    """Hold an exclusive lock on the home for the daemon's life (released by the kernel)."""
    home.parent.mkdir(parents=True, exist_ok=True)  # the folders above: the umask's mode
    home.mkdir(mode=0o700, exist_ok=True)
    handle = paths.lock_file(home).open("a+")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        pid = handle.read().strip() or "?"
        handle.close()
        raise AlreadyRunning(
            f"a daemon is already running for {home} (pid {pid}): "
            "`gpuherd daemon status` shows it, `gpuherd daemon stop` stops it"
        ) from None
    handle.seek(0)
    handle.truncate()
    handle.write(f"{os.getpid()}\n")
    handle.flush()
    return handle


def make_home_private(home: Path) -> None:
    """The home 0700: herd.db, job.json and the logs hold the jobs' environments (API keys).
    A new home (no herd.db yet: `daemon start` made it, with the umask's mode, for daemon.log)
    is closed in silence, an older gpuherd's with a line in the log. Only the home: the umask
    the jobs inherit (their own output files) stays the user's."""
    mode = stat.S_IMODE(home.stat().st_mode)
    if not mode & 0o077:
        return
    try:
        os.chmod(home, mode & 0o700)
    except OSError as exc:  # another user's folder: serve anyway (herd.db is 0600)
        log.warning("cannot make %s private (%s): `chmod 700` it", home, exc.strerror)
        return
    if paths.database(home).exists():
        log.warning(
            "%s was open to other users (mode %04o): made it 0700, as it holds the jobs' "
            "environments (API keys) and logs",
            home,
            mode,
        )


def bind_socket(path: Path, own_folder: bool) -> socket.socket:
    """A listening Unix socket, 0600 inside a 0700 folder: the file mode is the access control.
    A folder that is not gpuherd's own (GPUHERD_SOCKET=/tmp/herd.sock) keeps its mode: made
    0700, /tmp would be closed to everyone else. The socket's 0600 and the peer check
    (api/peercred.py) still keep other users out."""
    if own_folder or not path.parent.exists():
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.chmod(path.parent, 0o700)
    if _answers(path):  # our lock is this home's: a daemon of another home took the path
        raise HerdError(
            f"another daemon listens on {path} (a GPUHERD_SOCKET shared by two homes?): "
            "give each home its own socket, or unset GPUHERD_SOCKET"
        )
    path.unlink(missing_ok=True)  # a stale socket of a dead daemon (we hold the lock)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    try:
        sock.bind(str(path))
    finally:
        os.umask(old)
    os.chmod(path, 0o600)
    sock.listen(128)
    return sock


def _answers(path: Path) -> bool:
    """Whether something listens on the Unix socket at `path`."""
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(1.0)
    try:
        probe.connect(str(path))
    except OSError:  # none there, refused (stale), not a socket
        return False
    finally:
        probe.close()
    return True


def choose_probe(
    store: Store, gpus: str | None, fake_gpus: str | None, slots: int | None
) -> GpuProbe:
    """The probe from the options, or from the last start; the device table follows it."""
    if slots is not None and not 1 <= slots <= MAX_SLOTS:
        raise ValueError(f"--slots must be 1 to {MAX_SLOTS}, got {slots}")
    if gpus is None and fake_gpus is None:
        saved = json.loads(store.get_setting("probe") or "{}")
        if saved:
            probe, _ = make_probe(saved.get("gpus"), saved.get("fake_gpus"))
            if slots is not None:
                store.replace_devices(dict.fromkeys((d.index for d in store.devices()), slots))
            return probe
    probe, slot_map = make_probe(gpus, fake_gpus)
    if slots is not None:
        slot_map = {index: n * slots for index, n in slot_map.items()}
    store.replace_devices(slot_map)
    store.set_setting("probe", json.dumps({"gpus": gpus, "fake_gpus": fake_gpus}))
    return probe


def choose_executor(
    store: Store, kind: str | None, address: str | None, local_options: bool
) -> tuple[str, str | None, bool]:
    """The executor from the options, or from the last start (a daemon restarted without
    options must re-attach to the jobs where they run, never count them lost), and whether
    its address is the last start's. Saved by `remember_executor` once it is set up."""
    saved = json.loads(store.get_setting("executor") or "{}")
    remembered = False
    if kind is None:
        local = local_options and address is None
        kind = "ray" if address is not None else "local" if local else saved.get("kind", "local")
    if kind == "ray":
        if local_options:
            raise ValueError("--gpus, --fake-gpus and --slots are for the local executor")
        remembered = address is None and bool(saved.get("address"))
        address = address or saved.get("address") or "auto"
    elif address is not None:
        raise ValueError("--address is for --executor ray")
    return kind, address, remembered


def remember_executor(store: Store, kind: str, address: str | None) -> None:
    """Only an executor that was set up replaces the last start's choice (a mistyped or dead
    address must not take the place of a working one)."""
    store.set_setting("executor", json.dumps({"kind": kind, "address": address}))


def _ray_parts(
    store: Store, home: Path, address: str, switched: bool, remembered: bool
) -> tuple[GpuProbe, Executor, type[DeviceTable]]:
    from gpuherd.executors import ray_cluster  # imports ray: only for --executor ray

    probe, executor = ray_cluster.connect(address, home, remembered)
    if switched:  # the local GPUs' configuration means nothing on the cluster
        ray_cluster.configure(store, probe)

    def placed(job_id: int, attempt: int, host: str, node_id: str) -> None:
        store.update_attempt(job_id, attempt, host=f"{host} (ray node {node_id})")

    executor.on_placed = placed
    return probe, executor, ray_cluster.ClusterDeviceTable


def _job_folders(home: Path) -> list[int]:
    """The numbers of the job folders in the home (none: no jobs folder yet)."""
    try:
        return [int(name) for name in os.listdir(home / "jobs") if name.isdecimal()]
    except OSError:
        return []


def _refuse_an_emptied_database(home: Path) -> None:
    """An empty herd.db beside job folders is a queue lost (emptied by a full disk, a `>`
    that missed its file): opened, it would become an empty queue in silence, and the file
    that a backup could replace would be written over. A new home's is simply new."""
    database = paths.database(home)
    try:
        empty = database.stat().st_size == 0
    except OSError:
        return  # none yet (a new home); one that cannot be read: the store says why
    folders = _job_folders(home) if empty else []
    if folders:
        raise HerdError(
            f"{database} is empty but {home / 'jobs'} holds the folders of "
            f"{plural(len(folders), 'job')}: restore herd.db from a backup, or move it aside "
            "to start an empty queue"
        )


def _number_after_job_folders(store: Store, home: Path) -> None:
    """A new job never takes the folder of one the database forgot (herd.db deleted, emptied
    or restored from a backup): it would overwrite that job's logs and job.json."""
    last = max(_job_folders(home), default=0)
    if store.number_jobs_after(last):
        log.warning(
            "the database knew no job numbered %d, whose folder is in %s: new jobs are "
            "numbered after it",
            last,
            home / "jobs",
        )


def _server_class() -> type[Any]:
    from gpuherd.api.server import quiet_server_class

    class Server(quiet_server_class()):  # type: ignore[misc]
        """uvicorn's server, minus re-raising SIGTERM/SIGINT once it has stopped: that would
        kill the daemon before its own clean-up (engine, store, socket, lock) and exit 0."""

        @contextmanager
        def capture_signals(self) -> Iterator[None]:
            handlers = {
                sig: signal.signal(sig, self.handle_exit) for sig in (signal.SIGINT, signal.SIGTERM)
            }
            try:
                yield
            finally:
                for sig, handler in handlers.items():
                    signal.signal(sig, handler)

    return Server


def serve(
    home: Path,
    gpus: str | None,
    fake_gpus: str | None,
    slots: int | None,
    listen: str | None = None,
    executor_kind: str | None = None,
    address: str | None = None,
) -> None:
    import uvicorn

    from gpuherd.api import listener as tcp
    from gpuherd.api.app import create_app
    from gpuherd.api.peercred import PeerCheckedH11

    server_class = _server_class()

    lock = acquire_lock(home)
    make_home_private(home)
    _refuse_an_emptied_database(home)
    store = Store(paths.database(home))
    _number_after_job_folders(store, home)
    before = json.loads(store.get_setting("executor") or "{}").get("kind", "local")
    local_options = gpus is not None or fake_gpus is not None or slots is not None
    kind, address, remembered = choose_executor(store, executor_kind, address, local_options)
    executor: Executor = LocalExecutor()
    table: type[DeviceTable] = DeviceTable
    if kind == "ray":
        switched = before != "ray"
        probe, executor, table = _ray_parts(store, home, address or "auto", switched, remembered)
    else:
        probe = choose_probe(store, gpus, fake_gpus, slots)
    remember_executor(store, kind, address)
    tcp_sock = tcp.bind(listen) if listen else None  # fail before serving, with the reason
    sock_path = paths.socket_path(home)
    sock = bind_socket(sock_path, own_folder=not os.environ.get("GPUHERD_SOCKET"))
    note, draft = paths.socket_note(home), home / "daemon.socket.tmp"
    draft.write_text(f"{sock_path}\n")
    draft.replace(note)  # whole or not at all: clients read it without a lock

    async def main() -> None:
        engine = Engine(store, table(store, probe), executor, Layout.for_home(home))
        service = Service(engine, home, time.time())
        app = create_app(service, pid=os.getpid(), socket_path=str(sock_path))
        # Open event streams must not hold a stopping daemon for long.
        config = uvicorn.Config(
            app,
            log_level="warning",
            lifespan="off",
            timeout_graceful_shutdown=2,
            http=PeerCheckedH11,
        )
        server = server_class(config)
        app.state.server = server
        app.state.listener = tcp.Listener(app, home)
        if tcp_sock is not None and listen is not None:
            await app.state.listener.start(tcp_sock, tcp.parse_address(listen)[0])
        hooks = EndHooks(engine, home)
        hooks.start()  # before the engine finishes jobs that ended while it was down
        engine.start()
        log.info("daemon %d serving %s on %s (%s)", os.getpid(), home, sock_path, probe.describe())
        await server.serve(sockets=[sock])
        engine.changes.close()  # event streams over TCP end too
        await app.state.listener.stop()
        hooks.stop()
        engine.close()

    try:
        asyncio.run(main())
    finally:
        sock.close()
        if tcp_sock is not None:
            tcp_sock.close()
        sock_path.unlink(missing_ok=True)
        store.close()
        if kind == "ray":
            from gpuherd.executors import ray_cluster

            ray_cluster.disconnect()
        lock.close()
        log.info("daemon %d stopped", os.getpid())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gpuherd.daemon")
    parser.add_argument("--home", required=True)
    parser.add_argument("--gpus")
    parser.add_argument("--fake-gpus")
    parser.add_argument("--slots", type=int)
    parser.add_argument("--listen", help="also serve over TCP, e.g. 127.0.0.1:8888 (token)")
    parser.add_argument("--executor", choices=("local", "ray"))
    parser.add_argument("--address", help="the Ray cluster: HOST:PORT or auto")
    parser.add_argument("--log-file", help="also log here (a foreground daemon: daemon.log)")
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    if args.log_file:
        try:
            also = logging.FileHandler(args.log_file)
        except OSError as exc:
            log.warning("cannot write %s (%s): logging to stderr only", args.log_file, exc)
        else:
            also.setFormatter(logging.getLogger().handlers[0].formatter)
            logging.getLogger().addHandler(also)
    try:
        serve(
            paths.home_dir(args.home),
            args.gpus,
            args.fake_gpus,
            args.slots,
            args.listen,
            args.executor,
            args.address,
        )
    except (HerdError, ProbeError, ValueError, OSError) as exc:
        _failed(str(exc), args.log_file)
        return 1
    except sqlite3.DatabaseError as exc:
        _failed(
            f"the database in {args.home} failed ({exc}); move herd.db aside to start with "
            "an empty queue, or restore it from a backup",
            args.log_file,
        )
        return 1
    return 0


def _failed(reason: str, log_file: str | None) -> None:
    """Why the daemon could not start or run, on stderr (daemon.log, for a daemon `daemon
    start` started), and in `log_file` (a foreground daemon's daemon.log) too."""
    line = f"gpuherd daemon: {reason}\n"
    sys.stderr.write(line)
    sys.stderr.flush()
    if log_file:
        with contextlib.suppress(OSError), open(log_file, "a", encoding="utf-8") as f:
            f.write(line)


if __name__ == "__main__":
    sys.exit(main())
