"""A job's environment as its attempt starts: the submitter's, their --env pairs, then
gpuherd's own variables (jobfiles.py re-exports these names, where they lived)."""

from __future__ import annotations

from collections.abc import Mapping

from gpuherd.core.model import Attempt, Job
from gpuherd.layout import Layout

HOOK_VARIABLE = "GPUHERD_JOB_STATE"
"""In every on-end hook's environment (hooks.hook_env), never in a job's."""
KEY_VARIABLE = "GPUHERD_ATTEMPT_KEY"
"""In every job's environment: its attempt key (Layout.attempt_key)."""
RAY_NODE_VARIABLE = "GPUHERD_RAY_NODE_ID"
"""In a Ray-run job's environment (its node's id), never a local one's: its processes are its
actor's to stop, not a local daemon's on that node (executors/local_escaped.py)."""


_TOLD_A_HOOK = ("GPUHERD_JOB_", "GPUHERD_JOBS_")
"""The names of what an on-end hook is told of its job (hooks.hook_env); the job's own of
them (GPUHERD_JOB_ID, ...) are set again below."""


def job_env(layout: Layout, job: Job, attempt: Attempt) -> Mapping[str, str]:
    """The submitter's environment, their --env pairs, then gpuherd's own variables."""
    env = dict(job.spec.env)
    env.update(job.spec.env_overrides)
    env.setdefault("MPLBACKEND", "Agg")  # jobs have no screen
    env.pop("GPUHERD_TOKEN", None)  # a daemon secret never reaches a job
    # An on-end hook's mark (submitted from a hook): with it, what the job leaves running
    # outside its process group would not be found (executors/local_escaped.py). What the
    # hook was told of its job goes too: a job it submitted had the other's exit code and
    # project (GPUHERD_JOB_EXIT_CODE, GPUHERD_JOB_PROJECT), which no job has of its own.
    if env.pop(HOOK_VARIABLE, None) is not None:
        for name in [name for name in env if name.startswith(_TOLD_A_HOOK)]:
            del env[name]
    env.pop(RAY_NODE_VARIABLE, None)  # (submitted from a Ray job: this one may run locally)
    if layout.daemon is not None:
        # The daemon that runs it, whatever home the submitter's environment names (a script's
        # connect(home=...) with another GPUHERD_HOME, or none: the job's connect() started one).
        env["GPUHERD_HOME"], socket = layout.daemon
        if socket is None:
            env.pop("GPUHERD_SOCKET", None)  # (another daemon's, if the submitter's)
        else:
            env["GPUHERD_SOCKET"] = socket
    env.update(
        CUDA_DEVICE_ORDER="PCI_BUS_ID",
        CUDA_VISIBLE_DEVICES=",".join(str(i) for i in attempt.gpus),
        GPUHERD_JOB_ID=str(job.id),
        # (Slurm's SLURM_JOB_NAME: a run's name for its logger; as the on-end hook has it)
        GPUHERD_JOB_NAME=job.spec.name or "",
        GPUHERD_ATTEMPT=str(attempt.number),
        GPUHERD_JOB_DIR=str(layout.job_dir(job)),
        GPUHERD_ATTEMPT_DIR=attempt.dir,
    )
    env[KEY_VARIABLE] = layout.attempt_key(job.id, attempt.number)
    return env
