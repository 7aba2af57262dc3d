"""The warning of a job script written for Slurm, run by `submit` or by a sweep's points: its
`#SBATCH` lines are sbatch's options, which gpuherd does not read (core/sbatch_directives.py).
It was submit_hints.py's, said only when some line had an option of the same here: a script
of `--array=1-3` alone ran once, with `$SLURM_ARRAY_TASK_ID` empty, and nothing said; one
that had both was offered a plain submit, which ran it once too, and `--requeue`, `--signal`
and `--dependency` were "not used here" where submit's own hints name their options. Nor was
a sweep's template, or `cd DIR && ./job.sh`, looked into."""

from __future__ import annotations

import dataclasses
import functools
import os
import re
import shlex
from collections.abc import Mapping
from typing import Any

from gpuherd.script_files import script_file
from gpuherd.typed_name import typed_name

_SCRIPT_HEAD = 64 * 1024
"""How much of a script is read for its #SBATCH lines (they come before its first command)."""

_CD_FIRST = re.compile(r"\s*cd\s+([\w./+@%,=:][\w./+@%,=:-]*)\s*(?:&&|;)\s*(\S.*)", re.DOTALL)
"""`cd DIR && ./job.sh`: the script is looked for from DIR; only a plain DIR (nothing the
shell expands, no quotes), so that where it is is sure."""

_ANSWERED = ("--array", "--requeue", "--dependency")
"""The options submit_options leaves out that are answered here (the rest: "not used")."""

_ARRAY_INDEX = "SLURM_ARRAY_TASK_ID"


@dataclasses.dataclass(frozen=True)
class _Run:
    """A script a command runs: its path, and the command from the words that run it on
    (`./job.sh`, after a `cd DIR && `, which is `before`)."""

    path: str
    before: str
    runs: str


def _script_run(command: str, cwd: str, env: Mapping[str, str]) -> _Run | None:
    path = script_file(command, cwd, env)
    if path is not None:
        return _Run(path, "", command)
    moved = _CD_FIRST.fullmatch(command)
    if moved is None:
        return None
    path = script_file(moved.group(2), os.path.join(cwd, moved.group(1)), env)
    return None if path is None else _Run(path, command[: moved.start(2)], moved.group(2))


def sbatch_lines_hint(command: str, job: Mapping[str, Any], env: Mapping[str, str]) -> str | None:
    """What to say when `command` (submitted with `job`'s options, a SubmitItem's fields)
    runs a script written for Slurm: the options that do the job of its #SBATCH lines here,
    but those the submission gave itself; a sweep's for an `--array`. None when there is
    nothing left to give (a `-p gpu` is no matter here), and for anything else."""
    run = _script_run(command, job["cwd"], env)
    words = None if run is None else _script_directives(run.path)
    if run is None or not words:
        return None
    said = _Said(words, job, sweep=False)
    array = None
    if "--array" in said.values and _ARRAY_INDEX not in command + str(job["env_overrides"]):
        array = said.array_sweep(run)
    if not (said.options or said.notes or array):
        return None
    head = _head(run.path, job["cwd"])
    if array:
        return f"{head}: {array}{said.given()}{said.tail()}"
    if not said.options:
        return f"{head}{said.tail(first=True)}"
    plain = all(word and shlex.quote(word) == word for word in command.split(" "))
    shown = command if plain else shlex.quote(command)  # (`'./job.sh > out.txt'`)
    return (
        f"{head}: give their options to submit: {typed_name()} submit{said.given()} -- "
        f"{shown}{said.tail()}"
    )


def sweep_sbatch_hint(
    template: str, options: Mapping[str, Any], cwd: str, env: Mapping[str, str]
) -> str | None:
    """The same for a sweep whose points run such a script (`./job.sh {i}`), `options` being
    its SweepOptions': `--gpus 2` of its lines was not given, and each point ran on one GPU.
    The sweep is its array; an array's `%4` is its --max-parallel 4. Not its --name: the
    sweep's there (and its results folder's)."""
    run = _script_run(template, cwd, env)
    words = None if run is None else _script_directives(run.path)
    if run is None or not words:
        return None
    said = _Said(words, options, sweep=True)
    if not (said.options or said.notes):
        return None
    head = _head(run.path, cwd)
    if not said.options:
        return f"{head}{said.tail(first=True)}"
    return f"{head}: give their options to the sweep:{said.given()}{said.tail()}"


def _head(path: str, cwd: str) -> str:
    """The warning's start, naming the script from `cwd` (by its full path when outside it:
    `cd /data/run && ./job.sh`)."""
    shown = os.path.relpath(path, cwd)
    shown = os.path.normpath(path) if shown.startswith("..") else shown
    return f"{shown} has #SBATCH lines, which gpuherd does not read"


@functools.cache  # (read, never changed: once for a --file's 10,000 lines)
def _defaults() -> dict[str, Any]:
    from gpuherd.wire_requests import SweepOptions  # (a superset of a SubmitItem's options)

    return dataclasses.asdict(SweepOptions()) | {"name": None}


class _Said:
    """What a script's #SBATCH `words` ask that the submission (`job`: its options) did not
    give itself: submit's options that do it, and how to do those it has none of."""

    def __init__(self, words: list[str], job: Mapping[str, Any], sweep: bool) -> None:
        from gpuherd.core.sbatch_directives import FIELDS, submit_options, values

        defaults = _defaults()

        def unasked(*fields: str) -> bool:  # (what the submission gave itself is what it meant)
            return all(job.get(field, defaults[field]) == defaults[field] for field in fields)

        options, left_out = submit_options(words)
        self.values = values(words)
        self.options = [
            pair
            for pair in options
            if unasked(FIELDS[pair[0]]) and not (sweep and pair[0] == "--name")
        ]
        self.unused = [option for option in left_out if option not in _ANSWERED]
        self.notes = self._notes(unasked)
        cap = self._array_cap()
        if sweep and cap is not None and unasked("max_parallel"):
            self.options.append(("--max-parallel", str(cap)))

    def _notes(self, unasked: Any) -> list[str]:
        """How to do here what `--requeue`, `--dependency` and `--signal` asked (for an
        `--array`: array_sweep)."""
        from gpuherd.cli.other_tools_options import THEIR_OPTIONS
        from gpuherd.core.sbatch_directives import dependency_options, slurm_signal

        theirs = THEIR_OPTIONS["submit"]
        notes = []
        if "--requeue" in self.values and unasked("retries"):
            notes.append(f"--requeue: use {theirs['--requeue']}")
        after = self.values.get("--dependency")
        if after is not None and unasked("after", "after_any", "after_fail"):
            same = dependency_options(after)
            if same is None:
                notes.append(f"--dependency: use {theirs['--dependency']}")
            else:
                given = " ".join(f"{option} {ids}" for option, ids in same)
                notes.append(
                    f"--dependency={after}: use {given}, naming this queue's jobs (not Slurm's)"
                )
        signal = slurm_signal(self.values.get("--signal", ""))
        timed = any(option == "--grace" for option, _ in self.options)
        if signal is not None and signal[0] != "TERM" and timed:
            notes.append(
                f"--signal={self.values['--signal']}: the job gets SIGTERM at its --timeout, "
                f"and SIGKILL --grace later: trap TERM, not {signal[0]}"
            )
        return notes

    def _array_cap(self) -> int | None:
        from gpuherd.core.sbatch_directives import array_values

        found = array_values(self.values.get("--array", ""))
        return None if found is None else found[1]

    def array_sweep(self, run: _Run) -> str | None:
        """The sweep that runs the script once per index, as sbatch's `--array` does; None
        (and its hint as a note) when the indices or the command do not read as one."""
        from gpuherd.cli.other_tools_options import THEIR_OPTIONS
        from gpuherd.core.sbatch_directives import array_values

        spec = self.values["--array"]
        found = array_values(spec)
        if found is None or "{" in run.runs or "}" in run.runs:  # (read as placeholders)
            self.notes.insert(0, f"--array: use {THEIR_OPTIONS['submit']['--array']}")
            return None
        indices, cap = found
        template = f"{run.before}{_ARRAY_INDEX}={{i}} {run.runs}"
        most = f" --max-parallel {cap}" if cap else ""
        return (
            f"--array={spec} runs it once per index, as a sweep does here (submitted, it runs "
            f"once, with no ${_ARRAY_INDEX}): {typed_name()} sweep {shlex.quote(template)} "
            f"-p i {indices}{most}"
        )

    def given(self) -> str:
        return "".join(f" {option} {shlex.quote(value)}" for option, value in self.options)

    def tail(self, first: bool = False) -> str:
        """The options not used here, then the notes (after a `: ` when `first`)."""
        unused = f" ({', '.join(self.unused)}: not used here)" if self.unused else ""
        if not self.notes:
            return unused
        return f"{unused}{': ' if first else '; '}{'; '.join(self.notes)}"


@functools.cache
def _script_directives(path: str) -> list[str] | None:
    """The #SBATCH words of the script at `path`, read once however many of a `--file`'s
    10,000 lines run it; None when it cannot be read."""
    from gpuherd.core.sbatch_directives import directive_words

    try:
        with open(path, encoding="utf-8", errors="replace") as script:
            return directive_words(script.read(_SCRIPT_HEAD))
    except OSError:
        return None
