"""A sweep's --env values that name its placeholders: pure, no I/O. The daemon warns of them
at a submission (sweep_checks.py) and the CLI's --dry-run, which expands without the daemon,
in the same words."""

from __future__ import annotations

import re
import shlex
from collections.abc import Collection, Mapping

from gpuherd.core.sweep_names import RESERVED


def env_placeholders(
    command: str | None, names: Collection[str], env_overrides: Mapping[str, str] | None
) -> list[str]:
    """A warning for an --env value naming a placeholder (one of `names`, the spec's
    parameters, or a reserved one), as `--env GFLOW_ARRAY_TASK_ID={i}` for a script that
    reads its index from a variable (gflow's and Slurm's arrays): the points' environment is
    given as it is, so each point got `{i}`, not its value. Set in the command, the variable
    gets it. None for a task's sweep (no `command` template)."""
    if command is None:
        return []
    known = {*names, *RESERVED}
    warnings = []
    for key, value in (env_overrides or {}).items():
        if not any(name in known for name in re.findall(r"\{(\w+)\}", value)):
            continue
        said = f"--env {key}={value}: placeholders are filled in the command only, so "
        if sets_variable(command, key):
            # The way out below would set it in the command a second time.
            warnings.append(
                f"{said}the environment gets {value!r} as it is; the command sets {key} "
                f"itself already, with each point's value: drop --env {key}"
            )
            continue
        instead = shlex.quote(f"{key}={value} {command}")
        warnings.append(
            f"{said}each point gets {value!r} as it is; set the variable in the command instead: "
            f"gpuherd sweep {instead} ..."
        )
    return warnings


def sets_variable(command: str, name: str) -> bool:
    """Whether the shell command assigns `name` for what it runs: `NAME=v prog`, also after
    other assignments (quoted values too), at a line's start (a sweep file's `command: |`),
    after `;`, `&&`, `|`, `(`, `{`, `!`, `then`, `do` or `else`, or as `export NAME=` and
    `env NAME=`; not a `NAME=v` that is an argument (`echo NAME=v`, Hydra's overrides)."""
    value = r"""(?:"[^"]*"|'[^']*'|\S)*"""
    assigned = rf"[A-Za-z_]\w*={value}\s+"
    start = r"(?:^|[;&|({!]|\b(?:export|env|then|do|else)\s)"
    found = re.search(rf"{start}\s*(?:{assigned})*{re.escape(name)}=", command, re.MULTILINE)
    return found is not None
