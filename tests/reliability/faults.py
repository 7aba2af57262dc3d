"""Helpers shared by the reliability tests: scale, figures, processes, SQLite and mounts.

Scale: the CI figures by default; `GPUHERD_SOAK=full` gives the big manual ones (200 jobs and
20 daemon kills in the crash loop, 10,000 soak jobs, more fuzz cases).

Figures: every test that measures something prints one `FIGURES name {...}` line (see it with
`pytest -s`), and appends it as a JSON line to the file named by `GPUHERD_FIGURES` when set;
docs/reliability.md quotes them.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from scale import FULL, scaled  # noqa: F401 (the reliability tests import `scaled` from here)


def record(name: str, **figures: Any) -> None:
    """Report a test's figures: printed, and appended to $GPUHERD_FIGURES as JSON."""
    line = json.dumps({"test": name, "scale": "full" if FULL else "ci", **figures})
    print(f"FIGURES {line}")
    target = os.environ.get("GPUHERD_FIGURES")
    if target:
        with open(target, "a", encoding="utf-8") as f:
            f.write(line + "\n")


NEXT_PID = Path("/proc/sys/kernel/ns_last_pid")


def take_pid(pid: int) -> subprocess.Popen[bytes] | None:
    """A new program that leads a session of its own, numbered `pid`: the kernel gives the
    next process the number after ns_last_pid (root only). None if that cannot be done.

    The counter is the whole machine's: it is set back where it was after, or every process
    started next (other workers' tests) would take numbers freed seconds before, which any
    pid a test still holds by number would then name (waits.pin says what that did)."""
    try:
        before = int(NEXT_PID.read_text())
    except (OSError, ValueError):
        return None
    try:
        for _ in range(100):
            try:
                NEXT_PID.write_text(str(pid - 1))
            except OSError:
                return None
            proc = subprocess.Popen(["sleep", "300"], start_new_session=True)
            if proc.pid == pid:
                return proc
            proc.kill()  # another process of the machine took it first: again
            proc.wait()
        return None
    finally:
        with contextlib.suppress(OSError):
            NEXT_PID.write_text(str(before))


def job_processes(home: Path) -> list[psutil.Process]:
    """Live (non-zombie) processes whose GPUHERD_JOB_DIR lies under `home`: a job's, or its
    children's (a job's environment is inherited by everything it starts)."""
    found = []
    prefix = str(home)
    for proc in psutil.process_iter(["status"]):
        try:
            if proc.info["status"] == psutil.STATUS_ZOMBIE:
                continue
            if proc.environ().get("GPUHERD_JOB_DIR", "").startswith(prefix):
                found.append(proc)
        except (psutil.Error, OSError):
            continue
    return found


def read_only(db: Path) -> sqlite3.Connection:
    """A read-only connection to a gpuherd database (never changes the file)."""
    return sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10)


def query(db: Path, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    conn = read_only(db)
    try:
        return list(conn.execute(sql, args).fetchall())
    finally:
        conn.close()


def integrity(db: Path) -> str:
    """PRAGMA integrity_check of the database: 'ok' when it is intact."""
    rows = query(db, "PRAGMA integrity_check")
    return "; ".join(str(r[0]) for r in rows)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _mount(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["mount", *args], capture_output=True, text=True, timeout=30)


def _unmount(path: Path) -> None:
    for flags in ([], ["-l"]):  # lazily if a process still holds a file in it
        done = subprocess.run(
            ["umount", *flags, str(path)], capture_output=True, text=True, timeout=30
        )
        if done.returncode == 0:
            return


@contextlib.contextmanager
def tmpfs(path: Path, size: str = "512k") -> Iterator[Path]:
    """A small tmpfs mounted on `path` (skips the test where mounting is not permitted)."""
    path.mkdir(parents=True, exist_ok=True)
    done = _mount("-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", str(path))
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield path
    finally:
        _unmount(path)


@contextlib.contextmanager
def read_only_bind(path: Path) -> Iterator[Path]:
    """`path` bind-mounted onto itself, read-only (even root cannot write under it)."""
    path.mkdir(parents=True, exist_ok=True)
    done = _mount("--bind", str(path), str(path))
    if done.returncode != 0:
        pytest.skip(f"cannot bind-mount here: {done.stderr.strip()}")
    try:
        again = _mount("-o", "remount,ro,bind", str(path))
        if again.returncode != 0:
            pytest.skip(f"cannot remount read-only here: {again.stderr.strip()}")
        yield path
    finally:
        _unmount(path)


def grow(path: Path, size: str) -> None:
    """Give a tmpfs made by tmpfs() a new size (room again, whatever filled it)."""
    done = _mount("-o", f"remount,size={size}", str(path))
    assert done.returncode == 0, done.stderr


def remount(path: Path, mode: str) -> None:
    """Switch a bind mount made by read_only_bind to `ro` or `rw`."""
    done = _mount("-o", f"remount,{mode},bind", str(path))
    assert done.returncode == 0, done.stderr


def fill(folder: Path) -> Path:
    """Fill the file system of `folder` until a write fails with ENOSPC; the filler file."""
    filler = folder / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        block = b"\0" * 4096
        with contextlib.suppress(OSError):
            while os.write(fd, block):
                pass
    finally:
        os.close(fd)
    return filler


def elapsed(start: float) -> float:
    return round(time.monotonic() - start, 2)


class CliOutcome:
    def __init__(self, code: int, out: str, err: str) -> None:
        self.code, self.out, self.err = code, out, err


def run_cli(argv: list[str], stdin: bytes = b"") -> CliOutcome:
    """gpuherd.cli.main.main(argv) in this process, its output captured: (exit status, stdout,
    stderr). An exception other than SystemExit escaping it is a traceback a user would have
    seen, so it propagates to the test."""
    from gpuherd.cli.main import main

    out, err = io.BytesIO(), io.BytesIO()
    stdout = io.TextIOWrapper(out, encoding="utf-8", errors="replace", write_through=True)
    stderr = io.TextIOWrapper(err, encoding="utf-8", errors="replace", write_through=True)
    saved = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
    code = 0
    try:
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            try:
                main(argv)
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        sys.stdin = saved
    return CliOutcome(code, out.getvalue().decode(), err.getvalue().decode())
