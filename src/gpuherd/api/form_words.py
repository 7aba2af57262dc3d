"""The dashboard's forms say what is wrong in their own words: a field by the label its box
has on the page, always quoted (`'GPUs' must be ...`, `'only on GPUs': ...`: form_fields
quotes the label before a reader's refusal, as the daemon's lines are quoted here), never by
the API's name and the CLI's option that the daemon's messages give it (`gpus (--gpus)`,
submission_text.field), which a form's user never typed."""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping

from gpuherd.core.edit import EDITABLE, change, describe_edit
from gpuherd.core.model import JobSpec
from gpuherd.core.units import format_size

SUBMIT_LABELS = {
    "commands": "commands",
    "name": "name",
    "gpus": "GPUs",
    "only_gpus": "only on GPUs",
    "mem": "memory per GPU",
    "priority": "priority",
    "project": "project",
    "begin": "begin",
    "hold": "submit held",
    "ram": "host memory",
    "retries": "retries",
    "retry_delay": "retry delay",
    "timeout": "timeout",
    "max_log_size": "max log size",
    "grace": "grace",
    "after": "after",
    "after_any": "after any end of",
    "after_fail": "after a failure of",
    "cwd": "working directory",
    "env": "environment changes",
    "output": "output file",
    "error": "error file",
}
"""The submit page's fields (templates/submit.html), by the labels their boxes have (those
under "More options" too: the edit form's labels, where the edit form has the field)."""

EDIT_LABELS = {
    "command": "command",
    "name": "name",
    "gpus": "GPUs",
    "only_gpus": "only on GPUs",
    "mem": "memory per GPU",
    "ram": "host memory",
    "retries": "retries",
    "retry_delay": "retry delay",
    "timeout": "timeout",
    "max_log_size": "max log size",
    "project": "project",
    "after": "after",
    "after_any": "after any end of",
    "after_fail": "after a failure of",
    "begin": "begin",
    "grace": "grace",
    "cwd": "working directory",
    "output": "output file",
    "error": "error file",
}
"""A job's edit form's fields (templates/_job.html), by the labels their boxes have."""

GPU_LABELS = {"slots": "slots"}
"""The GPUs page's form to add a GPU (templates/gpus.html): `'slots' must be 1 to 1024`,
where the daemon's line names `slots (--slots)`, an option of `gpuherd gpus add`."""

_FIELD = re.compile(r"\b([a-z_]+)(?:( [^\s()]+) \(--[a-z-]+\2\)| \(--[a-z-]+(?: [a-z]+)?\))")
"""A field as submission_text.field writes it: `gpus (--gpus)`, `gpus 0 (--gpus 0)` (the
value given twice), `kill_on_no_output (--on-no-output kill)`."""


_OPTION = re.compile(r"(?<![\w(-])--(only-gpus)(?![\w-])")
"""An option written alone, not as a field: the reasons a job can never run name the GPUs
it may use so (`asks for 1 GPU of --only-gpus 7`, `--only-gpus names 1`: core/naming's
only_flag), as do the warnings of an edit (`--only-gpus 1 keeps the job on those GPUs`).
Only these: an option in the hint of a line (`check the path or pass --cwd`) is advice to
the CLI's user, and a label there would not read."""


def in_form_words(message: str, labels: Mapping[str, str]) -> str:
    """`message` with each field a form has named by its label, quoted as the label of a box
    (`mem (--mem) with gpus 0 (--gpus 0)` -> `'memory per GPU' with 'GPUs' 0`), also where
    the message names it by its option alone (`of --only-gpus 7` -> `of 'only on GPUs' 7`;
    it named the CLI's option on the form). A field the form has no box for keeps its name
    and option (where else the job can be given it), and a command to type, in backquotes,
    is left as typed."""

    def label(found: re.Match[str]) -> str:
        name, value = found.group(1), found.group(2) or ""
        return f"'{labels[name]}'{value}" if name in labels else found.group(0)

    def option(found: re.Match[str]) -> str:
        name = found.group(1).replace("-", "_")
        return f"'{labels[name]}'" if name in labels else found.group(0)

    parts = _FIELD.sub(label, message).split("`")
    # (the odd parts are quoted commands: `gpuherd edit 7 --gpus 1` stays as it is typed)
    return "`".join(p if i % 2 else _OPTION.sub(option, p) for i, p in enumerate(parts))


_SIZES = ("mem", "ram", "max_log_size")
"""Fields whose values are sizes: an edit's answer says them as the form's boxes show them."""


def edited_in_form_words(
    line: str,
    before: JobSpec,
    after: JobSpec,
    fields: Collection[str],
    labels: Mapping[str, str],
    begin: bool = False,
) -> str:
    """An edit's answer (`job 7: edited (only_gpus 1 -> 2, ram 1.0 GiB -> 2.0 GiB, ...)`)
    with each field named by its box's label, as the form's refusals name it, and every size
    as the boxes show it: `edited ('only on GPUs' 1 -> 2, 'host memory' 1.0 GiB -> 2.0 GiB,
    'max log size' 1.0 GiB -> 2.0 GiB)`. Before, the form said the API's names and wrote
    sizes two ways (`max_log_size 1 GiB`, as the CLI's `edit` does, which keeps it). Only
    the daemon's description of `fields` (core/edit.describe_edit, in EDITABLE's order) and,
    with `begin` (edited), of the begin time that follows it are rewritten, found whole: the
    rest (its times, a retry's wait) stays, and a line that does not hold them (the job
    edited again meanwhile) is left as it is."""
    order = [name for name in EDITABLE if name in fields]
    said = f"edited ({describe_edit(before, after, order)}" if order else "edited ("
    if said not in line:
        return line

    def part(name: str) -> str:
        if name not in labels:  # (no box for it: as the daemon names it)
            return describe_edit(before, after, [name])
        label = f"'{labels[name]}'"
        if name == "command":
            return label
        if name in _SIZES:
            was, now = (getattr(spec, name) for spec in (before, after))
            return f"{label} {_size(was)} -> {_size(now)}"
        return f"{label} {change(name, before, after)}"

    ours = f"edited ({', '.join(map(part, order))}"
    if begin:  # (service_edit._describe_begin: `begin none -> 23:30`, after the fields)
        time = (", " if order else "") + "begin "
        start = line.index(said) + len(said)
        if line.startswith(time, start):
            said += time
            ours += (", " if order else "") + f"'{labels['begin']}' "
    return line.replace(said, ours, 1)


def _size(value: int | None) -> str:
    return format_size(value) if value else "none"
