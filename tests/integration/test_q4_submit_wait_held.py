"""`submit --wait --hold` waited silently until someone released the job, which read as a
hang: it says on stderr that the job is held and how to release it. stdout and the exit
status are as before."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from conftest import Herd, read_line, wait_for


@contextmanager
def waits(*commands: subprocess.Popen[bytes]) -> Iterator[None]:
    """The waiting commands ended at the end, killed if a failed check left them waiting."""
    try:
        yield
    finally:
        for command in commands:
            if command.poll() is None:
                command.kill()
            command.communicate()


def test_a_held_job_waited_for_says_how_to_release_it(daemon: Herd) -> None:
    waiting = daemon.popen("submit", "--wait", "--hold", "--", "true")
    with waits(waiting):
        assert waiting.stdout is not None and waiting.stderr is not None
        line = read_line(waiting.stdout.fileno(), bytearray()).decode()
        job_id = int(line.removeprefix("submitted job "))
        said = read_line(waiting.stderr.fileno(), bytearray()).decode()
        assert said == (
            f"gpuherd: job {job_id} is held: waiting until it is released "
            f"(gpuherd release {job_id} lets it run)"
        )
        assert waiting.poll() is None  # it waits on
        daemon.cli("release", str(job_id))
        out, err = waiting.communicate(timeout=60)
    assert (waiting.returncode, out, err) == (0, b"", b"")  # nothing more


def test_held_jobs_of_a_file_are_said_in_one_line_and_q_says_nothing(
    daemon: Herd, tmp_path: Path
) -> None:
    listed = tmp_path / "jobs.txt"
    listed.write_text("true\nexit 3\n")
    waiting = daemon.popen("submit", "--wait", "--hold", "--file", str(listed))
    quiet = daemon.popen("submit", "-q", "--wait", "--hold", "--", "true")
    with waits(waiting, quiet):
        assert waiting.stderr is not None
        said = read_line(waiting.stderr.fileno(), bytearray()).decode()
        assert said.startswith("gpuherd: jobs ") and " are held: waiting until they are " in said
        wait_for(lambda: len(daemon.all_jobs()) == 3, what="the 3 jobs")
        daemon.cli("release", "1-3")
        out, err = waiting.communicate(timeout=60)
        quiet_said = quiet.communicate(timeout=60)
    assert waiting.returncode == 3  # the second job's own exit status, as before
    assert out.decode() == f"submitted 2 jobs: {said.split()[2]}\n"
    assert err.decode().count("held") == 0  # the note was the first line, read above
    assert (quiet.returncode, *quiet_said) == (0, b"", b"")
