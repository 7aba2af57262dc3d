"""What a command runs, read from its words as the job's shell will (cli/submit_hints.py warns
with it), and whether the file it runs is there: `python nosuch.py`, `bash run.sh` or
`./train.sh` naming no file from the job's folder is queued all the same (an earlier job may
make it, `--after`), but said at once, by `submit`, `sweep` and the Python API alike:
queued unsaid, every point of a 5,000-point sweep failed at run time."""

from __future__ import annotations

import functools
import os
import re
import shlex
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from gpuherd.script_advice import locked_script, no_shebang, on_noexec, who_fails

# Words the shell runs itself, never looked up on PATH (sh's and bash's): a file of that name
# in the folder is no mistake.
_SHELL_WORDS_TEXT = (
    "! { } [[ ]] case do done elif else esac fi for function if in select then time until "
    "while . : [ alias bg bind break builtin caller cd command compgen complete continue "
    "declare dirs disown echo enable eval exec exit export false fc fg getopts hash help "
    "history jobs kill let local logout mapfile popd printf pushd pwd read readarray readonly "
    "return set shift shopt source suspend test times trap true type typeset ulimit umask "
    "unalias unset wait"
)
_SHELL_WORDS = frozenset(_SHELL_WORDS_TEXT.split())
ASSIGNMENT = r"[A-Za-z_][A-Za-z0-9_]*="
_EXPANDED = "$`*?[~"
"""Characters of a word the shell expands (or globs) into another."""
_UNSURE = _EXPANDED + "{};&|<>()"
"""Also what a script word would not hold as written: a template's `{x}` not filled, or the
shell's operators written against it (`python x.py;`)."""
_CONTINUED_LINE = re.compile(r"(?<!\\)((?:\\\\)*)\\\n")
"""A backslash that ends a line (not one escaped by another): the shell joins the next line
on, where shlex keeps the newline as a word (`python \\`, then `train.py` on the next line, was
warned of as a script "\\n" not there, and as a program with a space in its name)."""


def command_words(command: str, env: Mapping[str, str]) -> list[str] | None:
    """The words of `command` from its program on, after its NAME=value assignments; None
    when unsure: unbalanced quotes (the shell will say), PATH set there (`PATH=.:$PATH
    job.sh`), a program word the shell runs itself or expands to another (`$HOME/x`,
    `~/x`)."""
    if (split := shell_words(command)) is None:
        return None
    words = list(split)
    while words and re.match(ASSIGNMENT, words[0]):
        if words.pop(0).startswith("PATH="):
            return None
    if not words:
        return None
    word = words[0]
    if word in _SHELL_WORDS or f"BASH_FUNC_{word}%%" in env or any(c in word for c in _EXPANDED):
        return None
    return words


@functools.lru_cache(maxsize=4096)
def shell_words(command: str) -> tuple[str, ...] | None:
    """shlex's words of `command`, its continued lines joined (None: unbalanced quotes), kept
    for each hint that reads it; at its blanks where shlex would split as str.split does
    (_PLAIN_WORDS): shlex took ~0.3 ms a line of 500 characters, four times a line."""
    if _PLAIN_WORDS.fullmatch(command):
        return tuple(command.split())
    try:
        return tuple(shlex.split(joined_lines(command)))
    except ValueError:
        return None


# (None of: a quote, a backslash, a blank that str.split takes and shlex does not.)
_PLAIN_WORDS = re.compile(r"[^'\"\\\x0b\x0c\x1c-\x1f\x80-\U0010ffff]*")


def joined_lines(command: str) -> str:
    """`command` with its lines ended by a backslash joined to the next, as the shell reads it."""
    return _CONTINUED_LINE.sub(r"\1", command)


def names_a_file(word: str, folders: Iterable[str], path: str | None) -> bool:
    """Whether `word` names a file (or folder, or link) from one of `folders` ("": this
    process's own), or, without a `/`, a program on the PATH `path` (None: this process's;
    "": none, as python looks for its script nowhere else)."""
    if any(os.path.lexists(os.path.join(folder, word)) for folder in folders):
        return True
    import shutil  # deferred: with bz2, lzma and zlib ~3 ms of every submit, for a rare hint

    return "/" not in word and shutil.which(word, path=path) is not None


def on_job_path(word: str, cwd: str, env: Mapping[str, str]) -> bool:
    """Whether the shell of a command run in `cwd` finds the program `word` on PATH."""
    # PATH as the shell reads it: an empty or relative entry is relative to its folder.
    path = os.pathsep.join(
        os.path.join(cwd, entry or ".") for entry in env.get("PATH", os.defpath).split(os.pathsep)
    )
    import shutil  # deferred: as in names_a_file

    return shutil.which(word, path=path) is not None


@dataclass(frozen=True)
class _Interpreter:
    elsewhere: str
    """Option letters after which no file runs: python -c CODE, -m MODULE; sh -c, -s."""
    valued: str
    """Option letters that take a value (the cluster's rest, or the next word)."""
    long_valued: frozenset[str]
    searches_path: bool
    """Whether a script named without a `/` is looked for on PATH too (bash's is)."""


_PYTHON = _Interpreter("cm", "WX", frozenset({"--check-hash-based-pycs"}), searches_path=False)
_SHELL = _Interpreter("cs", "oO", frozenset({"--rcfile", "--init-file"}), searches_path=True)
_INTERPRETERS = [(re.compile(r"python[0-9.]*"), _PYTHON), (re.compile(r"(ba|da|z|k)?sh"), _SHELL)]


def _operand(interpreter: _Interpreter, args: Sequence[str]) -> str | None:
    """The script an interpreter given `args` runs: its first word that is no option nor an
    option's value; None when it runs no file (`-m pkg`, `-c CODE`, `-` for stdin)."""
    words = iter(args)
    for word in words:
        if word == "--":
            return next(words, None)
        if word in ("-", "+"):
            return None
        if word.startswith("--"):
            if word in interpreter.long_valued:
                next(words, None)
            continue
        if not word.startswith("-") and not (word.startswith("+") and interpreter is _SHELL):
            return word
        for i, letter in enumerate(word[1:], 1):
            if letter in interpreter.elsewhere:
                return None
            if letter in interpreter.valued:
                if i == len(word) - 1:  # `-W ignore`, not `-Wignore`
                    next(words, None)
                break
    return None


def missing_script(command: str, cwd: str, env: Mapping[str, str]) -> str | None:
    """The file `command` runs that is not there from `cwd` (the job's folder, as the shell
    and the interpreter take a relative path): its program when a path (`./train.sh`,
    `scripts/run.py`), else the script an interpreter runs (`python -u train.py`, `bash
    run.sh`). None when there, when it runs none (`python -m pkg`), and whenever unsure."""
    return _missing_in(command_words(command, env), cwd, env)


def _missing_in(words: list[str] | None, cwd: str, env: Mapping[str, str]) -> str | None:
    """missing_script of a command's words (command_words: read once for both checks)."""
    if words is None:
        return None
    program, *args = words
    if "/" in program and not names_a_file(program, [cwd], ""):
        return program if not any(c in program for c in _UNSURE) else None
    name = os.path.basename(program)
    interpreter = next((i for pattern, i in _INTERPRETERS if pattern.fullmatch(name)), None)
    script = _operand(interpreter, args) if interpreter else None
    if not script or any(c in script for c in _UNSURE):
        return None
    if names_a_file(script, [cwd], ""):
        return None
    searched = interpreter is not None and interpreter.searches_path and "/" not in script
    return None if searched and on_job_path(script, cwd, env) else script


def unknown_program(
    command: str, cwd: str, env: Mapping[str, str], seen: dict[str, bool] | None = None
) -> str | None:
    """The program `command` starts with, named without a `/`, when the job's shell will not
    find it: no builtin, not on the job's PATH (`nvidia-smix`, `pyhton`). A file of that name
    in `cwd` is not one (program_hints.not_on_path_hint says what to type instead). None
    whenever unsure: the shell's `not found` came only as the job started, maybe hours after
    the typo, and every point of a sweep failed with it. `seen`: the programs looked up
    already, by the lines of one submission (20,000 lines, one program: one lookup)."""
    return _unknown_in(command_words(command, env), cwd, env, {} if seen is None else seen)


def _unknown_in(
    words: list[str] | None, cwd: str, env: Mapping[str, str], seen: dict[str, bool]
) -> str | None:
    if words is None:
        return None
    program = words[0]
    if "/" in program or any(c in program for c in _UNSURE) or any(c.isspace() for c in program):
        return None  # (a path: missing_script's; a name with a space: spaced_program_hint's)
    if program not in seen:
        there = os.path.lexists(os.path.join(cwd, program)) or on_job_path(program, cwd, env)
        seen[program] = there
    return None if seen[program] else program


def not_executable(command: str, cwd: str, env: Mapping[str, str]) -> str | None:
    """The program `command` runs by its path (`./train.sh`), there from `cwd` but not
    executable: a script saved without `chmod +x`, which failed as the job started, `eval:
    ./train.sh: Permission denied` (exit 126). None for anything else."""
    return _locked_in(command_words(command, env), cwd)


def _locked_in(words: list[str] | None, cwd: str) -> str | None:
    if words is None or "/" not in words[0] or any(c in words[0] for c in _UNSURE):
        return None
    path = os.path.join(cwd, words[0])
    return words[0] if os.path.isfile(path) and not os.access(path, os.X_OK) else None


def on_noexec_mount(path: str) -> bool:
    """Whether `path` is on a file system mounted `noexec`, where no file runs by its path,
    whatever its mode: `chmod +x` does not help there, running it through its interpreter
    (`bash ./train.sh`) does."""
    try:
        return bool(os.statvfs(path).f_flag & os.ST_NOEXEC)
    except OSError:
        return False


_SYSTEM_BINS = ("/bin", "/usr/bin", "/usr/local/bin")
_SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh"})
"""Interpreters said by their name alone when the `#!` line has a system one's path: any of
them runs a script alike. Not `python3`: a venv or conda on the job's PATH has its own."""


def _has_shebang(path: str) -> bool:
    """Whether the file starts with `#!` (made executable, it runs as that line says; without
    one, the job's shell would run it as sh code: a job file, or a .py)."""
    try:
        with open(path, "rb") as file:
            return file.read(2) == b"#!"
    except OSError:
        return True  # (unread: said as before, chmod +x)


def interpreter_of(path: str) -> str:
    """The words that run the script `path` as its `#!` line does (`bash`, `/usr/bin/python3
    -u`, `/opt/conda/bin/python`; a shell of /bin or /usr/bin by its name alone, `env`'s by
    the one it names); `sh` without one (or unread), as the job's shell runs such a file."""
    try:
        with open(path, "rb") as file:
            first = file.readline(256)
    except OSError:
        return "sh"
    try:
        words = first[2:].decode().split() if first.startswith(b"#!") else []
    except UnicodeDecodeError:
        words = []
    if words and os.path.basename(words[0]) == "env":  # (its options, `-S`, and NAME=value)
        words = words[1:]
        while words and (words[0].startswith("-") or re.match(ASSIGNMENT, words[0])):
            words.pop(0)
    if not words or any(c in "".join(words) for c in _UNSURE):
        return "sh"
    if os.path.dirname(words[0]) in _SYSTEM_BINS and os.path.basename(words[0]) in _SHELLS:
        words[0] = os.path.basename(words[0])
    return shlex.join(words)


def script_file(command: str, cwd: str, env: Mapping[str, str]) -> str | None:
    """The file of `cwd` (the job's folder) that `command` runs, when there: its program
    given as a path (`./job.sh`; not `job.sh`, which the shell looks for on PATH alone), else
    the script an interpreter runs (`bash job.sh`). None for anything else, and whenever
    unsure."""
    words = command_words(command, env)
    if words is None:
        return None
    program, *args = words
    name = os.path.basename(program)
    interpreter = next((i for pattern, i in _INTERPRETERS if pattern.fullmatch(name)), None)
    script = _operand(interpreter, args) if interpreter else program if "/" in program else None
    if not script or any(c in script for c in _UNSURE):
        return None
    path = os.path.join(cwd, script)
    return path if os.path.isfile(path) else None


def missing_script_hints(
    commands: Sequence[str],
    cwd: str,
    env: Mapping[str, str],
    noun: str = "job",
    on_ray: Callable[[], bool] = lambda: False,
    moved: bool = True,
) -> list[str]:
    """One warning per file the `commands` (each a `noun`'s: a job's, a sweep's point's) run
    that is not there from `cwd`, said once with how many of them run it; one warning for
    them all when there are more than a few files (_SAID_APART). `on_ray`: whether the
    daemon runs its jobs on a Ray cluster, asked only of a program not found here (a
    cluster's node may have what this machine lacks: the warning says where it looked).
    `moved`: whether --cwd can move them (an on-end hook always runs in the daemon's home)."""
    if not os.path.isdir(cwd):  # (refused as it is: its error says so)
        return []
    counts: dict[str, int] = {}
    programs: dict[str, int] = {}
    locked: dict[str, int] = {}
    noexec: dict[str, int] = {}  # (locked too, but on a noexec mount: no chmod mends it)
    plain: dict[str, int] = {}  # (locked too, but with no `#!` line: no chmod mends it either)
    seen: dict[str, bool] = {}
    for command in commands:
        words = command_words(command, env)
        if (script := _missing_in(words, cwd, env)) is not None:
            counts[script] = counts.get(script, 0) + 1
        elif (program := _unknown_in(words, cwd, env, seen)) is not None:
            programs[program] = programs.get(program, 0) + 1
        elif (file := _locked_in(words, cwd)) is not None:
            path = os.path.join(cwd, file)
            held = noexec if on_noexec_mount(path) else locked if _has_shebang(path) else plain
            held[file] = held.get(file, 0) + 1
    said = [
        _unknown(list(programs), sum(programs.values()), len(commands), noun, on_ray())
        for _ in range(bool(programs))
    ]
    for files, told in (locked, locked_script), (noexec, on_noexec), (plain, no_shebang):
        if files:
            run = f"{interpreter_of(os.path.join(cwd, next(iter(files))))} "
            said.append(told(list(files), sum(files.values()), len(commands), cwd, noun, run))
    if len(counts) > _SAID_APART:
        many = _many_missing(list(counts), sum(counts.values()), len(commands), cwd, noun, moved)
        return [many, *said]
    total = len(commands)
    return [*(_missing(script, n, total, cwd, noun, moved) for script, n in counts.items()), *said]


def _unknown(programs: list[str], n: int, total: int, noun: str, on_ray: bool = False) -> str:
    """`pyhton is no program on the job's PATH ...`: one line for all the programs not found
    (a sweep's points all run one; `submit --file` lines may name several). `on_ray`: the
    jobs run on a Ray node, whose PATH was not looked at: said of this machine's."""
    shown = " or ".join(programs[:2]) + (
        f" ({len(programs):,} in all)" if len(programs) > 2 else ""
    )
    who, start = who_fails(n, total, noun, "them" if len(programs) > 1 else "it")
    what = "is no program" if len(programs) == 1 else "are no programs"
    builtin = "a shell builtin" if len(programs) == 1 else "shell builtins"
    whose = f"{noun}'s" if total == 1 else f"{noun}s'"
    where, when = "", f"before {start}"
    if on_ray:
        nodes = "node" if start == "it starts" else "nodes"
        where, when = " on this machine", f"on the Ray {nodes} where {start}"
    return (
        f"{shown} {what} on the {whose} PATH{where} nor {builtin}: {who} will fail with 'not"
        f" found' unless installed {when}; check the spelling"
    )


_SAID_APART = 3
"""Files not there said a line each; more are said in one line: `python {run_dir}/train.py`
runs a file of its own per point, and a 5,000-point sweep printed 5,000 warnings."""


def _many_missing(scripts: list[str], n: int, total: int, cwd: str, noun: str, moved: bool) -> str:
    if n == total:
        who = f"every {noun} will fail unless its file is made before it starts"
    else:
        who = f"the {n:,} {noun}s that run them will fail unless their files are made first"
    relative = not all(os.path.isabs(script) for script in scripts)
    where = f" in {cwd} (the {noun}s' working directory)" if relative else ""
    return (
        f"{len(scripts):,} files the {noun}s run do not exist{where}, as {scripts[0]} and"
        f" {scripts[1]}: {who}; check the paths{' or pass --cwd' * (relative and moved)}"
    )


def _missing(script: str, n: int, total: int, cwd: str, noun: str, moved: bool) -> str:
    who, start = who_fails(n, total, noun)
    if os.path.isabs(script):
        return (
            f"{script} does not exist: {who} will fail unless it is made before {start};"
            " check the path"
        )
    whose = f"{noun}'s" if total == 1 else f"{noun}s'"
    return (
        f"{script} does not exist in {cwd} (the {whose} working directory): {who} will fail"
        f" unless it is made before {start}; check the path{' or pass --cwd' * moved}"
    )
