"""A small client for the daemon's Unix socket, on the standard library only (fast to import).

Used by the CLI and the Python API. Errors come back as HerdError with the daemon's one line.

It speaks just enough HTTP/1.1 itself (client_http.py), on a plain socket: `http.client` would
cost every CLI call ~12 ms of imports (email.parser, ssl, ...). One request per connection
(`Connection: close`), so there is no keep-alive, pipelining or connection reuse to get right.
"""

from __future__ import annotations

import contextlib
import json
import socket
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from gpuherd import paths
from gpuherd.body_cap import MAX_BODY_BYTES, too_large
from gpuherd.client_http import (
    BadResponse,
    Response,
    error_of,
    send,
    send_and_answer,
    with_query,
)
from gpuherd.client_wait import (
    Sent,
    Waited,
    answers,
    done_later,
    gone_while_waiting,
    lost,
    no_answer,
    sender,
    silent_at_most,
)
from gpuherd.daemon_presence import SOCKET_BACK_WITHIN, lock_holder, socket_gone
from gpuherd.errors import (
    DaemonError,
    HerdError,
    InvalidValue,
    NoAnswer,
    NotFound,
    NotRunning,
    StoppedMeanwhile,
    Suspended,
)
from gpuherd.gc_pause import collector_paused
from gpuherd.home_header import QueueKnown
from gpuherd.keep_alive import HEADER, silence_limit
from gpuherd.socket_found import socket_elsewhere
from gpuherd.socket_peer import refuse_another_users
from gpuherd.wait_removed import WAIT_OVER

WAIT_CHUNK = 500
"""Job ids per `GET /jobs/wait`, the wait of a daemon older than its POST: they travel in the
query string, which the daemon's HTTP parser caps (a wait for 30,000 ids in one call lost the
connection)."""
WAIT_POST_CHUNK = 100_000
"""Job ids per `POST /jobs/wait`, the most the daemon takes (wire_requests.WAIT_MOST_IDS, not
imported: the CLI's start would pay for the wire's dataclasses): ~0.7 MB of JSON, and ~0.05 s
of the daemon's loop; 100,000 ids in 500s took 200 requests, 1.5 s past a wait's timeout."""
READS_BY_POST = frozenset({"/jobs/wait"})
"""POSTs that change nothing: a connection lost midway leaves nothing maybe done."""
WAIT_POLL = 30.0
"""Longest single wait the daemon is asked for (a long poll; then it is asked again)."""
RESTART_GRACE = 60.0
"""Seconds a wait gives a daemon that went away midway to come back (a restart to upgrade):
the jobs go on meanwhile, and a notebook's overnight wait should too."""
POLL_AT_LEAST = 1.0
"""Seconds a start's poll of its new daemon waits for an answer when less is left of the
start's own timeout (a daemon that listens but does not serve yet holds a poll until it
answers): a serving daemon answers in milliseconds, but a poll cut shorter could miss one on
a busy machine."""


class Client:
    def __init__(
        self,
        home: str | Path | None = None,
        timeout: float | None = 60.0,
        waits_for_socket: bool = True,
    ) -> None:
        self.home = paths.home_dir(home)
        self.socket_path = paths.socket_path(self.home)
        self.timeout = timeout
        self.waits_for_socket = waits_for_socket
        """False: a daemon that holds the home's lock but does not listen is not waited for
        (SOCKET_BACK_WITHIN): `daemon start` polls the daemon it started on its own clock."""
        self.waits_by_get = False
        """True once the daemon refused `POST /jobs/wait` as an older one does."""
        self.answered = False  # (once one has: a command's daemon not running went since)
        self.queue = QueueKnown()  # (its job ids: a home made again gives them to others)

    def get(self, path: str, **query: Any) -> Any:
        return self.request("GET", with_query(path, query))

    def post(self, path: str, body: Any = None) -> Any:
        return self.request("POST", path, {} if body is None else body)

    def delete(self, path: str) -> Any:
        return self.request("DELETE", path)

    def request(self, method: str, path: str, body: Any = None, raw: bool = False) -> Any:
        payload = None if body is None else json.dumps(body).encode()
        if payload is not None and len(payload) > MAX_BODY_BYTES:  # the daemon would refuse it
            raise HerdError(too_large("/api/v1" + path, len(payload)))
        changes = method != "GET" and path not in READS_BY_POST
        # The file holds a reference to the socket: both must be closed to free it.
        with self._connect() as sock, answers(sock, self.home, self.timeout) as file:
            out = Sent(sender(sock, file))
            try:
                response = send_and_answer(out, file, method, path, payload, self.home)
                data = response.read()
                self.answered = True
            except TimeoutError:  # (the socket's own: client_wait waits for it to be ready)
                raise no_answer(self.home, self.timeout) from None
            except NoAnswer as exc:  # a stopped or hung daemon reads the request once it runs
                raise (done_later(exc, path, body) if changes and out.whole else exc) from None
            except (OSError, BadResponse) as exc:
                raise lost(exc, done_maybe=changes) from exc  # (the socket's words: its cause)
        if response.status >= 400:
            raise error_of(response.status, data)
        if raw:
            return data.decode(errors="replace")
        with collector_paused():  # a listing of 100,000 jobs: 0.7 -> 0.5 s (gc_pause.py)
            answer = json.loads(data) if data else None
        self.queue.answered(answer)
        return answer

    def download(self, path: str, **query: Any) -> Iterator[bytes]:
        """A GET's body in pieces as they arrive: a log of gigabytes never sits in memory."""
        with self._connect() as sock, answers(sock, self.home, self.timeout) as file:
            try:
                send(sender(sock, file), "GET", with_query(path, query), None, self.home)
                response = Response(file)
                if response.status >= 400:
                    raise error_of(response.status, response.read())
                yield from response.pieces()
            except TimeoutError:
                raise no_answer(self.home, self.timeout) from None
            except (OSError, BadResponse) as exc:
                raise lost(exc) from exc

    def stream(self, path: str, **query: Any) -> Iterator[tuple[str, Any]]:
        """Server-sent events from `path` as (event name, decoded JSON data) pairs.

        Each event is yielded as soon as its blank line arrives: log follows and event
        streams never end on their own, so nothing may wait for the end of the body. Its
        silence is waited through for as long as the daemon keeps it alive (keep_alive.py);
        NoAnswer once it missed its keep-alives, Suspended as soon as it is seen stopped.
        """
        with self._connect() as sock, answers(sock, self.home, self.timeout) as file:
            try:
                send(sender(sock, file), "GET", with_query(path, query), None, self.home)
                response = Response(file)
                if response.status >= 400:
                    raise error_of(response.status, response.read())
                limit = silence_limit(response.headers.get(HEADER))
                silent_at_most(file, None if self.timeout is None else limit)
                event, data = "message", ""
                for line in response.lines():
                    text = line.decode().rstrip("\r\n")
                    if text.startswith("event:"):
                        event = text[6:].strip()
                    elif text.startswith("data:"):
                        data += text[5:].strip()
                    elif not text and data:  # (a keep-alive, `: keep-alive`, has none)
                        yield event, json.loads(data)
                        event, data = "message", ""
            except TimeoutError:
                raise no_answer(self.home, self.timeout) from None
            except (OSError, BadResponse) as exc:
                raise lost(exc) from exc

    def wait(
        self,
        ids: Sequence[int],
        deadline: float | None = None,
        on_gone: Callable[[], None] | None = None,
    ) -> tuple[dict[int, str], bool]:
        """(each job's last state seen, whether all have finished): `wait_for`'s."""
        waited = self.wait_for(ids, deadline, on_gone)
        return waited.states, waited.done

    def wait_for(
        self,
        ids: Sequence[int],
        deadline: float | None = None,
        on_gone: Callable[[], None] | None = None,
        answered: bool = False,
    ) -> Waited:
        """Wait until every job of `ids` has finished, or `deadline` (a `time.monotonic()`
        value) has passed: each job's last state seen, whether all have finished, and how
        those that did not succeed ended.

        Asks about WAIT_POST_CHUNK jobs at a time (WAIT_CHUNK of an older daemon), each chunk
        until it is done; at the deadline the chunks not asked about yet are read once, so
        every job has a state. A daemon that goes away midway (or before the first ask, where
        one `answered` the caller) gets RESTART_GRACE seconds to come back (`on_gone` is
        called when it went), then the wait goes on with the new one."""
        states: dict[int, str] = {}
        endings: dict[int, dict[str, Any]] = {}
        left = list(dict.fromkeys(ids))
        done = first = True
        while left:
            size = WAIT_CHUNK if self.waits_by_get else WAIT_POST_CHUNK
            chunk, rest = left[:size], left[size:]
            seconds = WAIT_POLL
            if deadline is not None:
                seconds = 0.0 if not done else min(seconds, max(0.0, deadline - time.monotonic()))
            try:
                answer = self._waited(chunk, seconds)
            except _OlderDaemon:
                continue  # asked again, in chunks an older daemon takes
            except DaemonError as exc:
                none_ran = first and not answered and isinstance(exc, NotRunning)
                if none_ran or isinstance(exc, Suspended):
                    raise  # (a stopped one answers none meanwhile)
                self.back_or_gone(exc, deadline, on_gone)
                continue
            finally:
                first = False
            states.update((int(k), v) for k, v in answer["states"].items())
            # (An older daemon answers no endings: its jobs are then named by state alone.)
            endings.update((int(k), v) for k, v in answer.get("endings", {}).items())
            if answer["done"] or not done:
                left = rest
            elif deadline is not None and time.monotonic() >= deadline:
                done, left = False, rest
            else:  # asked again: those of the chunk still going (one that ended, then went
                # in a `clean`, was answered `removed`, its end lost, and failed the wait)
                left = [i for i in chunk if states.get(i) not in WAIT_OVER] + rest
        return Waited(states, done, endings)

    def _waited(self, ids: list[int], seconds: float) -> Any:
        """The daemon's answer to one wait for `ids` of up to `seconds`; _OlderDaemon when it
        refused the POST as a daemon from before it does (its GET takes WAIT_CHUNK ids)."""
        if self.waits_by_get:
            return self.get("/jobs/wait", ids=ids, timeout=seconds)
        try:
            return self.post("/jobs/wait", {"ids": ids, "timeout": seconds})
        except (InvalidValue, NotFound) as exc:
            # Its `/jobs/{action}` takes the POST: it refuses the field `timeout`, or (older
            # still, taking unknown fields) the action `wait`. Nothing was done.
            said = str(exc)
            if "timeout: unknown field" not in said and "unknown action 'wait'" not in said:
                raise
        self.waits_by_get = True
        raise _OlderDaemon

    def comes_back(self, deadline: float | None, on_gone: Callable[[], None] | None) -> bool:
        """Whether a daemon that is not stopping answers within RESTART_GRACE (and before
        `deadline`). One that is stopping still answers a while, saying so. Not "another
        pid than the first answer's": a daemon restarted before this client looked again (it
        was suspended, or slow) gave that first answer, and the wait gave up on it."""
        if on_gone is not None:
            on_gone()
        give_up = time.monotonic() + RESTART_GRACE
        if deadline is not None:
            give_up = min(give_up, deadline)
        while time.monotonic() < give_up:
            time.sleep(0.2)
            if self._serving():
                return True
        return False

    def back_or_gone(
        self, exc: DaemonError, deadline: float | None, on_gone: Callable[[], None] | None
    ) -> None:
        """Return once a daemon answers again (`comes_back`) after a wait's lost `exc`; else
        raise `exc` if the wait's own `deadline` passed meanwhile, or the line that says to
        start one (gone_while_waiting), caused by `exc`."""
        if self.comes_back(deadline, on_gone):
            return
        if deadline is not None and time.monotonic() >= deadline:
            raise exc
        raise DaemonError(gone_while_waiting(self.home)) from exc

    def _serving(self) -> bool:
        try:
            return self.get("/daemon").get("stopping") is None
        except DaemonError:
            return False

    def last_word(self, since: int) -> str | None:
        """The daemon's last word (why a start failed, what a stop left undone): the last
        `gpuherd daemon:` line its log got after byte `since` (what the log held before the
        start or stop: an earlier one's word is not this one's); None if it said nothing."""
        try:
            with paths.daemon_log(self.home).open("rb") as log:
                log.seek(since)
                lines = log.read().decode(errors="replace").splitlines()
        except OSError:
            return None
        failed = [line for line in lines if line.startswith("gpuherd daemon: ")]
        return failed[-1].removeprefix("gpuherd daemon: ") if failed else None

    def answer_by(self, deadline: float) -> None:
        """Wait for an answer only until `deadline` (time.monotonic), at least POLL_AT_LEAST
        s: a start's polls of its new daemon, on the start's own clock."""
        self.timeout = max(POLL_AT_LEAST, deadline - time.monotonic())

    def is_up(self) -> bool:
        try:
            self.get("/daemon")
        except DaemonError:
            return False
        return True

    def _connect(self, timeout: float | None = -1.0) -> socket.socket:
        timeout = self.timeout if timeout == -1.0 else timeout
        try:
            return self._reach(timeout)
        except (FileNotFoundError, ConnectionRefusedError):
            pass
        # None listens: a daemon that runs (it holds the home's lock) makes its socket again
        # if a cleaner removed it, or is about to listen (it starts), and is waited for.
        holder = seen = lock_holder(self.home)
        give_up = time.monotonic() + (SOCKET_BACK_WITHIN if self.waits_for_socket else 0.0)
        while holder is not None and time.monotonic() < give_up:
            time.sleep(0.1)
            with contextlib.suppress(FileNotFoundError, ConnectionRefusedError):
                return self._reach(timeout)
            holder = lock_holder(self.home)
        if holder is not None:
            raise DaemonError(socket_gone(self.home, holder, self.socket_path))
        # (A lock let go as we looked: stopped meanwhile. A restart under way: waited for.)
        from gpuherd.client_restart import after_restart  # (the error path alone)

        none = NotRunning if seen is None else StoppedMeanwhile
        return after_restart(self.home, lambda: self._reach(timeout), none, self.waits_for_socket)

    def _reach(self, timeout: float | None) -> socket.socket:
        """A socket connected to the daemon's, where the home's note says it is when it is
        not where it was looked for; FileNotFoundError or ConnectionRefusedError when none
        listens there."""
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            if timeout is not None:
                sock.settimeout(timeout)
            sock.connect(str(self.socket_path))
        except (FileNotFoundError, ConnectionRefusedError, NotADirectoryError) as exc:
            sock.close()
            found = socket_elsewhere(self.home, self.socket_path)
            if found is not None:  # the daemon runs with another XDG_RUNTIME_DIR, or moved
                self.socket_path = found  # its socket (daemon_home.SocketKeeper)
                return self._reach(timeout)
            if isinstance(exc, NotADirectoryError):
                raise DaemonError(paths.not_a_folder(self.home, self.socket_path)) from None
            raise
        except PermissionError:
            sock.close()
            raise DaemonError(
                f"permission denied on {self.socket_path}: the daemon belongs to another user"
            ) from None
        except TimeoutError:  # its backlog is full: it has not accepted for a long while
            sock.close()
            raise no_answer(self.home, timeout) from None
        except BaseException:
            sock.close()
            raise
        refuse_another_users(sock, self.socket_path)  # before a byte is sent to it
        try:
            if pid := self.queue.another_daemon(sock):  # (asked on a second connection)
                self.queue.check(self.home, pid, lambda: self.get("/daemon"))
            if self.queue.gone:
                raise NotFound(self.queue.gone)
        except BaseException:
            sock.close()
            raise
        return sock


class _OlderDaemon(Exception):
    """The daemon takes no `POST /jobs/wait` (Client._waited)."""
