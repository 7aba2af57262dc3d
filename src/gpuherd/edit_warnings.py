"""What an edit warns of: what a submission of the jobs as edited would warn of, of the fields
the edit changed, each warning said once for all the jobs it is about (`jobs 1-3: ...`).

An edit said none of submit's warnings of a CUDA_VISIBLE_DEVICES that gpuherd replaces, of a
script that is not there, or of a program the job's shell will not find as written (`job.sh`,
a file of its folder not on PATH), and said its own (a --retry-delay on a job never retried,
an --only-gpus naming GPUs not there) at the end of each job's answer: 2,000 lines for a
sweep, and no two jobs' answers alike, so none shared a line. Each concern is one function,
shared with the submission: device_hints.py and program_hints.py (the CLI's submit),
script_files.missing_script_hints, retry_budget.idle_retry_delay and
service_reasons.unknown_gpus_named (the daemon's).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from gpuherd.core.idspec import format_ids
from gpuherd.core.model import JobSpec
from gpuherd.core.naming import jobs_named
from gpuherd.core.retry_budget import idle_retry_delay
from gpuherd.device_hints import GpusHad, command_devices_hint, visible_devices_hint
from gpuherd.engine import Engine
from gpuherd.program_hints import JOB_IDS, program_hints
from gpuherd.script_files import missing_script_hints
from gpuherd.service_reasons import configured_gpus, unknown_gpus_named


@dataclass(frozen=True)
class EditedJob:
    """A job an edit changed: its spec as edited, the fields that changed."""

    id: int
    spec: JobSpec
    fields: frozenset[str]
    waits_to_retry: bool = False
    """It waits for a retry (its failed run's outcome kept): its --retry-delay is not idle."""


_DEVICES = frozenset({"gpus", "only_gpus"})
"""Fields whose change may make the job's CUDA_VISIBLE_DEVICES matter (it gets GPUs, anywhere)."""


def edit_warnings(engine: Engine, edited: Sequence[EditedJob]) -> list[str]:
    """The warnings of an edit of the jobs `edited`, each once, naming its jobs."""
    said: dict[str, list[int]] = {}  # warning (of one job, not naming it) -> its jobs
    on_ray = not engine.executor.user_files  # (its jobs run on a cluster's nodes)
    had = functools.cache(lambda: configured_gpus(engine))  # (asked once, if at all)
    for job in edited:
        for hint in _job_hints(job, lambda: on_ray, had):
            said.setdefault(hint, []).append(job.id)
    # (a fix names the jobs it is for: `gpuherd edit 5 --command ./job.sh`)
    warnings = [
        f"{jobs_named(ids)}: {hint.replace(JOB_IDS, format_ids(ids))}" for hint, ids in said.items()
    ]
    warnings += unknown_gpus_named(engine, _of(edited, "only_gpus"))
    idle = [job for job in edited if not job.waits_to_retry]
    if delay := idle_retry_delay(list(_of(idle, "retry_delay", "retries"))):
        warnings.append(delay)
    return warnings


def _of(edited: Iterable[EditedJob], *fields: str) -> Iterable[tuple[int, JobSpec]]:
    """(id, spec) of the jobs whose edit changed one of `fields`."""
    return ((job.id, job.spec) for job in edited if job.fields.intersection(fields))


def _job_hints(job: EditedJob, on_ray: Callable[[], bool], had: GpusHad) -> list[str]:
    """What a submission of one job's edited spec says of its command and environment, of
    the fields edited (a job not edited so was said it when it was submitted)."""
    spec, fields = job.spec, job.fields
    gpus, only = spec.gpus, spec.only_gpus
    hints: list[str | None] = []
    if fields & {"env_overrides", *_DEVICES}:  # (the submitter's shell is not this edit's)
        hints.append(visible_devices_hint({}, spec.env_overrides, gpus, only, had))
    if fields & {"command", *_DEVICES}:
        hints.append(command_devices_hint(spec.command, gpus, only, "edit", had))
    if fields & {"command", "cwd", "env_overrides"}:
        env = {**spec.env, **spec.env_overrides}  # (as the job gets it: jobfiles.job_env)
        hints += missing_script_hints([spec.command], spec.cwd, env, on_ray=on_ray)
        # (program_hints: all of submit's, a quoted `~` program's too, which an edit missed)
        hints += program_hints(spec.command, spec.cwd, env, "edit")
    return [hint for hint in hints if hint is not None]
