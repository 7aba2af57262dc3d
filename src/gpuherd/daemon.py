"""The per-user daemon: one per GPUHERD_HOME, serving the API on a Unix socket.

Run as `python -m gpuherd.daemon --home DIR [--gpus SPEC | --fake-gpus SPEC] [--slots N]
[--listen HOST:PORT]`; `gpuherd daemon start` does that in the background and waits until the
socket answers. With --listen the same app is also served over TCP, behind a token
(api/listener.py, api/auth.py).
"""

from __future__ import annotations

import argparse
import asyncio
import fcntl
import json
import logging
import os
import socket
import sys
import time
from pathlib import Path
from typing import IO

from gpuherd import paths
from gpuherd.devices import DeviceTable
from gpuherd.engine import Engine
from gpuherd.errors import HerdError
from gpuherd.executors.local import LocalExecutor
from gpuherd.gpus import GpuProbe, ProbeError, make_probe
from gpuherd.jobfiles import Layout
from gpuherd.service import Service
from gpuherd.store import Store

log = logging.getLogger("gpuherd.daemon")


class AlreadyRunning(HerdError):
    pass


def acquire_lock(home: Path) -> IO[str]:
    """Hold an exclusive lock on the home for the daemon's life (released by the kernel)."""
    home.mkdir(parents=True, exist_ok=True)
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


def bind_socket(path: Path) -> socket.socket:
    """A listening Unix socket, 0600 inside a 0700 folder: the file mode is the access control."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(path.parent, 0o700)
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


def choose_probe(
    store: Store, gpus: str | None, fake_gpus: str | None, slots: int | None
) -> GpuProbe:
    """The probe from the options, or from the last start; the device table follows it."""
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


def serve(
    home: Path,
    gpus: str | None,
    fake_gpus: str | None,
    slots: int | None,
    listen: str | None = None,
) -> None:
    import uvicorn

    from gpuherd.api import listener as tcp
    from gpuherd.api.app import create_app
    from gpuherd.api.peercred import PeerCheckedH11

    lock = acquire_lock(home)
    store = Store(paths.database(home))
    probe = choose_probe(store, gpus, fake_gpus, slots)
    tcp_sock = tcp.bind(listen) if listen else None  # fail before serving, with the reason
    sock_path = paths.socket_path(home)
    sock = bind_socket(sock_path)

    async def main() -> None:
        engine = Engine(store, DeviceTable(store, probe), LocalExecutor(), Layout.for_home(home))
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
        server = uvicorn.Server(config)
        app.state.server = server
        app.state.listener = tcp.Listener(app, home, primary=server)
        if tcp_sock is not None and listen is not None:
            await app.state.listener.start(tcp_sock, tcp.parse_address(listen)[0])
        engine.start()
        log.info("daemon %d serving %s on %s (%s)", os.getpid(), home, sock_path, probe.describe())
        await server.serve(sockets=[sock])
        engine.changes.close()  # event streams over TCP end too
        await app.state.listener.stop()
        engine.close()

    try:
        asyncio.run(main())
    finally:
        sock.close()
        if tcp_sock is not None:
            tcp_sock.close()
        sock_path.unlink(missing_ok=True)
        store.close()
        lock.close()
        log.info("daemon %d stopped", os.getpid())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gpuherd.daemon")
    parser.add_argument("--home", required=True)
    parser.add_argument("--gpus")
    parser.add_argument("--fake-gpus")
    parser.add_argument("--slots", type=int)
    parser.add_argument("--listen", help="also serve over TCP, e.g. 127.0.0.1:8888 (token)")
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    try:
        serve(paths.home_dir(args.home), args.gpus, args.fake_gpus, args.slots, args.listen)
    except (HerdError, ProbeError, ValueError, OSError) as exc:
        print(f"gpuherd daemon: {exc}", file=sys.stderr, flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
