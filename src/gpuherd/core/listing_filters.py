"""The refusal of a listing's text filter that names nothing: `ls --project "$P"` with P
unset, `Herd.jobs(project="")`, `GET /api/v1/jobs?project=`, or one with a NUL byte
(`?project=%00`), which no job's project, name or sweep holds (a submission refuses it).
Matched, either picks no job, an empty list a script cannot tell from "none of that
project" (or, negated, `kill $(ls -q ...)`: every job). One wording, each client naming the
filter its own way.

Pure: no I/O."""

from __future__ import annotations

from gpuherd.core.text import shell_word

GIVE = {
    "project": "a project",
    "sweep": "a sweep's name (gpuherd sweep ls lists them)",
    "name": "a name or a pattern like 'resnet-*'",
}
"""What each text filter takes, as its refusal says to give it."""


def empty_filter(key: str, value: str | None, named: str, leave_out: str) -> str | None:
    """Why `value` of the text filter `key` (project, sweep or name) names nothing: '' (a
    script's unset variable) or only white space, which no job's project, sweep or name is
    (submission_text.blank, core/sweep_spec.is_sweep_name); None for a value that can
    match, or None. `named`: the filter as the client takes it (`--project`, `project`);
    `leave_out`: how that client asks for no filter (`leave --project out`). One holding a
    NUL byte names nothing either (said without the value: a terminal shows no NUL)."""
    if value is None:
        return None
    if "\0" in value:
        return (
            f"{named} holds a NUL byte, which no job's {key} can: give {GIVE[key]}, or {leave_out}"
        )
    if value.strip():
        return None
    what = f"{shell_word(value)} is only white space" if value else "is empty"
    return f"{named} {what}: give {GIVE[key]}, or {leave_out}"
