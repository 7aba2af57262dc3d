"""What `run` and `submit --file` say when given what is no job file, naming the ways that run
it. A script: `run job.sh` ran each of its lines as a job of its own, in parallel (its `cd`
lost, its `#!` and `#SBATCH` lines skipped as comments) and said "3 succeeded"; `run train.py`
ran Python's lines as shell commands. A command typed where the file goes: `run python3
train.py --lr 0.1` said "No such option '--lr'", `run 'echo hi'` "cannot read echo hi".

Standard input is never taken for a script (`gpuherd run - < job.sh`): it is the way to run a
script's lines as jobs all the same, with no option to learn, and a stream cannot be looked
at before its jobs start. Loaded only when `run` is given words or `submit` a --file."""

from __future__ import annotations

import codecs
import os
import re
import shlex
import stat
from collections.abc import Sequence

import click

from gpuherd.cli.run_args import GPU_HOG_SPELLINGS, is_gpu_indices
from gpuherd.gpus.choice import BOTH_GIVEN
from gpuherd.typed_name import typed_name

_HEAD = 64 * 1024
"""How much of a job file is looked at: a script's `#!` is its first line, and its `#SBATCH`
lines come before its first command."""
_SBATCH = re.compile(rb"^#SBATCH\s", re.MULTILINE)
_SHELL_OPERATORS = "&|;<>$`"
"""Characters of a word that make it a command line rather than a file's name (`cd x &&
make`: no program named `cd` is on PATH)."""


def script_reason(file: str | None) -> str | None:
    """Why the job file `file` looks like a script (`it starts with #!`); None when it does
    not, for standard input (None, `-`), for what is no regular file (a named pipe: opening it
    to look would take its writer's first lines) and for one that cannot be read (the reading
    says why)."""
    if file is None or file == "-":
        return None
    try:
        if not stat.S_ISREG(os.stat(file).st_mode):  # (nor one not there: `cannot read`)
            return None
        if file.lower().endswith(".py"):
            return "its name ends in .py"
        with open(file, "rb") as stream:
            head = stream.read(_HEAD).removeprefix(codecs.BOM_UTF8)
    except OSError:
        return None
    if head.startswith(b"#!"):
        return "it starts with #!"
    return "it has #SBATCH lines" if _SBATCH.search(head) else None


def refuse_script(file: str | None, verb: str, option: str | None = None) -> None:
    """A usage error (exit 2, before anything runs) when the job file of `verb` (run, submit)
    looks like a script; the commands it names keep the options typed with it (ctx.meta's
    `args`; `option`: the one the file was given with, left out with it)."""
    reason = script_reason(file)
    if file is None or reason is None:
        return
    ctx = click.get_current_context(silent=True)
    others = _without(ctx.meta.get("args", []) if ctx else [], file, option)
    own = "".join(f" {shlex.quote(word)}" for word in others)
    name, run, path = typed_name(), script_command(file), shlex.quote(file)
    if verb == "run":
        one = f"echo {shlex.quote(run)} | {name} run{own}, or with the daemon {_submit(run)}"
        lines = f"{name} run{own} - < {path}"
    else:
        waited = {"-w", "--wait", "--follow"} & set(others)
        one = f"{name} submit{own} -- {run}" + ("" if waited else " (--wait waits for its end)")
        lines = f"{name} submit{own} --file - < {path}"
    raise click.UsageError(
        f"{file} looks like a script ({reason}), not a job file of one command a line, each a "
        f"job of its own: to run it as one job, {one}; to run its lines as jobs all the same, "
        f"give it on standard input: {lines}"
    )


def script_command(path: str) -> str:
    """The command that runs the script `path` as one job, from the folder it is named from:
    `./job.sh` when executable (its `#!` line picks the interpreter), else that interpreter's
    (`bash job.sh`; `python3 train.py` for a .py without one)."""
    if os.access(path, os.X_OK):
        return shlex.quote(path if "/" in path else f"./{path}")
    from gpuherd.script_files import interpreter_of

    interpreter = interpreter_of(path)  # (`sh` without a `#!` line)
    if interpreter == "sh" and path.lower().endswith(".py"):
        interpreter = "python3"
    return f"{interpreter} {shlex.quote(path)}"


def command_before(ctx: click.Context, args: Sequence[str], option: str) -> str | None:
    """What to say of `run`'s unknown `option` typed after a command (`run python3 train.py
    --lr 0.1`: the command's own option); None when no command comes before it."""
    own, first = _typed_parts(ctx, args)
    if first is None or not any(_is(word, option) for word in args[first + 1 :]):
        return None
    command = typed_command(args[first:])
    if command is None:
        return None
    return command_refused(command, [word for at, word in own if at < first], args[first])


def command_given(ctx: click.Context, args: Sequence[str], words: Sequence[str]) -> str | None:
    """What to say of `run`'s arguments `words` (GPU indices left out) when they are a
    command, not a job file; None else. `args`: all it was given, for its own options."""
    command = typed_command(words) if words else None
    if command is None:
        return None
    own, _ = _typed_parts(ctx, args)
    return command_refused(command, [word for _, word in own], words[0])


def typed_command(words: Sequence[str]) -> list[str] | None:
    """The command `run`'s arguments `words` are, as `submit --` would take it; None when they
    may be job files (said as ever: `cannot read jobs.tx`, `give one job file`). A script with
    arguments is one (one alone is refuse_script's); else a first word that is no file but a
    program on PATH (`python3 train.py`, `nvidia-smi`), or a command line as one argument
    (`'echo hi'`, `'cd x && make'`)."""
    first, *rest = words
    if os.path.lexists(first):
        if not rest or script_reason(first) is None:
            return None
        return [*shlex.split(script_command(first)), *rest]
    import shutil  # (only then: start-up time)

    try:
        program = shlex.split(first)[:1] if not rest else [first]
    except ValueError:  # (an unbalanced quote: no command sh would run either)
        return None
    ran = bool(program) and shutil.which(program[0]) is not None
    return list(words) if ran or (not rest and any(c in first for c in _SHELL_OPERATORS)) else None


def command_refused(words: Sequence[str], own: Sequence[str], typed: str) -> str:
    """`run takes a job file ...`, with the ways to run the command `words` (`own`: the run's
    options typed with it, kept in its `echo ... | gpuherd run`; `typed`: its first word as
    typed, said to be no file: the user may have meant a job file of that name). Given with
    --gpus and --fake-gpus, their clash is said instead: the advice repeated them, and the
    command it gave was refused for them."""
    if {"--gpus", "--fake-gpus"} <= {word.partition("=")[0] for word in own}:
        return BOTH_GIVEN
    line = words[0] if len(words) == 1 else shlex.join(words)  # (one word: sh's line, as submit)
    options = "".join(f" {shlex.quote(word)}" for word in own)
    nofile = "" if os.path.lexists(typed) else f" ({shlex.quote(typed)} is no file here)"
    return (
        f"{typed_name()} run takes a job file (one command a line), not a command{nofile}: "
        f"to run one command, echo {shlex.quote(line)} | {typed_name()} run{options}, or "
        f"with the daemon {_submit(shlex.join(words))}"
    )


def _submit(command: str) -> str:
    return f"{typed_name()} submit --wait -- {command}"


def _typed_parts(
    ctx: click.Context, args: Sequence[str]
) -> tuple[list[tuple[int, str]], int | None]:
    """The words of `args` (as typed, or as run_args made them) that are the run's own (its
    options and their values, by place), and the place of the first that is neither (None:
    there is none)."""
    valued = {
        name
        for param in ctx.command.params
        if isinstance(param, click.Option) and not param.is_flag and not param.count
        for name in param.opts
    }
    own: list[tuple[int, str]] = []
    first: int | None = None
    at = 0
    while at < len(args):
        word = args[at]
        if word == "--":
            return own, (at + 1 if at + 1 < len(args) and first is None else first)
        if word == "--job_file":  # (gpu-hog's: its value is the argument, the job file)
            pass
        elif word.startswith("-") and word != "-":
            own.append((at, word))
            if GPU_HOG_SPELLINGS.get(word, word) in valued and at + 1 < len(args):
                at += 1
                own.append((at, args[at]))
            while word == "--gpus" and at + 1 < len(args) and is_gpu_indices(args[at + 1]):
                at += 1  # (`--gpus 0 1 2`, as typed)
                own.append((at, args[at]))
        elif first is None:
            first = at
        at += 1
    return own, first


def _is(word: str, option: str) -> bool:
    """Whether `word` is where click found the unknown `option` (`--lr`, `--lr=0.1`, `-u`)."""
    if option.startswith("--"):
        return word.partition("=")[0] == option
    return word.startswith("-") and not word.startswith("--") and option[1:] in word[1:]


def _without(args: Sequence[str], file: str, option: str | None) -> list[str]:
    """`args` without the job file's words (`FILE`, `--file FILE`, `--file=FILE`) and a `--`
    left last."""
    out = list(args)
    if option and f"{option}={file}" in out:
        out.remove(f"{option}={file}")
    elif file in out:
        at = len(out) - 1 - out[::-1].index(file)
        start = at - 1 if option and at and out[at - 1] == option else at
        del out[start : at + 1]
    if out and out[-1] == "--":
        out.pop()
    return out
