"""`gpuherd run`: run a list of commands on the GPUs now, no daemon (simple_gpu_scheduler and
gpu-hog style)."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, TextIO, cast

import click

from gpuherd.cli import plain
from gpuherd.cli.option_checks import refuse_cpu_only_mem
from gpuherd.cli.options import (
    fake_gpus_option,
    gpus_option,
    grace_option,
    max_log_size_option,
    max_parallel_option,
    memory_options,
    order_option,
    retries_option,
    retry_delay_option,
    timeout_option,
)
from gpuherd.cli.param_types import Place, completes
from gpuherd.cli.run_args import RunCommand
from gpuherd.cli.run_checks import check_folder_names, gpus_and_file
from gpuherd.cli.run_gpus import probe_and_slots
from gpuherd.cli.run_limits import refuse_impossible_run_wide
from gpuherd.cli.run_order import earlier_run_times, reading_whole_input
from gpuherd.cli.run_report import LineReporter
from gpuherd.cli.run_warnings import warned
from gpuherd.core.text import shell_word
from gpuherd.errors import HerdError
from gpuherd.gc_pause import importing
from gpuherd.no_tls import asyncio_without_tls
from gpuherd.typed_name import prefixed

if TYPE_CHECKING:
    from concurrent.futures import Future

    from gpuherd.gpus.base import GpuProbe
    from gpuherd.runner import RunOptions
    from gpuherd.runner_input import JobSource
    from gpuherd.runner_summary import RunSummary
    from gpuherd.wire import SubmitItem


TERMINAL_INPUT = (
    "gpuherd: reading commands from the terminal, one a line; Ctrl-D ends the input"
    " (or give a job file: gpuherd run --gpus 0,1 jobs.txt)"
)


@click.command(name="run", cls=RunCommand)
@click.argument("args", nargs=-1, shell_complete=completes("files"))
@click.option(
    "--gpus",
    help="GPUs to use: 0,1,2, 0 1 2 or 0-2 (repeatable); a repeated index is another slot.",
)
@fake_gpus_option()
@gpus_option("each job", flag="--gpus-per-job")
@click.option(
    "--yielder",
    "yielder",
    type=Place(dir_okay=False, path_type=Path),
    help="Run the jobs that yielder() in this Python file yields.",
)
@click.option(
    "--output-dir",
    type=Place(file_okay=False),
    help="Where job folders go (default ./herd_runs/<timestamp>).",
)
@click.option("--prefix", default="job_", show_default=True, help="Job folder name prefix.")
@memory_options("each job")
@retries_option(daemon=False)
@retry_delay_option()
@timeout_option("a job")
@grace_option("a job", default="10s")
@max_log_size_option("a job", default="none")
@max_parallel_option()
@click.option("--keep-state", is_flag=True, help="Keep the run's database as OUTPUT/herd.db.")
@order_option("jobs")
@click.option(
    "--times-from",
    type=Place(file_okay=False, path_type=Path),
    help="With --order longest-first: an earlier run's output folder to take run times from "
    "(default: --output-dir).",
)
@click.option(
    "-q",
    "--quiet",
    is_flag=True,
    help="Print only what went wrong and the summary (no line per start or success).",
)
@click.option(
    "--gpu-file",
    type=Place(dir_okay=False, path_type=Path),
    help="Use the GPUs this file names (as --gpus: 0,1 or 1-3; lines, # comments), read again "
    "whenever it changes.",
)
@click.option(
    "--live",
    is_flag=True,
    help="Show the jobs' output as they write it: [N]| stdout line, [N]! stderr line.",
)
@click.option(
    "--skip-succeeded",
    is_flag=True,
    help="Rerun into --output-dir only what did not succeed: skip a job whose folder there holds "
    "SUCCESS for the same command (or that of an earlier line: lines inserted above it); a "
    "folder holding another command's SUCCESS is kept, and its job not run.",
)
def run(
    args: tuple[str, ...],
    gpus: str | None,
    fake_gpus: str | None,
    gpus_per_job: int,
    yielder: Path | None,
    output_dir: str | None,
    prefix: str,
    mem: int | None,
    ram: int | None,
    oom_retry: bool,
    exclusive: bool,
    retries: int,
    retry_delay: float | None,
    timeout: float | None,
    grace: float | None,
    max_log_size: int | None,
    max_parallel: int | None,
    keep_state: bool,
    order: str,
    times_from: Path | None,
    quiet: bool,
    gpu_file: Path | None,
    live: bool,
    skip_succeeded: bool,
) -> None:
    """Run commands on the GPUs now and exit when all are done (no daemon).

    Jobs come from FILE, from standard input (read as a stream: a line that arrives while
    jobs run starts at once), or from --yielder. One job a line; '#' comments and blank
    lines are skipped; a line ending in '\\' continues on the next. With --order longest-first
    (and earlier run times) the whole input is read first, then the jobs whose commands ran
    longest in an earlier run start first (commands not seen before go first, in input
    order). Exit status: 0 when all succeeded, 1 when any failed, could not run (more GPUs
    than there are: its line says why) or did not run, or the input could not be read, 2 for
    a mistake in the command line, 130 when interrupted, 129 when hung up; 1 too when the
    scheduler itself fails (a bug: running jobs are killed, its traceback is on stderr).
    Ctrl-C once: start nothing new and let running jobs finish; twice: kill them. SIGHUP
    kills them at once.
    """
    # The engine's modules: ~2/3 of the run's start-up (gc_pause.py); asyncio's TLS left out
    # (no_tls.py: a run opens no connection, and a --yielder runs in a process of its own).
    with importing(), asyncio_without_tls():
        from gpuherd.cli.job_input import job_commands
        from gpuherd.input_watch import InputWatch
        from gpuherd.runner import RunOptions, items_from_commands
        from gpuherd.runner_output import (
            check_writable,
            drop_fresh_run_dir,
            fresh_run_dir,
            make_output_dir,
            output_held,
        )
        from gpuherd.submission_folders import refuse_home_folder
        from gpuherd.submission_text import reject_nul

    refuse_cpu_only_mem(gpus_per_job, mem, "--gpus-per-job", exclusive)
    spec, file = gpus_and_file(gpus, fake_gpus, args, yielder)
    if retry_delay is not None and not (retries or oom_retry):
        raise click.UsageError(
            "--retry-delay waits before a failed job runs again: give --retries N (or "
            "--oom-retry) with it"
        )
    if times_from is not None and order != "longest-first":
        raise click.UsageError("--times-from is for --order longest-first")
    if skip_succeeded and output_dir is None:
        raise click.UsageError(
            "--skip-succeeded skips what succeeded in --output-dir: give the earlier run's "
            "--output-dir (without it, each run gets a new folder)"
        )
    check_folder_names(prefix, output_dir)
    probe, slots = probe_and_slots(spec, fake_gpus, gpus_per_job, gpu_file)
    refuse_impossible_run_wide(probe, slots, gpus_per_job, mem, ram, exclusive)
    cwd, env = os.getcwd(), dict(os.environ)
    reject_nul("", cwd=cwd)  # a folder whose path is not UTF-8: once, not for every job
    _check_shell(env)
    source: Iterable[SubmitItem]
    lookup: Future[str | None] | None = None  # (a yielder's jobs have their own folders)
    watch = InputWatch()  # (where the input's thread is, for a run stopped: input_watch.py)
    streamed = typed = False
    if yielder is not None:
        source = _yielded_items(yielder, gpus_per_job, cwd, env)
        if not source:
            click.echo("the yielder yielded no job: nothing to run")
            return
    else:
        typed = file in (None, "-") and sys.stdin is not None and sys.stdin.isatty()
        if typed:  # no file given (gpu-hog needed --job_file): else it waits, silently
            click.echo(TERMINAL_INPUT, err=True)
        commands = job_commands(file, watch)
        streamed = not isinstance(commands, list)  # (a file on disk is read whole at once)
        source = items_from_commands(commands, gpus_per_job, cwd, env)
        lookup = source.lookup  # (for the jobs read before git answered)
    # A CUDA_VISIBLE_DEVICES the jobs will not see, a bash word /bin/sh lacks: said once each.
    source = warned(source, env, slots.keys, gpus_named=spec is not None or gpu_file is not None)
    longest, fresh = order == "longest-first", output_dir is None
    # (before herd_runs/<now> is made: a --times-from herd_runs not there yet was found then)
    run_times = earlier_run_times(times_from, None) if longest and fresh else None
    out = Path(output_dir) if output_dir is not None else fresh_run_dir()
    # Not in a daemon's home: a job folder there was another job's (its `rm` deleted the
    # run's results), and --keep-state moved the run's herd.db over the daemon's.
    refuse_home_folder("--output-dir", str(out.absolute()))
    try:
        with contextlib.ExitStack() as hold:  # the folder is this run's until it ends
            held = out.is_dir()
            if held:  # one in use by another run is refused before anything is read from it
                check_writable(out, output_dir)
                lock = hold.enter_context(output_held(out, output_dir))
            if longest and not fresh:  # (once held: not while another run writes there)
                run_times = earlier_run_times(times_from, out)
            # No time known: every command is new, so input order, which a stream gives as its
            # lines come; held to its end, `tail -f q | gpuherd run` started nothing.
            run_times = run_times or None
            if not held:
                make_output_dir(out)  # after --times-from is checked: a refused run makes none
                lock = hold.enter_context(output_held(out, output_dir))
            options = RunOptions(
                output_dir=out.absolute(),
                prefix=prefix,
                gpus_per_job=gpus_per_job,
                retries=retries,
                retry_delay=retry_delay,
                timeout=timeout,
                grace=grace,
                max_log_size=max_log_size,
                max_parallel=max_parallel,
                keep_state=keep_state,
                mem=mem,
                ram=ram,
                oom_retry=oom_retry,
                exclusive=exclusive,
                run_times=run_times,
                gpu_file=gpu_file,
                live=live,
                skip_succeeded=skip_succeeded,
                output_lock=lock,
                commit_lookup=lookup,
                input_watch=watch,
            )
            if streamed and run_times is not None:  # else it waits for the end, saying nothing
                click.echo(
                    reading_whole_input(sys.stdin if file in (None, "-") else None), err=True
                )
            summary = _run_and_report(
                options, probe, slots, source, quiet, bar=not typed, fresh=fresh
            )
    finally:
        # A new folder this run made nothing in is removed (rmdir: only while empty), for
        # every try: a run of nothing, a refused one, one interrupted (Ctrl-C) before a job.
        if fresh:
            drop_fresh_run_dir(out)
    sys.exit(summary.exit_status)


def _run_and_report(
    options: RunOptions,
    probe: GpuProbe,
    slots: dict[int, int],
    source: JobSource,
    quiet: bool,
    bar: bool,
    fresh: bool,
) -> RunSummary:
    """Run the jobs and print the summary. No progress bar (`bar` False) under commands typed
    at the terminal: its redraws erased each key as it was typed."""
    import asyncio

    from gpuherd.fd_limit import raise_fd_limit
    from gpuherd.runner import run_jobs
    from gpuherd.runner_signals import interruptible
    from gpuherd.runner_stdout import Tolerant

    raise_fd_limit()  # a pidfd per running job, as the daemon's: fd_limit.py
    # A closed terminal (SIGHUP), a reader that stalls or a full disk must not end the run,
    # nor hold it up (runner_stdout.py).
    out = Tolerant(sys.stdout)
    out_stream = cast(TextIO, out)  # (it has what printing uses, not all of TextIO)
    try:
        reporter = LineReporter(out_stream, quiet, options.prefix, bar)
        # (SIGTERM, SIGHUP too until its loop takes them: their default left its state behind)
        try:
            with interruptible():
                summary = asyncio.run(run_jobs(options, probe, slots, reporter, source))
        finally:
            reporter.close()
        _summarize(summary, options, out_stream, fresh)
    finally:
        out.drain()
    if summary.engine_failed is not None:  # (runner_failure.py)
        from gpuherd.runner_failure import failed_words

        click.echo(prefixed("error", failed_words(summary.engine_failed)), err=True)
    if out.failure is not None:  # (its own lines may be lost: said where it shows)
        said = out.failure_said(shell_word(str(options.output_dir)) if summary.jobs else None)
        click.echo(prefixed("error", said), err=True)
        summary.output_failed = True
    if summary.unwritten:  # (a job's folder is the run's record of it: runner_summary.py)
        from gpuherd.runner_summary import unwritten_words

        click.echo(
            prefixed("error", unwritten_words(summary.unwritten, options.output_dir)), err=True
        )
    return summary


def _summarize(summary: RunSummary, options: RunOptions, out_stream: TextIO, fresh: bool) -> None:
    from gpuherd.runner_output import holds_logs  # (loaded by then: run() imported it)

    if summary.jobs == 0 and not (summary.interrupted or summary.input_failed):
        click.echo("the input holds no command: nothing to run", file=out_stream)
        return
    parts = [f"{summary.succeeded:,} succeeded", f"{summary.failed:,} failed"]
    if summary.skipped:  # (--skip-succeeded) each one's line above names its folder
        parts.append(f"{summary.skipped:,} skipped")
    if summary.could_not_run:  # refused at once: each one's line above says why
        parts.append(f"{summary.could_not_run:,} could not run")
    if summary.not_run:
        parts.append(f"{summary.not_run:,} not run")
    # No job read (the input stopped at its first line, a Ctrl-C before it): no logs to name;
    # nor a new folder no job started in (a Ctrl-C while the input was read whole), which
    # goes as the run ends (drop_fresh_run_dir). A folder --output-dir names stays: named.
    logs = summary.jobs and (not fresh or holds_logs(options.output_dir))
    where = f"; logs in {shell_word(str(options.output_dir))}" if logs else ""
    click.echo(f"{', '.join(parts)}{where}", file=out_stream)


def _yielded_items(
    yielder: Path, gpus_per_job: int, cwd: str, env: dict[str, str]
) -> list[SubmitItem]:
    """Every job the --yielder file's yielder() yields; its errors as one line."""
    from gpuherd.runner_signals import interruptible
    from gpuherd.yielder import yielded_items

    try:
        with interruptible():  # the yielder's process is killed, as by a Ctrl-C
            return yielded_items(yielder, gpus_per_job, cwd, env)
    except Exception as exc:
        text = plain.clean(str(exc))  # one line, whatever the yielder's message holds
        raise HerdError(
            text if text.startswith("--yielder") else f"--yielder {yielder}: {text}"
        ) from None


def _check_shell(env: dict[str, str]) -> None:
    """A GPUHERD_SHELL that names no program would fail every job as it starts, leaving a
    FAILURE folder for each: say so once, before anything runs."""
    from gpuherd.executors.base import SpawnError, job_shell

    try:
        job_shell(env)
    except SpawnError as exc:
        raise HerdError(str(exc)) from None


COMMANDS = [run]
