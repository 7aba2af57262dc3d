"""A sweep's `fixed` values that reach no point: pure, no I/O.

One every point varies (a key of every grid, or a random one) is refused wherever it is
given: each point takes that key's value from its grid (or draws it), so the fixed value was
dropped without a word (`fixed={"lr": 5}` with `grid: {lr: [1, 2]}` ran `--lr 1` and
`--lr 2`). One that only some grids vary stays: it is the value of the other grids' points.
Checked at submission (the daemon's, a sweep file's, the Python API's), not by SweepSpec
itself: a sweep stored before this was refused must still be read back. (A GPU Task
Scheduler config's global_config key that every test_config gives is dropped instead, as GTS
drops it: sweep_config.from_config.)

One that the command template never uses is refused too. A grid value no placeholder uses
still names the points' folders (`-p rep 1 2 3` runs three repeats), so it is only warned of
(sweeps.py). A fixed value names no folder: one that no placeholder uses reaches the program
only through the point's params.json, which a program can find only when the command gives
it the point's folder ({run_dir}, or $GPUHERD_JOB_DIR). Without it the value does nothing at
all, which is almost surely a misspelt key (`fixed={"lR": 0.1}` meant to override the file's
`lr`): refused, not dropped without a word. With the folder given (GPU Task Scheduler's way:
`num_epoch` read from params.json), only a key that differs from a placeholder's by case, `_`
or `-` alone is taken for a typo: a program reading `lr` would not read `lR` too.
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


def overridden_fixed(spec: SweepSpec) -> SweepError | None:
    """Why a fixed value reaches no point because every point varies its key (the first such
    key), or None. For a command template and a Python task alike."""
    for key in spec.fixed:
        if key in spec.random:
            where, other = "random", "random to draw it"
        elif spec.grids and all(key in grid for grid in spec.grids):
            where = "grid" if len(spec.grids) == 1 else "every grid"
            other = "grid for several values"
        else:
            continue
        return SweepError(
            f"fixed.{key}: {key} is also in {where}, which gives every point its own {key}, so"
            f" the fixed value would reach no point: give {key} in one of them (fixed for one"
            f" value, {other})",
            ("fixed", key),
        )
    return None


def unused_fixed(spec: SweepSpec) -> SweepError | None:
    """Why a fixed value reaches no point (the first such key), or None: every point varies
    its key (overridden_fixed), or the spec's command template leaves it unused. The latter
    only for a command template: a Python task is given its fixed values as keywords, which
    its call checks against the function (tasks.py)."""
    if overridden := overridden_fixed(spec):
        return overridden
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
