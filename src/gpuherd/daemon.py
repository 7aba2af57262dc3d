"""The per-user daemon: one per GPUHERD_HOME, serving the API on a Unix socket.

Run as `python -m gpuherd.daemon --home DIR [--gpus SPEC | --fake-gpus SPEC] [--slots N]
[--listen HOST:PORT] [--executor local|ray --address ADDR]`; `gpuherd daemon start` does that
in the background and waits until the socket answers. With --listen the same app is also
served over TCP, behind a token (api/listener.py, api/auth.py). With --executor ray the jobs
run on a Ray cluster (executors/ray.py, docs/cluster.md). It begins in daemon_entry.py, which
makes the imports below and says one of them that fails in one line.
"""

from __future__ import annotations

from gpuherd.daemon_entry import parse_args, run, say, start_logging

if __name__ == "__main__":  # before the imports below, which it makes: daemon_entry.py says why
    run()

import asyncio
import contextlib
import logging
import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

from gpuherd import daemon_signals, paths, removal_journal
from gpuherd.daemon_executor import (
    LIVE,
    choose_executor,
    choose_probe,
    last_executor,
    refuse_a_switch_under_jobs,
    refuse_to_leave_running_jobs,
    remember_executor,
)
from gpuherd.daemon_failure import os_failure, refuse_a_database_not_a_file, unexpected_failure
from gpuherd.daemon_home import (
    LAST_LISTEN,
    SocketKeeper,
    acquire_lock,
    bind_socket,
    bind_tcp,
    make_home_private,
    note_socket,
    number_after_job_folders,
    refuse_a_network_home,
    refuse_an_emptied_database,
    refuse_another_users_home,
)
from gpuherd.daemon_presence import SOCKET_CHECK
from gpuherd.devices import DeviceTable
from gpuherd.engine import Engine
from gpuherd.errors import HerdError
from gpuherd.executors.base import Executor
from gpuherd.executors.local import LocalExecutor
from gpuherd.fd_limit import raise_fd_limit
from gpuherd.gc_pause import importing
from gpuherd.git_lookups import LOOKUPS
from gpuherd.gpus import GpuProbe, ProbeError
from gpuherd.gpus.choice import FAKE_GPUS_VARIABLE, choose_gpus
from gpuherd.home_header import home_moved, identity
from gpuherd.home_lock import HomeLock
from gpuherd.hooks import EndHooks
from gpuherd.job_commits import look_again
from gpuherd.layout import Layout
from gpuherd.listen_address import parse_address
from gpuherd.listing_reader import ListingReader
from gpuherd.service import Service
from gpuherd.start_mends import mend_settings
from gpuherd.store import Store
from gpuherd.store_checkpoint import (
    note_replaced,
    refuse_the_log_of_a_replaced_database,
    replaced_while_running,
)
from gpuherd.store_schema import open_failed
from gpuherd.sweep_journal import remove_unsubmitted

log = logging.getLogger("gpuherd.daemon")


def _ray_parts(
    store: Store,
    home: Path,
    address: str,
    last: str | None,
    switched: bool,
    remembered: bool,
    abandon: bool,
) -> tuple[GpuProbe, Executor, type[DeviceTable], str]:
    """The probe, executor and device table on the cluster, and its address as joined (never
    "auto", which may find another cluster the next time); `last`: the last start's."""
    from gpuherd.executors import ray_cluster  # imports ray: only for --executor ray

    # The jobs still running on the last start's cluster: were it gone, its refusal names
    # `--executor local` with --abandon-running (alone, it is refused for them).
    stranded = 0 if switched else store.count_jobs(LIVE)
    if stranded and last and ray_cluster.another_cluster(last, address):
        if not abandon:  # as for a switch of executor: they would be counted lost, run twice
            there, here = f"the Ray cluster at {last}", f"the Ray cluster at {address}"
            refuse_to_leave_running_jobs(store, there, here)
        stranded = 0  # abandoned: none runs where `address` is
    probe, executor = ray_cluster.connect(address, home, remembered, stranded)
    if switched:  # the local GPUs' configuration means nothing on the cluster
        ray_cluster.configure(store, probe)

    def placed(job_id: int, attempt: int, host: str, node_id: str) -> None:
        store.update_attempt(job_id, attempt, host=f"{host} (ray node {node_id})")

    executor.on_placed = placed
    return probe, executor, ray_cluster.ClusterDeviceTable, executor.address


def _server_class() -> type[Any]:
    from gpuherd.api.server import quiet_server_class

    class Server(quiet_server_class()):  # type: ignore[misc]
        """uvicorn's server, minus re-raising SIGTERM/SIGINT once it has stopped: that would
        kill the daemon before its own clean-up (engine, store, socket, lock) and exit 0. It
        stops on SIGHUP too, and ignores SIGUSR1/2, each logged (daemon_signals.py)."""

        @contextmanager
        def capture_signals(self) -> Iterator[None]:
            with daemon_signals.handled(self.handle_exit):
                yield

    return Server


async def _keep_socket(server: Any, keeper: SocketKeeper, app: Any, lock: HomeLock) -> None:
    """Serve on a new socket wherever the one served was removed (daemon_presence.SOCKET_CHECK),
    and put back a removed daemon.lock (HomeLock.mend). The new socket is one more of uvicorn's
    listeners, made as uvicorn makes its own (Server.startup), so the server's shutdown closes
    it with the rest."""
    loop = asyncio.get_running_loop()
    while True:
        await asyncio.sleep(SOCKET_CHECK)
        lock.mend()
        if not server.started or server.should_exit or not keeper.lost():
            continue
        sock = keeper.rebind()
        if sock is None:
            continue
        config = server.config
        protocol = partial(
            config.http_protocol_class,
            config=config,
            server_state=server.server_state,
            app_state=server.lifespan.state,
        )
        try:
            listener = await loop.create_server(protocol, sock=sock, backlog=config.backlog)
        except Exception:  # a bug here must not end the keeping (nor the daemon)
            log.exception("serving on the new socket failed")
            sock.close()
            continue
        server.servers.append(listener)
        app.state.socket_path = str(keeper.path)  # what `daemon status` says


def serve(
    home: Path,
    gpus: str | None,
    fake_gpus: str | None,
    slots: int | None,
    listen: str | None = None,
    executor_kind: str | None = None,
    address: str | None = None,
    abandon_running: bool = False,
    listen_as_before: bool = False,
) -> str | None:
    """Serve until asked to stop; return the daemon's last word, if it has one (a stop that
    left jobs running: `Service.left_running`). `listen_as_before`: see bind_tcp."""
    with importing():  # the server's modules: ~3/4 of the daemon's start-up (gc_pause.py)
        import uvicorn

        from gpuherd.api import listener as tcp
        from gpuherd.api.app import create_app
        from gpuherd.api.peercred import PeerCheckedH11

        server_class = _server_class()

    # Before the home is touched: a bad GPUHERD_FAKE_GPUS is refused, named as the variable.
    choice = choose_gpus(gpus, fake_gpus, ray=executor_kind == "ray" or address is not None)
    refuse_a_network_home(home)
    refuse_another_users_home(home)
    lock = acquire_lock(home)
    try:
        # Its folder is its home from now on, not the one `daemon start` was run in (which it
        # pinned: a disk the user could not unmount; removed, the hooks' shells failed their
        # getcwd()). Nothing is read relative to that folder after this: the GPU choice's
        # paths are absolute, and each job runs in the folder of its submission.
        os.chdir(home)
        make_home_private(home)
        refuse_an_emptied_database(home)
        refuse_a_database_not_a_file(paths.database(home))
        refuse_the_log_of_a_replaced_database(paths.database(home))
        store = Store(paths.database(home))
    except BaseException:
        # (its hold on the home folder is a plain fd: not let go with the object, as its
        # daemon.lock's file is, and a refused start run in process kept the home held)
        lock.close()
        raise
    tcp_sock = sock = keeper = None
    try:
        removal_journal.finish_cut_off(home, store)  # folders of an `rm` cut off by a crash
        number_after_job_folders(store, home)
        remove_unsubmitted(home, store)  # folders of a sweep cut off by a crash (kill -9)
        # Bound before anything of this start is remembered (its GPUs, its executor): one
        # that could not listen had saved its options, and the next plain start took them.
        tcp_sock, listen = bind_tcp(store, listen, listen_as_before)
        sock_path = paths.socket_path(home).absolute()
        own_folder = not os.environ.get("GPUHERD_SOCKET")
        sock = bind_socket(sock_path, own_folder)
        keeper = SocketKeeper(home, sock_path, own_folder)
        named = executor_kind is not None or address is not None
        last = last_executor(store, named, abandon_running)
        local_options = gpus is not None or fake_gpus is not None or slots is not None
        kind, address, remembered = choose_executor(last, executor_kind, address, local_options)
        # (a damaged row: no job runs, or the start named where they run)
        before = kind if last is None else last.kind
        refuse_a_switch_under_jobs(store, before, kind, abandon_running)
        mend_settings(store)
        executor: Executor = LocalExecutor(known=store.attempt_known)
        table: type[DeviceTable] = DeviceTable
        back: list[int] = []  # (removed GPUs this start's --gpus or --fake-gpus uses again)
        if kind == "ray":
            if choice.from_variable:  # the cluster's GPUs are the jobs': the variable is not asked
                log.info("%s is set, but jobs run on the Ray cluster: not used", FAKE_GPUS_VARIABLE)
            switched = before != "ray"
            assert address is not None  # choose_executor gives the ray executor an address
            last_address = None if last is None else last.address
            probe, executor, table, address = _ray_parts(
                store, home, address, last_address, switched, remembered, abandon_running
            )
        else:
            probe, back = choose_probe(store, choice, slots)
        remember_executor(store, kind, address)
        store.set_setting(LAST_LISTEN, listen or "")
        note_socket(home, sock_path)
        # A test knob, not for users: seconds to hold the socket bound before serving, as a
        # daemon re-attaching many jobs (or stuck) does, for the tests of `daemon start`.
        time.sleep(float(os.environ.get("GPUHERD_TEST_SERVE_DELAY") or 0))
    except BaseException:
        # Closed, the store folds its write-ahead log into herd.db and removes it: a -wal
        # left beside herd.db (this start's new, empty queue, say) is applied by SQLite to
        # whatever herd.db is there next, a database put back from aside or a backup too.
        store.close()
        for opened in (tcp_sock, sock):
            if opened is not None:
                opened.close()
        if keeper is not None:  # its socket file goes too, as a stopping daemon's does
            keeper.remove()
            _remove_runtime_folder(sock_path)
        lock.close()
        raise
    assert sock is not None and keeper is not None  # (bound in the `try`, or it raised)

    async def main() -> str | None:
        layout = Layout.for_home(home, os.environ.get("GPUHERD_SOCKET"))
        engine = Engine(store, table(store, probe), executor, layout)
        service = Service(engine, home, time.time())
        service.gpus_back = back
        reader = service.reader = ListingReader(store)  # `ls` off the loop
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
            await app.state.listener.start(tcp_sock, parse_address(listen)[0])
        hooks = EndHooks(engine, home)
        hooks.start()  # before the engine finishes jobs that ended while it was down
        engine.start()
        look_again(engine)  # jobs the last daemon stopped before git gave their commit
        log.info("daemon %d serving %s on %s (%s)", os.getpid(), home, sock_path, probe.describe())
        keeping = asyncio.create_task(_keep_socket(server, keeper, app, lock))
        await server.serve(sockets=[sock])
        keeping.cancel()
        engine.changes.close()  # event streams over TCP end too
        # Where it listens as it stops (after any `gpuherd ui`): a `daemon restart` when none
        # runs listens there again. (A database that refuses it keeps the start's.)
        with contextlib.suppress(sqlite3.Error):
            store.set_setting(LAST_LISTEN, app.state.listener.describe()["address"] or "")
        await app.state.listener.stop()
        hooks.stop()
        reader.close()  # before the store's: no listing read left running
        engine.close()
        LOOKUPS.stop()  # gits still running killed (their jobs noted for the next start)
        return service.last_word

    home_id = identity(home)  # (a home renamed or removed while the daemon ran: no backup's)
    try:
        last_word = _with_replaced(asyncio.run(main()), store, home, home_id)
    finally:
        sock.close()
        if tcp_sock is not None:
            tcp_sock.close()
        keeper.remove()
        _remove_runtime_folder(sock_path)
        store.close()
        if kind == "ray":
            from gpuherd.executors import ray_cluster

            ray_cluster.disconnect(executor)
        lock.close()
        log.info("daemon %d stopped", os.getpid())
    return last_word


def _remove_runtime_folder(socket: Path) -> None:
    """Remove the socket's folder under XDG_RUNTIME_DIR (gpuherd/HASH, one per home) as the
    daemon stops, once its socket is gone from it: each home's was left behind, and they
    piled up. Held by the home's lock still, so no start of this home makes it meanwhile.
    Only if empty, and only that one: GPUHERD_SOCKET's folder is the user's, and `gpuherd`
    above it the other homes'."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if not runtime or os.environ.get("GPUHERD_SOCKET"):
        return
    if socket.parent.parent == Path(runtime).absolute() / "gpuherd":
        with contextlib.suppress(OSError):  # not empty (a file not ours), or gone already
            socket.parent.rmdir()


def _with_replaced(
    last_word: str | None, store: Store, home: Path, home_id: str | None
) -> str | None:
    """The stopping daemon's last word, and what to do about a herd.db replaced while it ran
    (the README says not to: said at the stop, and how to mend it), or its home moved or
    removed (`home_id`: its identity at the start)."""
    if not store.replaced():
        note_replaced(paths.database(home), False)
        return last_word
    if identity(home) != home_id:
        advice = home_moved(home, running=False)
    else:
        note_replaced(paths.database(home), True)  # (the next start refuses its -wal)
        advice = replaced_while_running(paths.database(home), running=False)
    return f"{last_word}; {advice}" if last_word else advice


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    raise_fd_limit()  # a pidfd per running job, a socket per follower: fd_limit.py
    args.log_file = start_logging(args.log_file)
    home = paths.home_dir(args.home)  # (once: serve() changes the folder a relative one is in)
    try:
        last_word = serve(
            home,
            args.gpus,
            args.fake_gpus,
            args.slots,
            args.listen,
            args.executor,
            args.address,
            args.abandon_running,
            args.listen_as_before,
        )
    except (HerdError, ProbeError, ValueError) as exc:
        say(str(exc), args.log_file)
        return 1
    except OSError as exc:
        say(os_failure(exc, home), args.log_file)
        return 1
    except sqlite3.DatabaseError as exc:  # damaged, or locked, full, read-only: each its way out
        say(str(open_failed(paths.database(home), exc)), args.log_file)
        return 1
    except Exception as exc:  # a module that does not import, or a bug: the log gets both
        log.exception("the daemon failed")
        where = Path(args.log_file or paths.daemon_log(home))
        say(unexpected_failure(exc, where), args.log_file)
        return 1
    if last_word is not None:
        say(last_word, args.log_file)
    return 0
