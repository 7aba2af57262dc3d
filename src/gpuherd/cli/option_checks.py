"""The option combinations `submit`, `run` and `sweep` refuse before anything is sent: each
a usage error (exit 2) on one line naming the options given, and what to drop or add. The
daemon refuses most of them too, for its other clients (in the words of its fields)."""

from __future__ import annotations

from collections.abc import Mapping

import click

from gpuherd.submission_text import blank

Given = Mapping[str, str] | None
"""How values were given where not by their flags: a sweep file's keys (cli/sweep_args.py)."""


def refuse_cpu_only_mem(
    gpus: int,
    mem: int | None,
    flag: str,
    exclusive: bool = False,
    given: Given = None,
    only_gpus: object = None,
) -> None:
    """--mem is GPU memory, --exclusive a GPU to itself and --only-gpus where it runs: a
    CPU-only job asks for none, so giving one with --gpus 0 is a mistake (the daemon refuses
    these too, for other clients: --only-gpus was left to it, exit 1 where the others exit 2).
    `given`: `mem`, `exclusive`, `gpus`."""
    said = {"mem": "--mem", "exclusive": "--exclusive", "gpus": f"{flag} 0", **(given or {})}
    if gpus == 0 and only_gpus:
        raise click.UsageError(
            f"--only-gpus with {said['gpus']}: a CPU-only job gets no GPU; drop one of them"
        )
    if gpus == 0 and mem is not None:
        raise click.UsageError(
            f"{said['mem']} with {said['gpus']}: a CPU-only job gets no GPU memory; drop one "
            "of them (--ram is host memory)"
        )
    if gpus == 0 and exclusive:
        raise click.UsageError(
            f"{said['exclusive']} with {said['gpus']}: a CPU-only job gets no GPU to itself; "
            "drop one of them"
        )


def refuse_kill_without_timeout(
    on_no_output: str, timeout: float | None, given: Given = None
) -> None:
    """--on-no-output kill stops a job silent for --no-output-timeout: without that time
    nothing is ever stopped (the daemon refuses it too, naming its fields, for other clients).
    `given`, as for refuse_cpu_only_mem: `on_no_output`, `timeout` and an `example`."""
    said = {"on_no_output": "--on-no-output kill", "timeout": "--no-output-timeout D"}
    said = {**said, "example": "--no-output-timeout 30m", **(given or {})}
    if on_no_output == "kill" and timeout is None:
        raise click.UsageError(
            f"{said['on_no_output']} needs {said['timeout']}: how long a job may print nothing "
            f"before it is stopped (e.g. {said['example']})"
        )


def refuse_hold_with_begin(hold: bool, begin: float | None) -> None:
    """--begin holds the jobs until then: with --hold too, which should win is unknown (the
    daemon refuses it as well, for other clients)."""
    if hold and begin is not None:
        raise click.UsageError(
            "give --hold (held until a release) or --begin (held until then), not both"
        )


def one_output(quiet: bool, as_json: bool) -> None:
    """-q and --json each say what to print: both at once is a mistake, not a choice."""
    if quiet and as_json:
        raise click.UsageError("give -q (the ids only) or --json, not both")


def refuse_blank(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """`submit --name "$RUN"` (or `--project`) with RUN unset, or only spaces: a mistake,
    refused as `edit` refuses it, not a job without a name (or a project ' ') that no `ls
    --name` finds (the daemon refuses it too, for its other clients)."""
    if (wrong := blank(value)) is not None:
        flag = max(param.opts, key=len)
        raise click.UsageError(f"{flag} {wrong}: give a {param.name}, or leave {flag} out", ctx)
    return value
