"""Editing a waiting job: which fields may change, what a change says in the job's events,
where a new `--begin` puts the job, and whether new dependencies would wait for each other.

Pure: the caller checks the edited spec as a submission is checked, and stores it.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from gpuherd.core.deps import KINDS, kept_apart
from gpuherd.core.idspec import format_ids
from gpuherd.core.log_caps import cap_said
from gpuherd.core.states import JobState
from gpuherd.core.units import and_list, format_given, format_size
from gpuherd.core.when import BEGIN_RANGE, LATEST

if TYPE_CHECKING:  # the CLI's kill and edit import CLEARABLE without model's dataclasses
    from gpuherd.core.model import JobSpec

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
    "max_log_size",
    "project",
    "env_overrides",
    "cwd",
    "grace",
    *KINDS,
    "output",
    "error",
)
"""JobSpec fields `gpuherd edit` changes (each a jobs column of the same name). The job's
variables (`--env`) are set one by one, the others kept: `edit --env A=1` adds or changes A;
its dependencies (`--after`, `--after-any`, `--after-fail`) are replaced. `output` and
`error` come here absolute, as a submission stores them (the caller takes them from the
job's cwd). `max_log_size` 0 is `none`, no cap, as a submission takes it (cleared, too)."""
BEGIN = "begin"
"""Not the spec's: the time a job is held until (its release_at). Given, the job is held until
then (a time to come) or queued (one past); cleared, a job held until a time is queued now."""
CLEARABLE = (
    "name",
    "only_gpus",
    "mem",
    "ram",
    "retry_delay",
    "timeout",
    "max_log_size",
    "project",
    "env_overrides",
    *KINDS,
    "output",
    "error",
    BEGIN,
)
"""Fields `--clear` sets back to undeclared."""
_UNDECLARED: dict[str, Any] = {
    "only_gpus": (),
    "env_overrides": {},
    **{kind: () for kind in KINDS},
}
"""What a cleared field becomes, where that is not None."""


def check_edit(changes: Mapping[str, Any], clear: Sequence[str]) -> None:
    """ValueError names a field that cannot be edited (or cleared), or one given both ways."""
    wrong = sorted(set(changes) - {*EDITABLE, BEGIN})
    if wrong:
        names = ", ".join((*EDITABLE, BEGIN))
        raise ValueError(f"{wrong[0]} cannot be edited: edit one of {names}")
    wrong = sorted(set(clear) - set(CLEARABLE))
    if wrong:
        raise ValueError(f"{wrong[0]} cannot be cleared: clear one of {', '.join(CLEARABLE)}")
    begin = changes.get(BEGIN)
    if begin is not None and not 0 <= begin <= LATEST:  # NaN too
        raise ValueError(f"begin (--begin) must be {BEGIN_RANGE}")
    for text in ("name", "project"):  # ('' is none, as edit_spec takes it: a clear)
        value = changes.get(text)
        if isinstance(value, str) and value and not value.strip():
            raise ValueError(f"{text} {value!r} is only white space: give a {text}, or clear it")
    both = sorted(set(changes) & set(clear))
    if both:
        # (by the API's field: the CLI and the Python API refuse it first, in their words)
        raise ValueError(f"{both[0]} is both set and cleared: give one")
    if not changes and not clear:
        names = ", ".join((*EDITABLE, BEGIN))
        raise ValueError(f"nothing to change: give one of {names} (or clear one)")


def edit_spec(
    spec: JobSpec, changes: Mapping[str, Any], clear: Sequence[str]
) -> tuple[JobSpec, list[str]]:
    """The spec with `changes` made and `clear` fields unset (as check_edit allows), and the
    fields that differ from `spec` (BEGIN is no field of it: see `begin_edit`)."""
    wanted = {**changes, **{name: _UNDECLARED.get(name) for name in clear}}
    wanted.pop(BEGIN, None)
    if isinstance(wanted.get("command"), str):
        wanted["command"] = wanted["command"].strip()
    for text in ("name", "project"):  # '' is none, as a submission stores it: not a value
        if wanted.get(text) == "":
            wanted[text] = None
    if wanted.get("max_log_size") == 0:  # `--max-log-size none`: no cap
        wanted["max_log_size"] = None
    if "only_gpus" in wanted:
        wanted["only_gpus"] = tuple(sorted(set(wanted["only_gpus"])))
    if "env_overrides" in changes:
        wanted["env_overrides"] = {**spec.env_overrides, **changes["env_overrides"]}
    # As a submission stores them (spec_from_item): a job in after_any and another list
    # waits as the other says.
    if any(kind in wanted for kind in KINDS):
        lists = (wanted.get(kind, getattr(spec, kind)) for kind in KINDS)
        wanted.update(zip(KINDS, kept_apart(*lists), strict=True))
    edited = replace(spec, **wanted)
    return edited, [name for name in EDITABLE if getattr(edited, name) != getattr(spec, name)]


GPU_ONLY = ("exclusive", "only_gpus", "mem")
"""What only a job with GPUs may have: a CPU-only one (gpus 0) gets no GPU to itself, none
to choose among and no GPU memory."""
_UNSET = {"exclusive": "--no-exclusive"}
"""The edit option that unsets a GPU_ONLY field, where it is not `--clear FIELD`."""


def cpu_only_kept(job_id: int, edited: JobSpec, given: Collection[str]) -> str | None:
    """The refusal of an edit (`given`: the fields it sets or clears) that leaves job `job_id`
    CPU-only with GPU_ONLY fields, where one side is the job's own, kept: the edit's way out,
    for every such field at once. None where the edit gave both sides (check_spec says it, in
    a submission's words) or the job can have what it has.

    check_spec's "exclusive (--exclusive) with gpus 0 (--gpus 0): ... drop one of them" told
    the user of `edit 1 --gpus 0` to drop options not on their command line, one at a time:
    a job `--exclusive --only-gpus 1 --mem 5GiB` took three tries. The job's id leads (`job 1
    has`), as idspec.summarize says the jobs refused alike (`jobs 1-3 have`)."""
    if edited.gpus != 0 or not (have := [n for n in GPU_ONLY if getattr(edited, n)]):
        return None
    kept = [name for name in have if name not in given]
    if "gpus" not in given:  # the job was CPU-only: the edit gives it what needs a GPU
        return None if kept else _needs_gpus(job_id, have)
    if not kept:
        return None
    unset = " ".join(_UNSET.get(name, f"--clear {name}") for name in kept)
    for_api = ["exclusive false"] if "exclusive" in kept else []  # (the HTTP and Python APIs')
    if cleared := [name for name in kept if name not in _UNSET]:
        for_api.append(f"{and_list(cleared)} cleared")
    dropped = [name for name in have if name in given]  # (the API's: the CLI refuses them)
    also = f", and leave {and_list([_field(n) for n in dropped])} out of it" if dropped else ""
    return (
        f"job {job_id} has {and_list([_field(n) for n in kept])}, and a CPU-only job, gpus 0 "
        f"(--gpus 0), gets no GPU: add {unset} to the edit ({', '.join(for_api)}){also}"
    )


def _needs_gpus(job_id: int, given: Sequence[str]) -> str:
    """The refusal of an edit that gives a CPU-only job what needs a GPU (`given`): the job's
    gpus 0 is its own, so "drop one of them" named an option the user did not type."""
    needs = "needs" if len(given) == 1 else "need"
    ram = "; host memory is ram (--ram)" if "mem" in given else ""
    return (
        f"job {job_id} is CPU-only (gpus 0), and a CPU-only job gets no GPU: "
        f"{and_list([_field(n) for n in given])} {needs} gpus (--gpus) in the same edit{ram}"
    )


def _field(name: str) -> str:
    """`only_gpus (--only-gpus)`: as submission_text.field names a field, for every client
    (the dashboard puts its boxes' labels in their place)."""
    return f"{name} (--{name.replace('_', '-')})"


def begin_edit(
    state: JobState, release_at: float | None, begin: float | None, now: float
) -> tuple[JobState, float | None] | None:
    """Where `edit --begin` (`begin`; None: `--clear begin`) puts a waiting job held until
    `release_at` (if any): (state, release_at), or None when nothing changes. A time to come
    holds it until then; one past queues it now, as a submission with it would be; cleared, a
    job held until a time is queued now (one held by `hold`, with no time, stays held)."""
    if begin is not None and begin > now:
        wanted: tuple[JobState, float | None] = (JobState.HELD, begin)
    elif begin is not None or release_at is not None:
        wanted = (JobState.QUEUED, None)
    else:
        return None
    if state is JobState.QUEUED and wanted[0] is JobState.QUEUED:
        return None  # (its release_at, if any, is a --retry-delay's: kept)
    return None if (state, release_at) == wanted else wanted


def dependency_cycle(
    job_id: int, deps: Iterable[int], waiting_for_job: Collection[int]
) -> int | None:
    """The first of `deps` that job `job_id` cannot wait for, as it is the job itself or
    already waits for it (`waiting_for_job`: the jobs that do, directly or through others):
    the two would wait for each other for ever. None: no such one."""
    return next((dep for dep in sorted(deps) if dep == job_id or dep in waiting_for_job), None)


def describe_edit(before: JobSpec, after: JobSpec, fields: Sequence[str]) -> str:
    """`gpus 1 -> 2, mem 10GiB -> none, command`: what changed, short enough for one line."""
    return ", ".join(
        name if name == "command" else f"{_NAMES.get(name, name)} {change(name, before, after)}"
        for name in fields
    )


def change(name: str, before: JobSpec, after: JobSpec) -> str:
    """`1 -> 2`, `none -> 10 GiB`: field `name` of `before`, then of `after`."""
    return f"{_show(name, before)} -> {_show(name, after)}"


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
    if name == "kill_on_no_output":  # as --on-no-output takes it (a sweep's warning)
        return "kill" if value else "flag"
    if isinstance(value, bool):  # exclusive: `exclusive no -> yes`, not `False -> True`
        return "yes" if value else "no"
    if name in ("mem", "ram"):
        return format_size(value)
    if name == "max_log_size":  # as typed: 10 GiB, not 10.0 GiB
        return cap_said(value)
    if name in ("timeout", "retry_delay", "grace", "no_output_timeout"):  # chosen: as typed
        return format_given(value)
    if name in KINDS:
        return format_ids(value) or "none"
    return str(value)
