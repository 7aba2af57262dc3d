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
import re
import shlex
from collections.abc import Mapping
from typing import Literal

from gpuherd.script_files import (
    ASSIGNMENT,  # (a NAME=value word, as command_words reads one)
    command_words,
    interpreter_of,
    joined_lines,
    on_job_path,
    on_noexec_mount,
)
from gpuherd.typed_name import typed_name

Verb = Literal["submit", "edit", "python", "sweep", "dashboard", "hook"]
"""Whose fix a hint gives: the CLI's `submit` (`submit ./job.sh`), an `edit` of the job's
command (all of it: `--command` replaces it), the Python API's `herd.submit(...)`, a sweep's
command (its template: every point runs its program), the dashboard's submit form (its
'commands' box), or the on-end hook's command (`config set on-end`: quoted_home_hint's).
Python's and a sweep's show the command up to its program, the rest as `...`: it stays as
written, and Python's warnings respell `--name` and `--cwd` as keywords
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
    if template is None or not points:
        return []
    word = program_word(template, env)  # (None: unsure, but for a quoted ~ maybe)
    if word is not None and "{" in word:
        return []
    return program_hints(template, cwd, env, "sweep", "the point" if points == 1 else "every point")


def program_hints(
    command: str, cwd: str, env: Mapping[str, str], verb: Verb, who: str = "the job"
) -> list[str]:
    """The hints of `command` (not_on_path_hint's, spaced_program_hint's, quoted_home_hint's),
    those that apply."""
    hints = [
        hint(command, cwd, env, verb, who)
        for hint in (not_on_path_hint, spaced_program_hint, quoted_home_hint)
    ]
    return [hint for hint in hints if hint is not None]


def quoted_home_hint(
    command: str, cwd: str, env: Mapping[str, str], verb: Verb = "submit", who: str = "the job"
) -> str | None:
    """What to say when the program `command` starts with is written with its `~` quoted
    (`'~/bin/notify'`, `"~/train.sh"`, `\\~/x`): the shell expands a `~` to the home folder
    only unquoted, so it looks for a folder named `~` in `cwd` and fails with `not found`
    (exit 127), the file in the home folder or not. None for anything else, and for a
    folder `~` there (meant, surely). `env` is unused: as the other hints are called."""
    text = joined_lines(command)
    at = _program_at(text)
    if at is None:
        return None
    start, end, word = at
    written = text[start:end]
    prefix, slash, rest = word.partition("/")
    if written.startswith("~") or not re.fullmatch(_TILDE_PREFIX, prefix):
        return None  # (unquoted, the shell expands it: home_expanded's)
    if os.path.lexists(os.path.join(cwd, word)):
        return None
    unquoted = prefix + slash + _quoted_rest(rest)
    # (the form's: the program alone, as _fix's, so its lines alike share one warning)
    fixed = unquoted if verb == "dashboard" else text[:start] + unquoted + text[end:]
    return (
        f"the program {written} has its ~ quoted, and the shell does not expand ~ inside "
        f'quotes: {who} will fail with "not found"; write the ~ unquoted: '
        f"{_whole_fix(fixed, verb)}"
    )


def _quoted_rest(rest: str) -> str:
    """The part of a path after its `~/` as the shell reads it back: as it is, or in double
    quotes when it holds a space (`~/"my bin/notify"`, as one types it), else in single ones."""
    if not rest or shlex.quote(rest) == rest:
        return rest
    return f'"{rest}"' if not any(c in rest for c in '"$`\\!') else shlex.quote(rest)


_TILDE_PREFIX = re.compile(r"~[A-Za-z0-9._-]*")
"""A word's `~` or `~user` up to its first `/`: what the shell replaces by a home folder."""


def home_expanded(command: str, env: Mapping[str, str]) -> str | None:
    """`command` with the unquoted `~` its program starts with expanded as its shell will
    (`~/bin/notify` -> `/home/me/bin/notify`, from `env`'s HOME; `~me/x` from the user
    database), for the checks of the file it names, which take such a word for one they
    cannot judge (script_files.command_words): a hook set as `~/bin/notify` that was not
    there was not warned of, while the same typed unquoted, expanded by the user's shell,
    was. None for any other command, and whenever unsure."""
    if "~" not in command:  # (10,000 submitted lines: most go no further)
        return None
    text = joined_lines(command)
    at = _program_at(text)
    if at is None:
        return None
    start, end, _ = at
    prefix = text[start:end].partition("/")[0]
    if not re.fullmatch(_TILDE_PREFIX, prefix):
        return None
    home = env.get("HOME") if prefix == "~" else _user_home(prefix[1:])
    if not home:
        return None
    return text[:start] + shlex.quote(home) + text[start + len(prefix) :]


def _user_home(user: str) -> str | None:
    import pwd  # deferred: for a `~user` program alone

    try:
        return pwd.getpwnam(user).pw_dir
    except KeyError:
        return None


_SHELL_OPERATORS = ";&|<>()$`\n"
"""What, written in a `submit` fix unquoted, the user's shell would take for itself."""


def _whole_fix(command: str, verb: Verb) -> str:
    """The words that have the job (or hook) run `command`, all of it, where it was given."""
    if verb == "hook":
        return f"{typed_name()} config set on-end {shlex.quote(command)}"
    if verb == "submit":  # (its words as they are where no shell operator is among them)
        plain = not any(c in command for c in _SHELL_OPERATORS)
        return f"{typed_name()} submit -- {command if plain else shlex.quote(command)}"
    if verb == "edit":
        return _edit(command)
    if verb == "python":
        return f"herd.submit({command!r})"
    if verb == "dashboard":
        return f"write {command} in 'commands'"
    return f"write the sweep's command as {shlex.quote(command)}"


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
    if command_words(command, env) is None:
        return None
    text = joined_lines(command)
    at = _program_at(text)
    return None if at is None else (text, at[0], at[1])


def _program_at(text: str) -> tuple[int, int, str] | None:
    """Where in `text` (a command, its lines joined) its program word, after its NAME=value
    assignments, starts and ends as written, and that word as the shell reads it (its quotes
    gone). None when there is none, or its quotes are unbalanced."""
    stream = io.StringIO(text)  # (its position: where each word the lexer read ends)
    lexer = shlex.shlex(stream, posix=True)
    lexer.whitespace_split, lexer.commenters = True, ""  # (as shlex.split reads it)
    end = 0
    try:
        while True:
            start = end + len(text[end:]) - len(text[end:].lstrip())
            word = lexer.get_token()
            if word is None:
                return None
            end = stream.tell()
            if end < len(text):  # (the white space that ended the word was read too)
                end -= 1
            if not re.match(ASSIGNMENT, word):
                return start, end, word
    except ValueError:
        return None
