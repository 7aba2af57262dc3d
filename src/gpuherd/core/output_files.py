"""Files of the user's choosing that a job's output goes to (`--output`, `--error`, as Slurm's
`sbatch -o/-e`): their placeholders, checked at submission and filled in for each attempt.

`--output` alone takes both streams, as sbatch's does; with `--error` too, stderr goes to
that file (the same file for both is one file, written by both). The attempt's folder keeps
`stdout.log` and `stderr.log` as links to them (executors/local_outputs.py).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpuherd.core.log_names import FOLDER_LOGS

if TYPE_CHECKING:  # the CLI imports this module (ls, show, submit) without model's dataclasses
    from gpuherd.core.model import JobSpec

PLACEHOLDERS = {"j": "the job's id", "a": "the attempt's number", "x": "the job's name"}
"""What each `%` letter stands for; `%%` is a percent sign."""
UNNAMED = "job"
"""What `%x` is for a job without a name."""

_PLACEHOLDER = re.compile(r"%(.?)", re.DOTALL)
_SLURMS = {"A": " (Slurm's array id; a sweep's points are told apart by %x, their names)"}
"""What a Slurm user means by a letter unknown here (sbatch's `-o out-%A_%a.log`; its `%a`,
an array's index, is the attempt here)."""


def template_problem(template: str) -> str | None:
    """What is wrong with a file name's placeholders; None: nothing."""
    for found in _PLACEHOLDER.finditer(template):
        letter = found.group(1)
        if letter != "%" and letter not in PLACEHOLDERS:
            known = ", ".join(f"%{key} ({what})" for key, what in PLACEHOLDERS.items())
            theirs = _SLURMS.get(letter, "")
            what = f"unknown placeholder %{letter}{theirs}" if letter else "a % at its end"
            return f"{what}: use {known}, or %% for a percent sign"
    return None


def _letters(template: str) -> set[str]:
    return {found.group(1) for found in _PLACEHOLDER.finditer(template)}


def fixed_folder(template: str) -> str:
    """The folder of the file `template` (absolute) names, up to its first part that holds
    a placeholder (`%%` is none: it is written `%`): the folder that must exist when the job
    is submitted. The folders after it (`runs/%j/`) are created as each attempt starts
    (folders_to_make): one folder per job, as a Slurm user's `-o runs/%j/out.log` expects."""
    parts = template.split("/")[:-1]
    for n, part in enumerate(parts):
        if _letters(part) - {"%"}:
            parts = parts[:n]
            break
    return "/".join(part.replace("%%", "%") for part in parts) or "/"


def folders_to_make(fixed: str, path: str) -> list[str]:
    """The folders between `fixed` (fixed_folder) and the file `path` filled in from the
    same template, outermost first: what an attempt creates before it opens the file.
    ValueError naming the part if one is `.` or `..`: a job's name is a placeholder's value
    (`%x`), and a name of `..` must not put the file outside the folder the template gives
    (the stored template has no such part of its own: it is made absolute with them resolved)."""
    prefix = fixed.rstrip("/") + "/"
    if not path.startswith(prefix):  # (not filled in from that template: make nothing)
        return []
    parts = path[len(prefix) :].split("/")
    if bad := next((part for part in parts if part in (".", "..")), None):
        raise ValueError(bad)
    return [prefix + "/".join(parts[: n + 1]) for n in range(len(parts) - 1)]


def shared_file(specs: Sequence[JobSpec]) -> tuple[str, int, int] | None:
    """A file two of these jobs would both write, and the two jobs' places in `specs`; None
    when each writes its own. Each job's first attempt empties its file, so a sweep given
    `-o logs/run.log` kept its last point's output alone. A name with `%j` is each job's own;
    any other is compared as it is filled in for a first attempt (`%x` tells a sweep's
    points apart, not two jobs of one name)."""
    writers: dict[str, int] = {}
    for n, spec in enumerate(specs):
        mine = {
            expand(template, 0, 1, spec.name)
            for template in stream_templates(spec)
            if template is not None and "j" not in _letters(template)
        }
        for path in sorted(mine):
            if (first := writers.setdefault(path, n)) != n:
                return path, first, n
    return None


def sharing(path: str, jobs: str, by_name: bool = False) -> str:
    """What is wrong with `jobs` (`jobs 3 and 5`) writing one file, and what to do (`by_name`:
    they would by the names an edit gives them, which the file's name holds as %x)."""
    todo = (
        "give each a name of its own, or put %j (the job's id) in the file's name"
        if by_name
        else "put %j (the job's id) or %x (its name) in the file's name, so each job has its own"
    )
    return f"{jobs} would both write {path}, each emptying it as it starts: {todo}"


def expand(template: str, job_id: int, attempt: int, name: str | None) -> str:
    """The file's name for this attempt. A `/` in the job's name (a sweep point's is
    `SWEEP/POINT`) is written `_`: `%x` stays one part of the path."""
    values = {
        "j": str(job_id),
        "a": str(attempt),
        "x": (name or UNNAMED).replace("/", "_"),
        "%": "%",
    }
    return _PLACEHOLDER.sub(lambda found: values[found.group(1)], template)


def stream_templates(spec: JobSpec) -> tuple[str | None, str | None]:
    """The files (unexpanded) stdout and stderr go to; None: the attempt folder's log."""
    return spec.output, spec.error or spec.output


def attempt_files(spec: JobSpec, job_id: int, attempt: int) -> tuple[str | None, str | None]:
    """The files stdout and stderr of this attempt go to; None: the attempt folder's log."""
    out, err = (
        None if template is None else expand(template, job_id, attempt, spec.name)
        for template in stream_templates(spec)
    )
    return out, err


Files = tuple[str, str]
"""Where an attempt's stdout and stderr go, as the attempt records them when it starts: a file
of the user's choosing (absolute), or its folder's own log (FOLDER_LOGS, relative to the
attempt's folder, which a moved home moves with it)."""


def attempt_files_for(spec: JobSpec, job_id: int, attempt: int, user_files: bool = True) -> Files:
    """Where attempt `attempt` of the job writes, by the job's files as they are now: what an
    attempt records as it starts (`user_files`: the executor writes such files; Ray's does
    not, and a job that names some fails its start there: Attempts.launch). Later edits of
    the job's files or name change its next attempts' files alone."""
    chosen = attempt_files(spec, job_id, attempt) if user_files else (None, None)
    out, err = (path or log for path, log in zip(chosen, FOLDER_LOGS, strict=True))
    return out, err


def recorded_or_named(spec: JobSpec, job_id: int, attempt: int, recorded: Files | None) -> Files:
    """An attempt's files as it recorded them; for one begun before attempts recorded them
    (None), as the job's files name them now (the only record there is)."""
    return recorded if recorded is not None else attempt_files_for(spec, job_id, attempt)


@dataclass(frozen=True)
class OutputFile:
    """A file of the user's choosing one stream of an attempt goes to."""

    path: str
    emptied: bool
    """Emptied as the attempt starts: the first attempt of the job to write it. A later
    attempt writing the same file (its name has no %a) adds to it: a retry never wipes out
    why the attempt before it failed."""
    fixed: str | None = None
    """The folder that existed at submission (fixed_folder), below which the attempt
    creates the folders its placeholders name (folders_to_make); None: create none."""


def launch_files(
    files: Files, written: Collection[str], spec: JobSpec | None = None
) -> tuple[OutputFile | None, OutputFile | None]:
    """Where stdout and stderr of an attempt writing `files` go (None: its folder's log),
    `written`: the files the job's earlier attempts wrote; `spec`: the job whose templates
    the files were filled in from, which tell the folders to create (None: create none)."""
    templates = stream_templates(spec) if spec is not None else (None, None)
    out, err = (
        None
        if path in FOLDER_LOGS
        else OutputFile(path, path not in written, template and fixed_folder(template))
        for path, template in zip(files, templates, strict=True)
    )
    return out, err
