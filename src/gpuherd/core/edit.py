"""Editing a waiting job: which fields may change, and what a change says in the job's events.

Pure: the caller checks the edited spec as a submission is checked, and stores it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from gpuherd.core.model import JobSpec
from gpuherd.core.units import format_given, format_size

EDITABLE = (
    "command",
    "name",
    "gpus",
    "only_gpus",
    "mem",
    "ram",
    "exclusive",
    "retries",
    "retry_delay",
    "timeout",
    "project",
    "env_overrides",
)
"""JobSpec fields `gpuherd edit` changes (each a jobs column of the same name). The job's
variables (`--env`) are set one by one, the others kept: `edit --env A=1` adds or changes A."""
CLEARABLE = (
    "name",
    "only_gpus",
    "mem",
    "ram",
    "retry_delay",
    "timeout",
    "project",
    "env_overrides",
)
"""Fields `--clear` sets back to undeclared."""
_UNDECLARED: dict[str, Any] = {"only_gpus": (), "env_overrides": {}}
"""What a cleared field becomes, where that is not None."""


def check_edit(changes: Mapping[str, Any], clear: Sequence[str]) -> None:
    """ValueError names a field that cannot be edited (or cleared), or one given both ways."""
    wrong = sorted(set(changes) - set(EDITABLE))
    if wrong:
        raise ValueError(f"{wrong[0]} cannot be edited: edit one of {', '.join(EDITABLE)}")
    wrong = sorted(set(clear) - set(CLEARABLE))
    if wrong:
        raise ValueError(f"{wrong[0]} cannot be cleared: clear one of {', '.join(CLEARABLE)}")
    both = sorted(set(changes) & set(clear))
    if both:
        raise ValueError(f"{both[0]} is both set and cleared: give one")
    if not changes and not clear:
        raise ValueError(f"nothing to change: give one of {', '.join(EDITABLE)} (or clear one)")


def edit_spec(
    spec: JobSpec, changes: Mapping[str, Any], clear: Sequence[str]
) -> tuple[JobSpec, list[str]]:
    """The spec with `changes` made and `clear` fields unset (as check_edit allows), and the
    fields that differ from `spec`."""
    wanted = {**changes, **{name: _UNDECLARED.get(name) for name in clear}}
    if isinstance(wanted.get("command"), str):
        wanted["command"] = wanted["command"].strip()
    if "only_gpus" in wanted:
        wanted["only_gpus"] = tuple(sorted(set(wanted["only_gpus"])))
    if "env_overrides" in changes:
        wanted["env_overrides"] = {**spec.env_overrides, **changes["env_overrides"]}
    edited = replace(spec, **wanted)
    return edited, [name for name in EDITABLE if getattr(edited, name) != getattr(spec, name)]


def describe_edit(before: JobSpec, after: JobSpec, fields: Sequence[str]) -> str:
    """`gpus 1 -> 2, mem 10GiB -> none, command`: what changed, short enough for one line."""
    return ", ".join(
        name
        if name == "command"
        else f"{_NAMES.get(name, name)} {_show(name, before)} -> {_show(name, after)}"
        for name in fields
    )


_NAMES = {"env_overrides": "env"}
"""How a field is named in an edit's description, where not by its own name."""


def _show(name: str, spec: JobSpec) -> str:
    value = getattr(spec, name)
    if name == "only_gpus":
        return ",".join(map(str, value)) or "any"
    if name == "env_overrides":  # names only: values may be secrets, and events are shown
        return ",".join(sorted(value)) or "none"
    if value is None:
        return "none"
    if isinstance(value, bool):  # exclusive: `exclusive no -> yes`, not `False -> True`
        return "yes" if value else "no"
    if name in ("mem", "ram"):
        return format_size(value)
    if name in ("timeout", "retry_delay"):  # chosen, so as typed: 30s, not 30.0s
        return format_given(value)
    return str(value)
