"""A sweep's --env values that name its placeholders: pure, no I/O. The daemon warns of them
at a submission (sweep_checks.py) and the CLI's --dry-run, which expands without the daemon,
in the same words; those a sweep file's `env` gave are worded for the file by the submitter
(the CLI, the Python API: `worded_for_file`), and those of Python's `env=` for Python
(`worded_for_python`)."""

from __future__ import annotations

import re
import shlex
from collections.abc import Collection, Iterable, Mapping

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
    return [
        _warning(command, key, value, None)
        for key, value in (env_overrides or {}).items()
        if any(name in known for name in re.findall(r"\{(\w+)\}", value))
    ]


def worded_for_file(
    warnings: Iterable[str], command: str | None, file: str, file_env: Mapping[str, str]
) -> list[str]:
    """`warnings` with env_placeholders' of an entry of the sweep `file`'s `env` (`file_env`:
    those no --env or env= replaced) worded for the file: its `env` and `command` keys, not
    an `--env` and a `gpuherd sweep` command line the user never wrote. The daemon, sent the
    points' environment only, cannot tell where a value came from; the submitter rewords it,
    matching the text this module makes (a warning of another daemon's words is kept)."""
    return _reworded(warnings, command, file_env, ("file", file))


def worded_for_python(
    warnings: Iterable[str], command: str | None, env: Mapping[str, str], source: str
) -> list[str]:
    """`warnings` with env_placeholders' of an entry of Herd.sweep's `env=` (`env`) worded for
    Python: `env=` and the `herd.sweep(...)` that sets the variable in the command, not an
    `--env` and a `gpuherd sweep` line. `source` is what the command came from: "template"
    (herd.sweep's string), "spec" (a SweepSpec's `command`) or a sweep file's name (its
    `command` key), as each is changed in its own place."""
    return _reworded(warnings, command, env, ("python", source))


def _reworded(
    warnings: Iterable[str], command: str | None, env: Mapping[str, str], where: tuple[str, str]
) -> list[str]:
    """`warnings` with the CLI's words of each of `env`'s entries in `where`'s instead."""
    if command is None:
        return list(warnings)
    worded = {
        _warning(command, key, value, None): _warning(command, key, value, where)
        for key, value in env.items()
    }
    return [worded.get(text, text) for text in warnings]


def _warning(command: str, key: str, value: str, where: tuple[str, str] | None) -> str:
    """The warning of `key`'s value naming a placeholder: given as `--env` (`where` None), as
    an entry of a sweep file's `env` (("file", its name)), or of Python's `env=` (("python",
    where the command came from: worded_for_python))."""
    kind, source = where or ("cli", "")
    if kind == "cli":
        given, drop = f"--env {key}={value}", f"--env {key}"
    elif kind == "file":
        given, drop = f"env: {key}={value} in {source}", f"{key} from the file's env"
    else:
        given, drop = f"env={{{key!r}: {value!r}}}", f"{key} from env="
    said = f"{given}: placeholders are filled in the command only, so "
    if sets_variable(command, key):
        # The way out below would set it in the command a second time.
        return (
            f"{said}the environment gets {value!r} as it is; the command sets {key} "
            f"itself already, with each point's value: drop {drop}"
        )
    said += f"each point gets {value!r} as it is; set the variable in the "
    setting = f"{key}={value} {command}"
    if kind == "cli":
        return f"{said}command instead: gpuherd sweep {shlex.quote(setting)} ..."
    if kind == "python" and source == "template":
        return f"{said}command instead and drop {drop}: herd.sweep({setting!r}, ...)"
    if kind == "python" and source == "spec":
        return f"{said}SweepSpec's command instead (command={setting!r}) and drop {drop}"
    return f"{said}file's command instead (command: {setting}) and drop {drop}"


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
