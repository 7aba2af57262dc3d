"""`gpuherd log` through a real daemon: the last lines, following from them, logs of any size.

A log is served as the job wrote it, streamed in pieces: a log of gigabytes must neither sit
in the daemon's memory (it holds the queue) nor in the client's.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psutil
import pytest

import gpuherd as gpuherd_api
from conftest import Herd, read_line, retried_after, wait_for
from gpuherd import client as client_module
from gpuherd.errors import DaemonError, HerdError, NotFound


def gpuherd(herd: Herd, *args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "gpuherd", *args],
        env=herd.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


class Reader:
    """A running `gpuherd log ...`, read a line at a time."""

    def __init__(self, herd: Herd, *args: str) -> None:
        self.proc = gpuherd(herd, *args)
        self._buffer = bytearray()
        self._err = bytearray()

    def line(self) -> bytes:
        assert self.proc.stdout is not None
        return read_line(self.proc.stdout.fileno(), self._buffer)

    def noted_held(self, job_id: int) -> None:
        """Wait for its note on stderr that the job is held (it has seen the job waiting)."""
        assert self.proc.stderr is not None
        line = read_line(self.proc.stderr.fileno(), self._err)
        assert line.decode() + "\n" == held_note(job_id), line

    def connected(self) -> None:
        """Wait until it has reached the daemon (its request is on the way)."""
        process = psutil.Process(self.proc.pid)
        wait_for(lambda: process.net_connections(kind="unix"), what="the follow to connect")


@contextmanager
def reading(herd: Herd, *args: str) -> Iterator[Reader]:
    """`gpuherd log ARGS`, killed at the end whatever the test found."""
    reader = Reader(herd, *args)
    try:
        yield reader
    finally:
        reader.proc.kill()
        reader.proc.communicate()


def peak_memory_kib(pid: int) -> int:
    """The process's peak resident memory so far (VmHWM)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError(f"no VmHWM for {pid}")


def held_note(job_id: int) -> str:
    """What `log -f` of a held job says on stderr before it waits (a silent wait looked hung)."""
    return (
        f"gpuherd: job {job_id} has not started yet: held; its log follows once it starts "
        f"(gpuherd release {job_id} lets it run)\n"
    )


def test_lines_prints_only_the_last_lines_of_either_stream(shared_daemon: Herd) -> None:
    ended = shared_daemon.submit("printf 'a\\nb\\nc\\nd\\n'; printf 'e1\\ne2' >&2")
    shared_daemon.wait_state(ended, "succeeded")
    assert shared_daemon.cli("log", str(ended), "-n", "2").stdout == "c\nd\n"
    assert shared_daemon.cli("log", str(ended), "--lines", "9").stdout == "a\nb\nc\nd\n"
    assert shared_daemon.cli("log", str(ended), "--stderr", "-n", "1").stdout == "e2"  # no newline
    assert shared_daemon.cli("log", str(ended)).stdout == "a\nb\nc\nd\n"


def test_follow_with_lines_starts_at_the_tail_then_follows(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    go = tmp_path / "go"
    job_id = shared_daemon.submit(f"seq 1 5; while [ ! -e {go} ]; do sleep 0.02; done; echo later")
    shared_daemon.wait_state(job_id, "running")
    wait_for(
        lambda: shared_daemon.cli("log", str(job_id)).stdout == "1\n2\n3\n4\n5\n", what="5 lines"
    )
    with reading(shared_daemon, "log", str(job_id), "-f", "-n", "2") as follow:
        assert follow.line() == b"4"
        assert follow.line() == b"5"
        go.touch()
        assert follow.line() == b"later"
        assert follow.proc.wait(timeout=15) == 0


def test_a_huge_log_is_served_byte_for_byte_without_swelling_the_daemon(daemon: Herd) -> None:
    size = 100_000_000
    # Not valid UTF-8 at the end: served as written, not "repaired".
    job_id = daemon.submit(f"head -c {size} /dev/zero | tr '\\0' x; printf '\\377\\376\\n'")
    daemon.wait_state(job_id, "succeeded", timeout=60)
    pid = daemon.pid
    before = peak_memory_kib(pid)
    out = subprocess.run(
        [sys.executable, "-m", "gpuherd", "log", str(job_id)],
        env=daemon.env,
        capture_output=True,
        timeout=60,
        check=True,
    ).stdout
    assert len(out) == size + 3 and out[:3] == b"xxx" and out[-4:] == b"x\xff\xfe\n"
    # Read whole, the log took three times its size in the daemon (+300 MB here).
    assert peak_memory_kib(pid) - before < 40 * 1024


def test_a_reader_that_leaves_early_ends_log_quietly(shared_daemon: Herd) -> None:
    job_id = shared_daemon.submit("seq 1 300000")
    shared_daemon.wait_state(job_id, "succeeded")
    with reading(shared_daemon, "log", str(job_id)) as reader:
        stdout = reader.proc.stdout
        assert stdout is not None and stdout.read(6) == b"1\n2\n3\n"
        stdout.close()  # as `| head -3` does
        _, stderr = reader.proc.communicate(timeout=30)
        assert (reader.proc.returncode, stderr) == (0, b"")


def test_follow_never_splits_a_character_between_two_reads(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    go = tmp_path / "go"
    # 65,535 bytes, then a 3-byte █: the first 64 KiB read ends inside it.
    job_id = shared_daemon.submit(
        f"head -c 65535 /dev/zero | tr '\\0' x; printf '\\342\\226\\210\\n'; "
        f"while [ ! -e {go} ]; do sleep 0.02; done; echo end"
    )
    wait_for(lambda: len(shared_daemon.cli("log", str(job_id)).stdout) == 65537, what="the bar")
    with reading(shared_daemon, "log", str(job_id), "-f") as follow:
        assert follow.line() == b"x" * 65535 + "█".encode()
        go.touch()
        assert follow.line() == b"end"
        assert follow.proc.wait(timeout=15) == 0


def test_follow_waits_for_a_queued_job_and_goes_on_through_its_retries(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    go = tmp_path / "go"
    job_id = shared_daemon.submit(
        "--hold",
        "--retries",
        "1",
        f'echo "try $GPUHERD_ATTEMPT"; [ "$GPUHERD_ATTEMPT" = 2 ] || exit 3; '
        f"while [ ! -e {go} ]; do sleep 0.02; done; echo done",
    )
    with reading(shared_daemon, "log", str(job_id), "-f") as follow:
        follow.noted_held(job_id)
        shared_daemon.cli("release", str(job_id))
        assert follow.line() == b"try 1"
        assert follow.line() == b"try 2"
        assert follow.proc.poll() is None  # attempt 2 still runs
        go.touch()
        assert follow.line() == b"done"
        assert follow.proc.wait(timeout=15) == 0
        assert follow.proc.stderr is not None
        began = f"gpuherd: job {job_id}: attempt 2 began\n"
        assert follow.proc.stderr.read().decode() == began
    assert shared_daemon.job(job_id)["state"] == "succeeded"


def test_follow_of_a_job_cancelled_before_it_started_ends(shared_daemon: Herd) -> None:
    job_id = shared_daemon.submit("--hold", "echo never")
    with reading(shared_daemon, "log", str(job_id), "-f") as follow:
        follow.noted_held(job_id)
        shared_daemon.cli("kill", str(job_id))
        out, err = follow.proc.communicate(timeout=15)  # it ends, saying the job never ran
        never = f"gpuherd: error: job {job_id} never ran (cancelled): it has no log\n"
        assert (follow.proc.returncode, out, err.decode()) == (1, b"", never)


def test_without_an_id_log_is_of_the_job_submitted_last(daemon: Herd, tmp_path: Path) -> None:
    empty = daemon.cli("log", check=False)
    assert empty.returncode == 1 and "no job yet" in empty.stderr
    first = daemon.submit("echo first")
    daemon.wait_state(first, "succeeded")
    assert daemon.cli("log").stdout == "first\n"
    go = tmp_path / "go"
    last = daemon.submit("--hold", f"echo last; while [ ! -e {go} ]; do sleep 0.02; done")
    with reading(daemon, "log", "-f") as follow:  # as right after a `gpuherd submit`
        follow.connected()
        daemon.cli("release", str(last))
        assert follow.line() == b"last"
        go.touch()
        assert follow.proc.wait(timeout=15) == 0


def test_follow_of_a_job_removed_meanwhile_says_so_and_fails(shared_daemon: Herd) -> None:
    job_id = shared_daemon.submit("--hold", "echo never")
    with reading(shared_daemon, "log", str(job_id), "-f") as follow:
        follow.noted_held(job_id)
        follow.connected()  # (its follow's stream: the note's request came before)
        shared_daemon.cli("rm", str(job_id))
        out, err = follow.proc.communicate(timeout=15)  # (before: silently, with exit 0)
        removed = f"gpuherd: error: job {job_id} was removed before it ran: it has no log\n"
        assert (follow.proc.returncode, out, err.decode()) == (1, b"", removed)


def test_submit_follow_and_a_python_follow_of_a_job_removed_meanwhile_say_so(
    shared_daemon: Herd,
) -> None:
    # The follow's own stream says the job was removed (its `end`): `submit --follow` said
    # `no job N: gpuherd ls --all lists the jobs there are`, and `Job.follow()` just ended.
    with reading(shared_daemon, "submit", "--hold", "--follow", "--", "echo never") as follow:
        assert follow.proc.stderr is not None  # (stdout is the log's alone)
        buffer = bytearray()  # (one for both lines: a read may take in more than one)
        said, err = (read_line(follow.proc.stderr.fileno(), buffer) for _ in range(2))
        job_id = int(said.split()[-1])  # "submitted job N"
        assert b"is held" in err
        follow.connected()
        shared_daemon.cli("rm", str(job_id))
        out, err = follow.proc.communicate(timeout=15)
        removed = f"gpuherd: error: job {job_id} was removed before it ran: it has no log\n"
        assert (follow.proc.returncode, err.decode()) == (1, removed), out

    herd = gpuherd_api.connect(shared_daemon.home, start=False)
    job = herd.submit(["echo", "never"], hold=True)
    texts = job.follow()  # (its check that the job exists: a request of its own, done now)
    me = psutil.Process()
    before = len(me.net_connections(kind="unix"))
    raised: list[BaseException] = []
    reader = threading.Thread(target=_drain, args=(texts, raised), daemon=True)
    reader.start()
    wait_for(lambda: len(me.net_connections(kind="unix")) > before, what="the follow's stream")
    shared_daemon.cli("rm", str(job.id))
    reader.join(15)
    assert [str(e) for e in raised] == [f"job {job.id} was removed before it ran: it has no log"]
    assert isinstance(raised[0], NotFound)


def test_a_follow_behind_a_job_removed_once_it_ended_gives_the_whole_log_and_its_end(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    # The reader is slow: the job ends, and is removed, while megabytes of its log are still
    # to go through. The follow sends them all and ends as the job's end does (exit 0), not
    # "removed before it ran" (review: it said so once caught up, whatever had happened).
    size, go = 8_000_000, tmp_path / "go"
    wait = f"while [ ! -e {go} ]; do sleep 0.02; done"
    job_id = shared_daemon.submit("--", f"head -c {size} /dev/zero | tr '\\0' x; {wait}")
    follow = gpuherd(shared_daemon, "log", "-f", str(job_id))
    try:
        assert follow.stdout is not None
        first = os.read(follow.stdout.fileno(), 1)  # it follows; the rest waits in the pipe
        go.touch()
        assert shared_daemon.wait_state(job_id, "succeeded")["state"] == "succeeded"
        shared_daemon.cli("rm", str(job_id))
        out, err = follow.communicate(timeout=60)  # read only now
    finally:
        if follow.poll() is None:
            follow.kill()
            follow.communicate()
    assert (follow.returncode, len(first + out), err.decode()) == (0, size, "")


def _drain(texts: Iterator[str], raised: list[BaseException]) -> None:
    try:
        for _ in texts:
            pass
    except BaseException as exc:  # (kept for the test's thread to look at)
        raised.append(exc)


def test_daemon_log_prints_and_follows_the_daemons_own_log(daemon: Herd) -> None:
    serving = daemon.cli("daemon", "log", "-n", "1").stdout
    assert serving.count("\n") == 1 and f"daemon {daemon.pid} serving {daemon.home}" in serving
    with reading(daemon, "daemon", "log", "-f", "-n", "0") as follow:
        pid = daemon.pid
        # It reads from the end of the log once it has it open: stop only after that.
        log, reader = str(daemon.home / "daemon.log"), psutil.Process(follow.proc.pid)
        wait_for(lambda: log in [f.path for f in reader.open_files()], what="the log opened")
        daemon.cli("daemon", "stop")  # logs its last line while the follow reads
        assert f"daemon {pid} stopped".encode() in follow.line()
    # No daemon runs now: the log is read from the home all the same.
    assert daemon.cli("daemon", "log").stdout.endswith(f"daemon {pid} stopped\n")


def test_daemon_log_of_a_home_where_no_daemon_started_says_so(herd: Herd) -> None:
    proc = herd.cli("daemon", "log", check=False)
    assert proc.returncode != 0
    assert proc.stderr.splitlines() == [
        f"gpuherd: error: no daemon log at {herd.home / 'daemon.log'} yet: "
        "no daemon has started there"
    ]


def assert_log_gone(herd: Herd, job_id: int, path: Path, *args: str, folder: bool) -> None:
    """`gpuherd log JOB ARGS` says in one line that the log file is gone, and fails."""
    proc = herd.cli("log", str(job_id), *args, check=False, timeout=15)
    why = " (its folder was deleted)" if folder else ""
    assert (proc.returncode, proc.stdout) == (1, ""), proc.stderr
    assert proc.stderr.splitlines() == [
        f"gpuherd: error: job {job_id}: its log file is gone: {path}{why}"
    ]


def test_log_of_a_job_whose_folder_was_deleted_says_the_log_is_gone(shared_daemon: Herd) -> None:
    # Two attempts (the first fails, --retries 1), then the whole job folder is deleted.
    job_id = shared_daemon.submit(
        "--retries", "1", 'echo "try $GPUHERD_ATTEMPT"; [ "$GPUHERD_ATTEMPT" = 2 ]'
    )
    shared_daemon.wait_state(job_id, "succeeded")
    assert shared_daemon.cli("log", str(job_id)).stdout == "try 2\n"
    attempts = {a["number"]: Path(a["dir"]) for a in shared_daemon.job(job_id)["attempts"]}
    shutil.rmtree(shared_daemon.job(job_id)["job_dir"])
    for args, path in [
        ((), attempts[2] / "stdout.log"),
        (("--stderr",), attempts[2] / "stderr.log"),
        (("--attempt", "1"), attempts[1] / "stdout.log"),
        (("-n", "3"), attempts[2] / "stdout.log"),
        (("-f",), attempts[2] / "stdout.log"),
        (("-f", "--attempt", "1"), attempts[1] / "stdout.log"),
    ]:
        assert_log_gone(shared_daemon, job_id, path, *args, folder=True)


def test_log_of_a_finished_job_whose_log_file_was_deleted_says_so(shared_daemon: Herd) -> None:
    job_id = shared_daemon.submit("echo out; echo err >&2")
    shared_daemon.wait_state(job_id, "succeeded")
    path = Path(shared_daemon.job(job_id)["attempts"][0]["dir"]) / "stdout.log"
    path.unlink()
    assert_log_gone(shared_daemon, job_id, path, folder=False)
    assert_log_gone(shared_daemon, job_id, path, "-f", folder=False)
    assert shared_daemon.cli("log", str(job_id), "--stderr").stdout == "err\n"  # the other is there


def test_log_of_a_running_job_whose_folder_was_deleted_says_so(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    go = tmp_path / "go"
    job_id = shared_daemon.submit(f"echo started; while [ ! -e {go} ]; do sleep 0.02; done")
    wait_for(lambda: shared_daemon.cli("log", str(job_id)).stdout == "started\n", what="its output")
    job = shared_daemon.job(job_id)
    shutil.rmtree(job["job_dir"])
    path = Path(job["attempts"][0]["dir"]) / "stdout.log"
    assert_log_gone(shared_daemon, job_id, path, folder=True)
    go.touch()
    shared_daemon.wait_state(job_id, "succeeded", "failed")


def test_follow_goes_on_through_a_daemon_crash_and_the_retry_made_meanwhile(
    daemon: Herd, tmp_path: Path
) -> None:
    go = tmp_path / "go"
    job_id = retried_after(daemon, go, say_after=True)
    process = Path(daemon.job(job_id)["job_dir"]) / "attempt-1" / "process"
    with reading(daemon, "log", str(job_id), "-f") as follow:
        assert follow.line() == b"start 1"
        daemon.kill9()
        go.touch()  # attempt 1 goes on, writes its last line and fails while no daemon runs
        wait_for(lambda: "exit 3" in process.read_text(), what="attempt 1 to end")
        daemon.start("--fake-gpus", "4")  # recovery finds exit 3 and retries
        assert follow.line() == b"after 1"
        assert follow.line() == b"start 2"
        assert follow.line() == b"after 2"
        out, err = follow.proc.communicate(timeout=30)
        assert (follow.proc.returncode, out) == (0, b"")
        assert err.decode().splitlines() == [
            "gpuherd: the daemon went away; waiting for it to come back",
            f"gpuherd: job {job_id}: attempt 2 began",
        ]
    assert daemon.job(job_id)["state"] == "succeeded"


def test_a_follow_of_one_attempt_resumes_at_its_byte_after_a_restart(
    daemon: Herd, tmp_path: Path
) -> None:
    go = tmp_path / "go"
    job_id = daemon.submit(f"echo one; while [ ! -e {go} ]; do sleep 0.02; done; echo two")
    with reading(daemon, "log", str(job_id), "-f", "--attempt", "1") as follow:
        assert follow.line() == b"one"
        daemon.cli("daemon", "stop")  # jobs go on
        daemon.start("--fake-gpus", "4")
        go.touch()
        assert follow.line() == b"two"
        assert follow.proc.wait(timeout=30) == 0
    assert daemon.job(job_id)["state"] == "succeeded"


def test_a_python_follow_gives_up_when_no_daemon_comes_back(
    daemon: Herd, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(client_module, "RESTART_GRACE", 0.5)
    job_id = daemon.submit("echo one; sleep 60")
    texts = gpuherd_api.connect(daemon.home, start=False).job(job_id).follow()
    assert next(texts) == "one\n"
    daemon.kill9()
    with pytest.raises(DaemonError, match="no daemon came back"):
        next(texts)


def test_a_follow_is_of_one_attempt_or_from_one_not_both(shared_daemon: Herd) -> None:
    job_id = shared_daemon.submit("echo x")
    shared_daemon.wait_state(job_id, "succeeded")
    with pytest.raises(HerdError, match="not both"):
        next(shared_daemon.client.stream(f"/jobs/{job_id}/log/follow", attempt=1, from_attempt=1))
    resumed = shared_daemon.client.stream(f"/jobs/{job_id}/log/follow", from_attempt=1, offset=1)
    assert [event for event, _ in resumed] == ["message", "end"]  # the newline after x


def test_a_job_that_wrote_only_to_stderr_is_pointed_at_it(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    quiet = shared_daemon.submit("echo 'epoch 1 loss 0.5' >&2")  # as logging and tqdm write
    shared_daemon.wait_state(quiet, "succeeded")
    shown = shared_daemon.cli("log", str(quiet))
    hint = f"gpuherd: job {quiet} wrote nothing to stdout, but to stderr: "  # (it ended)
    assert (shown.stdout, shown.stderr) == ("", hint + f"gpuherd log {quiet} --stderr\n")
    followed = shared_daemon.cli("log", "-f", str(quiet))
    assert followed.stderr == hint + f"gpuherd log -f {quiet} --stderr\n"
    talks = shared_daemon.submit("echo out; echo err >&2")
    shared_daemon.wait_state(talks, "succeeded")
    assert shared_daemon.cli("log", str(talks)).stderr == ""
    assert shared_daemon.cli("log", "--stderr", str(quiet)).stderr == ""


def test_a_follow_of_an_earlier_attempt_ends_once_a_later_one_began(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    go = tmp_path / "go"
    job_id = shared_daemon.submit(
        "--retries",
        "1",
        f'echo "att $GPUHERD_ATTEMPT"; [ "$GPUHERD_ATTEMPT" = 2 ] || exit 1; '
        f"while [ ! -e {go} ]; do sleep 0.02; done",
    )
    wait_for(lambda: shared_daemon.job(job_id)["attempt"] == 2, what="attempt 2")
    done = shared_daemon.cli("log", "-f", "--attempt", "1", str(job_id), timeout=15)
    assert (done.returncode, done.stdout) == (0, "att 1\n")  # while attempt 2 still runs
    assert shared_daemon.job(job_id)["state"] == "running"
    go.touch()
    shared_daemon.wait_state(job_id, "succeeded")


def test_the_log_of_a_job_that_never_ran_says_so(shared_daemon: Herd) -> None:
    daemon = shared_daemon
    job_id = daemon.submit("--hold", "--", "true")
    waiting = daemon.cli("log", str(job_id), check=False)
    said = f"gpuherd: error: job {job_id} has not started yet (held)\n"  # was "(None)" for
    assert (waiting.returncode, waiting.stderr) == (1, said)  # a job with no reason
    daemon.cli("kill", str(job_id))
    ended = daemon.cli("log", str(job_id), check=False)
    never = f"gpuherd: error: job {job_id} never ran (cancelled): it has no log\n"
    assert (ended.returncode, ended.stdout, ended.stderr) == (1, "", never)


def test_a_follow_writes_bytes_that_are_not_utf8_as_the_log_holds_them(
    shared_daemon: Herd,
) -> None:
    # `log -f` wrote U+FFFD (3 bytes) for each, where `log` gives the job's own bytes.
    job_id = shared_daemon.submit("--", r"printf 'caf\351 \377\n\342\226\210 ok\n'")
    shared_daemon.wait_state(job_id, "succeeded")

    def output(*args: str) -> bytes:
        run = [sys.executable, "-m", "gpuherd", *args]
        return subprocess.run(run, env=shared_daemon.env, capture_output=True, check=True).stdout

    held = "café".encode("latin-1") + b" \xff\n" + "█ ok\n".encode()
    assert output("log", str(job_id)) == held
    assert output("log", "-f", str(job_id)) == held
    follow = gpuherd_api.connect(shared_daemon.home, start=False).job(job_id).follow()
    assert "".join(follow) == "caf\ufffd \ufffd\n█ ok\n"  # Python gets text, as before


def test_a_submitted_job_removed_before_its_follow_asked_is_said_removed(
    shared_daemon: Herd,
) -> None:
    """`submit --hold --follow` whose job an `rm` removed before the follow's first ask
    reached the daemon (a race the test above can lose on a loaded machine) said `no job 8:
    gpuherd ls --all lists the jobs there are`, as of a job never there."""
    from gpuherd.cli.log_output import FollowPrinter
    from gpuherd.cli.submit_wait import _followed
    from gpuherd.client import Client

    client = Client(shared_daemon.home)
    [job] = client.post(
        "/jobs", {"jobs": [{"command": "true", "cwd": "/", "hold": True, "gpus": 0}]}
    )["ids"]
    shared_daemon.cli("rm", str(job))  # before any follow: its first ask finds no job
    with pytest.raises(NotFound) as said:
        _followed(client, job, False, FollowPrinter(), held=True)
    assert str(said.value) == f"job {job} was removed before it ran: it has no log"
