"""What a `gpuherd run` is asked to do (runner.py runs it): the options of the whole run, and
those a line of the job file may give for itself."""

from __future__ import annotations

from collections.abc import Mapping
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path

from gpuherd.input_watch import InputWatch

RUN_WIDE = (
    *("retries", "retry_delay", "timeout", "grace", "max_log_size"),
    *("mem", "ram", "oom_retry", "exclusive"),
)
"""RunOptions a line of the job file may give for itself (its own wins)."""


@dataclass(frozen=True)
class RunOptions:
    output_dir: Path
    prefix: str = "job_"
    gpus_per_job: int = 1
    retries: int = 0
    retry_delay: float | None = None
    timeout: float | None = None
    grace: float | None = None
    """Seconds from a job's SIGTERM to its SIGKILL when it is stopped (its --timeout or
    --max-log-size; a second Ctrl-C caps it: runner.KILL_GRACE); None: the default, 10 s."""
    max_log_size: int | None = None  # bytes (0: none, as None: a run has no `config`)
    max_parallel: int | None = None
    keep_state: bool = False
    mem: int | None = None
    ram: int | None = None
    oom_retry: bool = False
    exclusive: bool = False
    run_times: Mapping[str, float] | None = None
    """Given: read the whole input, then start the jobs longest first by these earlier run
    times of their commands (--order longest-first); unknown commands go first."""
    gpu_file: Path | None = None
    """Use the GPUs this file names, read again whenever it changes (runner_gpu_file.py)."""
    live: bool = False
    """Show the jobs' output as they write it (runner_live.py)."""
    skip_succeeded: bool = False
    """Do not run again a job whose folder says it succeeded before (runner_rerun.py)."""
    output_lock: int | None = None
    """The descriptor of the output folder's lock (runner_output.py), which the run's
    watchdog holds too: a rerun waits until a killed run's jobs are gone."""
    commit_lookup: Future[str | None] | None = None
    """The git commit of the jobs' folder, being looked up (runner_input.CommandItems): the
    jobs read before it came get it when it does (runner_commits.py)."""
    input_watch: InputWatch | None = None
    """Whether the input's thread holds lines it read (input_watch.py): a run stopped waits
    for it, so they are counted as not run."""
