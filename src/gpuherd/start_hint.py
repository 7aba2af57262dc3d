"""What to say when no daemon runs for a home: the `gpuherd daemon start` that fits it.

A home a daemon ran in remembers how it was started (herd.db's `executor` and `probe`
settings: daemon_executor.choose_executor and choose_probe), and `gpuherd daemon start`
without options starts the same way again: so a home set up for a Ray cluster, or for fake
GPUs, is told just that, never to add --fake-gpus (on a Ray home that start is refused). A home
no daemon ever ran in gets the general hint. One whose last daemon listened on TCP (the
dashboard) is told `gpuherd daemon restart`, which listens there again: `daemon start` alone
would not (daemon_home.bind_tcp). Read on the error path only (and for a rare warning:
runs_on_ray): sqlite3 is imported there.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gpuherd import paths
from gpuherd.saved_settings import (
    EXECUTOR,
    LISTEN,
    PROBE,
    DamagedSetting,
    parse_executor,
    parse_listen,
    parse_probe,
)
from gpuherd.typed_name import as_typed

FIRST_START = "start one with `gpuherd daemon start` (add --fake-gpus 4 on a machine without GPUs)"


def not_running(home: Path) -> str:
    """The one line for a home whose daemon is not running, with the start that fits it, its
    command in the name typed (`herd daemon start` under `herd`)."""
    return f"no gpuherd daemon is running for {home}: {as_typed(start_hint(home))}"


def start_hint(home: Path) -> str:
    saved = remembered(home)
    executor, probe = saved.get(EXECUTOR), saved.get(PROBE)
    if executor is None and probe is None:
        return FIRST_START
    if executor is not None and executor.kind == "ray":
        address = executor.address or "auto"
        how = f"running jobs on the Ray cluster at {address}"
        if address == "auto":
            how = "running jobs on the Ray cluster it finds (--address auto)"
    elif probe and probe["fake_gpus"]:
        how = f"with --fake-gpus {probe['fake_gpus']}"
    elif probe and probe["gpus"]:
        how = f"with --gpus {probe['gpus']}"
    else:
        how = "on this machine's GPUs"
    verb = "start"
    if listen := saved.get(LISTEN):
        verb, how = "restart", f"{how}, listening on {listen}"
    return f"start it again with `gpuherd daemon {verb}`, which starts as the last one did: {how}"


def remembered(home: Path) -> dict[str, Any]:
    """The home's remembered start settings, decoded; {} when there are none or they cannot
    be read (the hint then is the general one: it must never fail in their place)."""
    import sqlite3

    database = paths.database(home)
    if not database.is_file():
        return {}
    # Read only, and nothing created in the home: with no -wal file (a daemon that stopped
    # cleanly) the database file is whole, read as immutable, which makes no -shm; after a
    # crash the -wal holds the latest settings, and its -shm is there already.
    mode = "mode=ro" if database.with_name(database.name + "-wal").exists() else "immutable=1"
    try:
        connection = sqlite3.connect(f"{database.as_uri()}?{mode}", uri=True, timeout=1.0)
        try:
            rows = connection.execute(
                "SELECT key, value FROM meta WHERE key IN (?, ?, ?)",
                (EXECUTOR, PROBE, LISTEN),
            ).fetchall()
        finally:
            connection.close()
    except sqlite3.Error:
        return {}
    found: dict[str, Any] = {}
    for key, value in rows:
        parse = {EXECUTOR: parse_executor, PROBE: parse_probe, LISTEN: parse_listen}[key]
        try:  # (a damaged one is left out: the start says what is wrong with it)
            found[key] = parse(str(value))
        except DamagedSetting:
            continue
    return found


def runs_on_ray(home: Path | None = None) -> bool:
    """Whether the daemon of `home` (None: GPUHERD_HOME's) runs its jobs on a Ray cluster,
    as its last start chose: the running daemon's choice. Read only where a warning depends
    on it (a program not on this machine's PATH, which a cluster's node may have:
    script_files.py)."""
    executor = remembered(paths.home_dir(home)).get(EXECUTOR)
    return executor is not None and executor.kind == "ray"
