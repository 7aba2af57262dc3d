"""`gpuherd edit ID` alone, at a terminal: the job's command opens in the user's editor, as
`pueue edit ID` does, and what is saved replaces it as `gpuherd edit ID --command NEW` would.

The job is not held while the editor is open (pueue locks it): a hold would replace a
`--begin` time (a job has one hold), add hold and release to its history, and stay for good
if the terminal closed mid-edit, so the job would never start. A job that starts meanwhile
is refused by the daemon as any edit of a running job is; the edited command is then
printed, so the user's work is not lost."""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, NoReturn

import click

from gpuherd.cli.job_refs import given_ids
from gpuherd.cli.queue_cmds import answered  # (loaded already: edit is its command)
from gpuherd.client import Client
from gpuherd.errors import HerdError, NotFound
from gpuherd.typed_name import typed_name

_WAITING = ("queued", "held")
_STARTED = ("running", "paused")
_DEFAULT_EDITOR = "vi"  # as git: the one editor every Unix has


def edit_in_editor(tokens: tuple[str, ...]) -> None:
    """Edit the command of the one job `tokens` names in $VISUAL / $EDITOR; exit status 1
    (a line on stderr) when nothing was changed for a reason the user must know."""
    client = Client()
    ids = list(dict.fromkeys(given_ids(client, tokens)))
    name = typed_name()
    if len(ids) != 1:
        raise click.UsageError(
            f"the editor opens one job's command at a time, and {' '.join(tokens)} names "
            f"{len(ids)} jobs: {name} edit {ids[0]} alone opens its command; for many, "
            "give the new one with --command CMD"
        )
    (job_id,) = ids
    job = client.get(f"/jobs/{job_id}")  # the daemon down, an unknown id: said before any editor
    command = str(job["command"])
    if job["state"] not in _WAITING:
        _refuse_as_edit_does(client, job_id, command)
    edited = _edited_in_editor(job_id, command)
    if edited == command.strip():
        click.echo(f"job {job_id}: unchanged")
        return
    if not edited:
        _fail(
            f"job {job_id}: the command is empty: unchanged (to remove the job, {name} rm {job_id})"
        )
    _apply(client, job_id, command, edited)


def _refuse_as_edit_does(client: Client, job_id: int, command: str) -> None:
    """Exit with edit's own refusal of a job that runs or ended, before the editor opens.
    Asked of the daemon with the job's own command, which changes nothing of a job that
    does not wait: its words (a job being stopped, one cancelled by its dependency) stay
    the daemon's alone."""
    (result,) = client.post("/jobs/edit", {"ids": [job_id], "command": command})["results"]
    if not result["ok"]:
        _fail(result["message"])


def _edited_in_editor(job_id: int, command: str) -> str:
    """The command as saved in the editor, stripped as the daemon stores it; exit status 1
    when the editor could not run or did not succeed."""
    # `.sh`: editors highlight it as the shell script it is (the job runs `sh -c COMMAND`).
    fd, path = tempfile.mkstemp(prefix=f"gpuherd-job-{job_id}-", suffix=".sh")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            file.write(command + "\n")
        _run_editor(path, job_id)
        try:
            with open(path, encoding="utf-8") as file:
                return file.read().strip()
        except UnicodeDecodeError:
            _fail(f"job {job_id}: the edited command is not UTF-8 text: unchanged")
        except OSError as exc:  # an editor that deleted or moved the file
            _fail(f"job {job_id}: cannot read the edited file back ({exc.strerror}): unchanged")
    finally:
        try:
            os.unlink(path)
        except OSError:
            pass


def _run_editor(path: str, job_id: int) -> None:
    variable, value = _editor_setting()
    try:
        words = shlex.split(value)
    except ValueError as exc:
        _fail(
            f"the editor {variable}={value!r} cannot be read ({exc}): fix its quotes; "
            f"job {job_id} unchanged"
        )
    try:
        with _keyboard_to_the_editor():
            status = subprocess.run([*words, path]).returncode
    except OSError as exc:
        unset = "VISUAL and EDITOR are not set, and " if variable == "" else ""
        named = f"{variable}={value!r}" if variable else value
        _fail(
            f"{unset}the editor {named} cannot be run ({exc.strerror}): set EDITOR to an "
            f"editor you have (export EDITOR=nano); job {job_id} unchanged"
        )
    if status < 0:
        _fail(f"the editor was ended by signal {-status}: job {job_id} unchanged")
    if status != 0:
        _fail(f"the editor exited with status {status}: job {job_id} unchanged")


def _editor_setting() -> tuple[str, str]:
    """(variable, value) of the editor to run, as git picks it: $VISUAL, else $EDITOR, else
    vi (variable ""). One set but empty, or blank, counts as unset."""
    for variable in ("VISUAL", "EDITOR"):
        value = os.environ.get(variable, "")
        if value.strip():
            return variable, value
    return "", _DEFAULT_EDITOR


@contextmanager
def _keyboard_to_the_editor() -> Iterator[None]:
    """Ctrl-C and Ctrl-\\ at the terminal reach the editor (vi cancels a command with Ctrl-C);
    here they must not end gpuherd and kill the editor with it, as git ignores them while
    its editor runs. A handler that does nothing, not SIG_IGN: an ignored signal would stay
    ignored in the editor, a handler is reset to the default when it starts."""
    said = {sig: signal.signal(sig, _nothing) for sig in (signal.SIGINT, signal.SIGQUIT)}
    try:
        yield
    finally:
        for sig, handler in said.items():
            signal.signal(sig, handler)


def _nothing(signum: int, frame: object) -> None:
    pass


def _apply(client: Client, job_id: int, before: str, edited: str) -> None:
    """The request of `edit ID --command EDITED`, unless the job changed while the editor
    was open: then the edited command is printed, not lost."""
    try:
        now = client.get(f"/jobs/{job_id}")
    except NotFound:
        _lost(job_id, "was removed", edited)
    if now["state"] not in _WAITING:
        _lost(job_id, _what_became_of(now), edited)
    if now["command"] != before:  # another edit: applying this one would undo it unseen
        _fail(
            f"job {job_id}'s command was changed by another edit while you edited it; yours "
            f"was not applied: {edited} ({typed_name()} edit {job_id} opens its new one)"
        )
    answer = client.post("/jobs/edit", {"ids": [job_id], "command": edited, "clear": []})
    (result,) = answer["results"]
    if not result["ok"]:
        # Started between the look above and the edit: the daemon refused it as running.
        now = client.get(f"/jobs/{job_id}")
        if now["state"] not in _WAITING:
            _lost(job_id, _what_became_of(now), edited)
    answered(answer)  # (its warnings too, as `edit --command` says them)


def _what_became_of(job: dict[str, Any]) -> str:
    if job["state"] in _STARTED:
        return "started"
    return f"ended ({job['state']})"


def _lost(job_id: int, became: str, edited: str) -> NoReturn:
    _fail(
        f"job {job_id} {became} while you edited it; your command was not applied: {edited} "
        f"({typed_name()} submit -- {shlex.quote(edited)} queues it as a new job)"
    )


def _fail(line: str) -> NoReturn:
    """`line` as gpuherd's error, exit status 1 (no traceback, nothing more said)."""
    raise HerdError(line)
