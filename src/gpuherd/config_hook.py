"""The `on-end` setting's command (a part of config.py): read, and checked when it is set,
so that a hook that can never run is refused then, not found failing in daemon.log at every
job's end."""

from __future__ import annotations

import os

from gpuherd.core.commands import MAX_COMMAND_BYTES


def hook_command(text: str) -> str | None:
    command = text.strip()
    return None if command.lower() in ("", "none") else command


def hook_problem(command: str | None) -> str | None:
    """What keeps `command` from ever running as the hooks run it (`sh -c COMMAND`), None if
    nothing does. A NUL byte answered the API's 500 (`ValueError: embedded null byte`, from
    the syntax check's subprocess); a command past 128 KiB was taken, then failed at every
    job's end (`[Errno 7] Argument list too long`), said only in daemon.log."""
    if command is None:
        return None
    if "\0" in command:
        return "a NUL byte in the command: remove it (no program can receive it)"
    size = len(command.encode(errors="surrogateescape"))
    if size > MAX_COMMAND_BYTES:
        return (
            f"the command is {size:,} bytes, over the 128 KiB a program's argument may hold: "
            "put it in a script file and set on-end to run that"
        )
    return _shell_syntax(command)


def _shell_syntax(command: str) -> str | None:
    """What the hooks' shell (`sh -n`) says of `command`, None when it reads it: a hook that
    cannot parse (`echo "unterminated`) failed only once a job ended, in hooks.log."""
    import subprocess  # deferred: the daemon loads settings at every start; this is rare

    from gpuherd.executors.base import SpawnError, job_shell

    try:
        shell = job_shell(os.environ)  # as hooks.py runs the hooks: the daemon's environment
    except SpawnError:
        return None  # a GPUHERD_SHELL that is not a program: logged when a hook starts
    try:
        proc = subprocess.run(
            [shell, "-n", "-c", command, "sh"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=10,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None  # no verdict: the hook's own run will tell
    said = [line.strip() for line in proc.stderr.decode(errors="replace").splitlines()]
    if proc.returncode == 0:
        return None
    complaint = next((line for line in said if line), f"exit status {proc.returncode}")
    return f"the hooks' shell {shell} cannot parse it: {complaint}; fix it and set it again"
