"""A GPUHERD_HOME driven as a user does: its CLI, its daemon started, crashed or stopped, and
its HTTP over the home's socket (conftest.py re-exports these and gives the fixtures)."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psutil

import forks
import forks_popen
from gpuherd.client import Client
from waits import kill_jobs_under, wait_dead, wait_for, with_words


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


def killed_outright() -> str:
    """What the kernel says of its OOM kills, for a call SIGKILLed that no test meant to kill
    (seen once in CI, never reproduced: was it the OOM killer, or a stale pid's kill?)."""
    try:
        counts = Path("/proc/vmstat").read_text().split("\n")
        said = [line for line in counts if line.startswith("oom_kill ")]
    except OSError:
        said = []
    try:
        kernel = subprocess.run(["dmesg"], capture_output=True, text=True, timeout=10).stdout
        said += [line for line in kernel.splitlines() if "Killed process" in line][-5:]
    except (OSError, subprocess.SubprocessError):
        pass
    return "\nSIGKILLed; the kernel's OOM kills: " + ("; ".join(said) or "(nothing readable)")


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
                + (killed_outright() if proc.returncode == -signal.SIGKILL else "")
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
        """`python -m gpuherd ARGS` left running, its output piped (read it, then end it);
        forked as `cli`'s calls are (forks_popen.py)."""
        return forks_popen.popen(
            "gpuherd",
            list(args),
            env=self.env,
            cwd=self.home.parent,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )

    def json(self, *args: str) -> Any:
        return json.loads(self.cli(*args, "--json").stdout)

    def start(self, *options: str) -> None:
        """`gpuherd daemon start OPTIONS`: forked, its daemon forked too (forks_child.py)."""
        self.cli("daemon", "start", *options)

    def restore(self, backup: Path) -> None:
        """The README's restore: stop the daemon (its jobs run on), move the herd.db* files
        aside together, copy the backup in as herd.db, start a daemon on 2 fake GPUs."""
        self.cli("daemon", "stop")
        aside = self.home / "aside"
        aside.mkdir()
        for part in self.home.glob("herd.db*"):
            part.rename(aside / part.name)
        shutil.copy(backup, self.home / "herd.db")
        # A connection made before refuses an older queue, which gives its ids again
        # (home_header.QueueKnown): a new one, as a notebook connects again.
        self.client = Client(self.home)
        self.start("--fake-gpus", "2")

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

    def post_lines(self, lines: list[str], **fields: Any) -> list[int]:
        """Jobs as `submit_lines` makes them (`fields`: the API's, e.g. hold=True), posted from
        this process: for a test not of `submit`, which spares a CLI start and its hints."""
        job = {"cwd": str(self.home.parent), "env": dict(self.env), **fields}
        jobs = [{"command": line, **job} for line in lines]
        return [int(i) for i in self.client.post("/jobs", {"jobs": jobs})["ids"]]

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
        for pid in with_words("gpuherd.daemon", str(self.home)):
            with contextlib.suppress(psutil.Error):
                found.append(psutil.Process(pid))
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
        kill_jobs_under(self.home, reap=False)


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
