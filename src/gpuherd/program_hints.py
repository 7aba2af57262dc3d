"""What to say when a command's program will not be found as written: a file of the job's
folder named without `./`, which the shell looks for on PATH alone, or one name with a space
in it. Said by `submit` (cli/submit_hints.py), by the daemon of an `edit` (edit_warnings.py)
and of a sweep (sweep_checks.py), by the Python API's submit (pyapi_checks.py) and by the
dashboard's submit form (api/dashboard_submit.py), each with the fix typed where it was
given (`submit ./job.sh`, `gpuherd edit 5 --command ./job.sh`, `herd.submit('./job.sh
...')`): apart from the CLI, as the daemon imports no click. Said by `submit` alone, such a
command went unsaid elsewhere, and its jobs (every point of a sweep) failed as they started
(`eval: job.sh: not found`, exit 127)."""

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

Verb = Literal["submit", "edit", "python", "sweep", "dashboard"]
"""Whose fix a hint gives: the CLI's `submit` (`submit ./job.sh`), an `edit` of the job's
command (all of it: `--command` replaces it), the Python API's `herd.submit(...)`, a sweep's
command (its template: every point runs its program), or the dashboard's submit form (its
'commands' box). Python's and a sweep's show the command up to its program, the rest as
`...`: it stays as written, and Python's warnings respell `--name` and `--cwd` as keywords
(pyapi_values.python_spelling), which the command's own arguments are not. A sweep's words
name no front end: the daemon says them to the CLI, Python and a sweep file alike."""

JOB_IDS = "\0ids\0"
"""Where an edit's fix names its jobs (`gpuherd edit 5 --command ...`): filled in once the
jobs said alike are known (edit_warnings.py). No command or folder holds a NUL."""


def program_word(command: str, env: Mapping[str, str]) -> str | None:
    """The program word `command` starts with (script_files.command_words); None when unsure."""
    words = command_words(command, env)
    return words[0] if words else None


def not_on_path_hint(
    command: str, cwd: str, env: Mapping[str, str], verb: Verb = "submit", who: str = "the job"
) -> str | None:
    """What to say when `command` starts with a file of `cwd` named without a `/` that the
    job's shell will not find: it looks on the job's PATH, never in its folder (`eval: job.sh:
    not found`, exit 127). `who` fails so (a sweep's `every point`). None for anything else,
    and whenever unsure."""
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
    return f'{word} is a file in {cwd} but not on PATH: {who} will fail with "not found"; {fix}'


def spaced_program_hint(
    command: str, cwd: str, env: Mapping[str, str], verb: Verb = "submit", who: str = "the job"
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
    if verb == "submit":
        fix = f"{typed_name()} submit -- {meant}"
    else:
        fix = _edit(meant) if verb == "edit" else _fix(apart, command, env, verb)
    return (
        f"the command's program is {word!r}, one name with spaces in it, which names no program:"
        f' {who} will fail with "not found"; give its words apart ({fix})'
    )


def sweep_program_hints(
    template: str | None, cwd: str, env: Mapping[str, str], points: int
) -> list[str]:
    """Both hints of a sweep's command `template`, for the `points` it submits: said once,
    of the template, which every point runs as its program (judged once, not 10,000 times,
    with its fix written in the template). Nothing for no points, a task's sweep (no
    template), or a program a placeholder names (`{script} --lr {lr}`: unsure)."""
    word = None if template is None or not points else program_word(template, env)
    if template is None or word is None or "{" in word:
        return []
    return program_hints(template, cwd, env, "sweep", "the point" if points == 1 else "every point")


def program_hints(
    command: str, cwd: str, env: Mapping[str, str], verb: Verb, who: str = "the job"
) -> list[str]:
    """Both hints of `command` (not_on_path_hint's, spaced_program_hint's), those that apply."""
    hints = [hint(command, cwd, env, verb, who) for hint in (not_on_path_hint, spaced_program_hint)]
    return [hint for hint in hints if hint is not None]


def _fix(run: str, command: str, env: Mapping[str, str], verb: Verb) -> str:
    """The words that have the job run `run` (`./job.sh`, `sh job.sh`) as its program: `submit
    ./job.sh` (its arguments as they were), the edit of its whole command to that, Python's
    `herd.submit('./job.sh ...')`, the sweep's command so, or the form's command box."""
    if verb == "submit":
        return f"submit {run}"
    if verb == "dashboard":  # (the program alone, as submit's: one warning for lines alike)
        return f"write {run} in 'commands'"
    if verb == "edit":
        return _edit(with_program(command, env, run) or run)  # (None: a command said nothing of)
    begun = _begun_with(command, env, run)
    if verb == "python":
        return f"herd.submit({begun!r})"
    return f"write the sweep's command as {shlex.quote(begun)}"


def _begun_with(command: str, env: Mapping[str, str], run: str) -> str:
    """`command` up to its program, that replaced by `run`, and `...` for the rest when there
    is more (`X=1 job.sh --lr 0.1` -> `X=1 ./job.sh ...`); `run` alone when unsure."""
    span = _program_span(command, env)
    if span is None:
        return run
    text, start, end = span
    return text[:start].lstrip() + run + " ..." * bool(text[end:].strip())


def _edit(command: str) -> str:
    return f"gpuherd edit {JOB_IDS} --command {shlex.quote(command)}"


def with_program(command: str, env: Mapping[str, str], run: str) -> str | None:
    """`command` with its program word, as written (quoted or not, after its NAME=value
    assignments), replaced by the text `run`; the rest as written, its quotes and
    redirections kept (`job.sh --lr 0.1 > out.txt` -> `./job.sh --lr 0.1 > out.txt`: its
    words joined again, the `>` was quoted into an argument). None when unsure."""
    span = _program_span(command, env)
    if span is None:
        return None
    text, start, end = span
    return text[:start] + run + text[end:]


def _program_span(command: str, env: Mapping[str, str]) -> tuple[str, int, int] | None:
    """`command` as the shell reads it (its continued lines joined), and where in it its
    program word starts and ends, as written. None when unsure."""
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
    return text, start, end
