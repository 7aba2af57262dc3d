"""gpuherd driven from shell scripts, as task-spooler, pueue and Slurm users drive theirs.

`--state` takes a comma-separated list (squeue's `-t failed,cancelled`), and a terminal whose
encoding lacks a character (a Latin-1 locale) gets `?` for it, not a traceback."""

from __future__ import annotations

from conftest import Herd


def test_state_takes_a_comma_separated_list(shared_daemon: Herd) -> None:
    herd = shared_daemon
    failed = herd.submit("--gpus", "0", "--name", "scripting-state", "--", "sh", "-c", "exit 3")
    held = herd.submit("--hold", "--name", "scripting-state", "--", "true")
    done = herd.submit("--gpus", "0", "--name", "scripting-state", "--", "true")
    herd.cli("wait", "-q", str(done), str(failed), check=False)
    herd.cli("kill", str(held))
    herd.wait_state(held, "cancelled")

    def listed(*states: str) -> list[int]:
        args = [arg for state in states for arg in ("--state", state)]
        out = herd.cli("ls", "-q", "--all", "--name", "scripting-state", *args).stdout
        return [int(word) for word in out.split()]

    assert listed("failed,cancelled") == [failed, held]
    # Spaces after the commas, a word repeated, and the repeatable form alongside.
    assert listed("cancelled, failed", "failed") == [failed, held]
    assert listed("succeeded,failed,cancelled") == [failed, held, done]


def test_state_list_names_the_word_it_refuses(shared_daemon: Herd) -> None:
    said = shared_daemon.usage_error("ls", "-q", "--state", "failed,cancled")
    assert "--state: 'cancled' is not a choice: use one of queued, held," in said
    said = shared_daemon.usage_error("clean", "--state", "failed,running")
    assert "--state: 'running' is not a choice: use one of cancelled, failed," in said


def test_narrow_terminal_encoding_gets_no_traceback(shared_daemon: Herd) -> None:
    herd = shared_daemon
    job = herd.submit("--gpus", "0", "--name", "snow \u2603", "--", "sh", "-c", "exit 1")
    herd.cli("wait", "-q", str(job), check=False)
    latin1 = {**herd.env, "PYTHONIOENCODING": "latin-1"}
    shown = herd.cli("show", str(job), env=latin1, check=False)
    assert shown.returncode == 0, shown.stderr
    assert "Traceback" not in shown.stderr
    assert "snow ?" in shown.stdout and "failed ? exit 1" in shown.stdout
    listed = herd.cli("ls", "--all", "--name", "snow*", env=latin1, check=False)
    assert listed.returncode == 0 and "snow ?" in listed.stdout, listed.stderr
    # JSON escapes what it cannot write: the name comes back whole.
    assert '"snow \\u2603"' in herd.cli("ls", "--all", "--json", env=latin1).stdout
