"""A sweep's `{placeholders}` where they are not filled in: in `--output`/`--error` (a file's
`output`/`error`), which take `%x`, `%j` and `%a` as `submit`'s do, and in the results folder,
which fills in `{sweep}` alone. `-o '{run_dir}/train.log'` was refused with advice to create a
folder literally named `{run_dir}` (mkdir -p '.../{run_dir}'), and `--results-dir 'res/{x}'`
made that folder, `{x}` and all, for the whole sweep.

The results folder's is refused rather than warned of: it is one folder for the whole sweep,
the points' folders inside it being named after their values already (`res/x=1`); a
placeholder there can only be a mistake, and nothing made with it is wanted (a warning would
come with the folder `{x}` made all the same)."""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Mapping
from typing import Any

import click

from gpuherd.core.output_files import PLACEHOLDERS
from gpuherd.core.sweep_spec import SWEEP_FIELD
from gpuherd.errors import HerdError

_PLACEHOLDER = re.compile(r"(?<!\{)\{[A-Za-z_]\w*(?:![rsa])?(?::[^{}]*)?\}(?!\})")
"""A sweep's placeholder as a template writes one (`{lr}`, `{lr:.1e}`, `{run_dir}`); not
`{{x}}`, a template's literal braces."""

_EXAMPLES = {"output": "logs/%x.log", "error": "logs/%x.err"}
_LETTERS = ", ".join(f"%{letter} ({what})" for letter, what in PLACEHOLDERS.items())


def refuse_placeholder_paths(
    chosen: Mapping[str, Any],
    in_file: Callable[[str], str | None],
    results_dir: str,
    results_where: str | None,
) -> None:
    """Refuse a sweep placeholder in the output files `chosen` names or in `results_dir`: a
    usage error (exit 2) for a flag's value, a HerdError naming the file's line for a sweep
    file's key (`in_file`: where the file gave it; `results_where`: where it gave
    results_dir, None when --results-dir did, or no file)."""
    for key in ("output", "error"):
        value = chosen.get(key)
        if value is not None and (found := _PLACEHOLDER.search(value)):
            where = in_file(key)
            why = _output_words(found.group(), value, key if where else f"--{key}")
            _refuse(key, value, why, where)
    if others := [p for p in _PLACEHOLDER.findall(results_dir) if p != SWEEP_FIELD]:
        typed = "results_dir: " if results_where else "--results-dir "
        why = _results_words(others[0], results_dir, typed)
        _refuse(typed.strip(" :-"), results_dir, why, results_where)


def _refuse(key: str, value: str, why: str, where: str | None) -> None:
    """`where: key: value: why` for the file's key; `--key value: why` for the flag's."""
    if where:  # (as the file's other errors name theirs)
        raise HerdError(f"{where}: {key}: {value}: {why}")
    raise click.UsageError(f"--{key} {value}: {why}")


def _output_words(placeholder: str, value: str, key: str) -> str:
    said = (
        f"{placeholder} is a placeholder of the command only; {key} takes {_LETTERS}"
        f" instead: {shlex.quote(_EXAMPLES[key.lstrip('-')])} gives each point a file of its own"
    )
    if placeholder == "{run_dir}":  # (the point's own folder: the command can write there)
        file = value.rpartition("/")[2] or "out.log"
        said += f" (or end the command with > {{run_dir}}/{file} for one in its folder)"
    return said


def _results_words(placeholder: str, value: str, typed: str) -> str:
    kept = "/".join(part for part in value.split("/") if not _has_other(part)) or "results"
    return (
        f"{placeholder} is not filled in there: the results folder is one for the whole sweep,"
        " the points' folders in it named after their parameters already; it fills in"
        f" {SWEEP_FIELD} alone (the sweep's name): {typed}{shlex.quote(kept)}"
    )


def _has_other(part: str) -> bool:
    return any(found != SWEEP_FIELD for found in _PLACEHOLDER.findall(part))
