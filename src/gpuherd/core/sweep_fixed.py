"""A sweep's `fixed` values that its command template never uses: pure, no I/O.

A grid value no placeholder uses still names the points' folders (`-p rep 1 2 3` runs three
repeats), so it is only warned of (sweeps.py). A fixed value names no folder: one that no
placeholder uses reaches the program only through the point's params.json, which a program
can find only when the command gives it the point's folder ({run_dir}, or
$GPUHERD_JOB_DIR). Without it the value does nothing at all, which is almost surely a
misspelt key (`fixed={"lR": 0.1}` meant to override the file's `lr`): refused, not dropped
without a word. With the folder given (GPU Task Scheduler's way: `num_epoch` read from
params.json), only a key that differs from a placeholder's by case, `_` or `-` alone is
taken for a typo: a program reading `lr` would not read `lR` too.
"""

from __future__ import annotations

import difflib
import re

from gpuherd.core.sweep_names import RESERVED, SweepError, template_fields
from gpuherd.core.sweep_spec import SweepSpec

FOLDER_VARIABLE = "GPUHERD_JOB_DIR"
"""The variable that holds a job's folder (a sweep point's): a command naming it gives its
program the point's params.json."""


def _folded(key: str) -> str:
    return key.lower().replace("_", "").replace("-", "")


def unused_fixed(spec: SweepSpec) -> SweepError | None:
    """Why the spec's command template leaves a fixed value unused (the first such key), or
    None. Only for a command template: a Python task is given its fixed values as keywords,
    which its call checks against the function (tasks.py)."""
    if spec.command is None:
        return None
    fields = template_fields(spec.command)
    placeholders = [k for k in dict.fromkeys(fields) if k not in RESERVED]
    used = {*fields, *spec.varying, *(k for partial in spec.exclude for k in partial)}
    expression = spec.exclude_expr or ""
    folder_given = "run_dir" in fields or FOLDER_VARIABLE in spec.command
    for key in spec.fixed:
        if key in used or re.search(rf"\b{re.escape(key)}\b", expression):
            continue
        alike = [p for p in placeholders if _folded(p) == _folded(key)]
        if folder_given and not alike:
            continue  # read from params.json, as GPU Task Scheduler's programs do
        return SweepError(_said(key, placeholders, alike), ("fixed", key))
    return None


def _said(key: str, placeholders: list[str], alike: list[str]) -> str:
    listed = ", ".join(f"{{{p}}}" for p in placeholders)
    where = f"placeholders: {listed}" if placeholders else "the command has no placeholder"
    if alike:
        return (
            f"fixed.{key}: no placeholder of the command uses it, and it differs from "
            f"{{{alike[0]}}} only in case, _ or -: misspelt? give it as {alike[0]}, or leave "
            f"it out ({where})"
        )
    close = difflib.get_close_matches(key, placeholders, n=1)
    meant = f"did you mean {close[0]}? " if close else ""
    return (
        f"fixed.{key}: no placeholder of the command uses it, so it would reach no point "
        f"({meant}{where}): write {{{key}}} in the command, or leave the value out (a program "
        "that reads its values from the point's params.json is given the point's folder: "
        "{run_dir})"
    )
