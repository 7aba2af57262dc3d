"""What to say when a command's program will not be found as written: a file of the job's
folder named without `./`, which the shell looks for on PATH alone, or one name with a space
in it. Said by `submit` (cli/submit_hints.py) and by the daemon of an `edit`
(edit_warnings.py), each with its own fix (`submit ./job.sh`, `gpuherd edit 5 --command
./job.sh`): apart from the CLI, as the daemon imports no click. An edit to such a command
said nothing, and the job failed as it started (`eval: job.sh: not found`, exit 127)."""

from __future__ import annotations

import io
import os
import shlex
from collections.abc import Mapping
from typing import Literal

from gpuherd.script_files import (
    command_words,
    interpreter_of,
    joined_lines,
    on_job_path,
    on_noexec_mount,
)
from gpuherd.typed_name import typed_name

Verb = Literal["submit", "edit"]
"""Whose fix a hint gives: the CLI's `submit`, or an `edit` of the job's command."""

JOB_IDS = "\0ids\0"
"""Where an edit's fix names its jobs (`gpuherd edit 5 --command ...`): filled in once the
jobs said alike are known (edit_warnings.py). No command or folder holds a NUL."""


def program_word(command: str, env: Mapping[str, str]) -> str | None:
    """The program word `command` starts with (script_files.command_words); None when unsure."""
    words = command_words(command, env)
    return words[0] if words else None


def not_on_path_hint(
    command: str, cwd: str, env: Mapping[str, str], verb: Verb = "submit"
) -> str | None:
    """What to say when `command` starts with a file of `cwd` named without a `/` that the
    job's shell will not find: it looks on the job's PATH, never in its folder (`eval: job.sh:
    not found`, exit 127). None for anything else, and whenever unsure."""
    word = program_word(command, env)
    if word is None or "/" in word:
        return None
    file = os.path.join(cwd, word)
    if not os.path.isfile(file) or on_job_path(word, cwd, env):
        return None
    named = shlex.quote(word)
    if on_noexec_mount(file):  # (where no file runs by its path, whatever its mode)
        run = _fix(f"{interpreter_of(file)} {named}", command, env, verb)
        fix = f"{run} (mounted noexec, it cannot run as ./{word})"
    elif os.access(file, os.X_OK):
        fix = f"{_fix(f'./{named}', command, env, verb)} (or sh {named})"
    else:
        fix = (
            f"{_fix(f'sh {named}', command, env, verb)} (or chmod +x {named}, then "
            f"{_fix(f'./{named}', command, env, verb)})"
        )
    return f'{word} is a file in {cwd} but not on PATH: the job will fail with "not found"; {fix}'


def spaced_program_hint(
    command: str, cwd: str, env: Mapping[str, str], verb: Verb = "submit"
) -> str | None:
    """What to say when the program `command` starts with is a name with a space in it that
    names nothing: `gpuherd submit "python train.py" --lr 0.1` quotes each of several
    arguments, so the shell looks for a program called `python train.py` (`not found`, exit
    127). None for anything else, and whenever unsure."""
    word = program_word(command, env)
    if word is None or not any(c.isspace() for c in word):
        return None
    if os.path.exists(os.path.join(cwd, word)) or on_job_path(word, cwd, env):
        return None
    apart = shlex.join(word.split())
    meant = with_program(command, env, apart) or apart
    fix = f"{typed_name()} submit -- {meant}" if verb == "submit" else _edit(meant)
    return (
        f"the command's program is {word!r}, one name with spaces in it, which names no program:"
        f' the job will fail with "not found"; give its words apart ({fix})'
    )


def _fix(run: str, command: str, env: Mapping[str, str], verb: Verb) -> str:
    """The words that have the job run `run` (`./job.sh`, `sh job.sh`) as its program: `submit
    ./job.sh` (its arguments as they were), or the edit of its whole command to that."""
    if verb == "submit":
        return f"submit {run}"
    return _edit(with_program(command, env, run) or run)  # (None: a command said nothing of)


def _edit(command: str) -> str:
    return f"gpuherd edit {JOB_IDS} --command {shlex.quote(command)}"


def with_program(command: str, env: Mapping[str, str], run: str) -> str | None:
    """`command` with its program word, as written (quoted or not, after its NAME=value
    assignments), replaced by the text `run`; the rest as written, its quotes and
    redirections kept (`job.sh --lr 0.1 > out.txt` -> `./job.sh --lr 0.1 > out.txt`: its
    words joined again, the `>` was quoted into an argument). None when unsure."""
    words = command_words(command, env)
    text = joined_lines(command)
    if words is None:
        return None
    stream = io.StringIO(text)  # (its position: where each word the lexer read ends)
    lexer = shlex.shlex(stream, posix=True)
    lexer.whitespace_split, lexer.commenters = True, ""  # (as shlex.split reads it)
    assignments = len(shlex.split(text)) - len(words)
    start = end = 0
    for _ in range(assignments + 1):
        start = end + len(text[end:]) - len(text[end:].lstrip())
        lexer.get_token()
        end = stream.tell()
        if end < len(text):  # (the white space that ended the word was read too)
            end -= 1
    return text[:start] + run + text[end:]
