"""The `gpuherd` (and `herd`) console script: a click group; one module per verb group.

Every error reaches the user as one line on stderr and a non-zero exit, never a traceback.
"""

from __future__ import annotations

import sys

import click

from gpuherd import __version__
from gpuherd.cli import (
    config_cmds,
    daemon_cmds,
    gpu_cmds,
    job_cmds,
    queue_cmds,
    ray_cmds,
    run_cmd,
    sweep_cmds,
    ui_cmd,
)
from gpuherd.errors import HerdError


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="gpuherd")
def cli() -> None:
    """gpuherd: a GPU job queue for machine-learning experiments.

    Start a daemon once (`gpuherd daemon start`), then submit commands; each runs on free
    GPUs with CUDA_VISIBLE_DEVICES set. Set GPUHERD_HOME to keep separate queues.
    """


for module in (
    job_cmds,
    queue_cmds,
    gpu_cmds,
    config_cmds,
    daemon_cmds,
    run_cmd,
    ui_cmd,
    sweep_cmds,
    ray_cmds,
):
    for command in module.COMMANDS:
        cli.add_command(command)


def main(argv: list[str] | None = None) -> None:
    try:
        cli.main(args=argv, prog_name="gpuherd", standalone_mode=False)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.exceptions.Abort:
        click.echo("gpuherd: interrupted", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        hint = ""
        ctx = getattr(exc, "ctx", None)
        if ctx is not None:
            hint = f" (see {ctx.command_path} --help)"
        click.echo(f"gpuherd: error: {exc.format_message()}{hint}", err=True)
        sys.exit(exc.exit_code)
    except HerdError as exc:
        click.echo(f"gpuherd: error: {exc}", err=True)
        sys.exit(1)
    except KeyboardInterrupt:
        click.echo("gpuherd: interrupted", err=True)
        sys.exit(130)
    except BrokenPipeError:
        sys.stderr.close()  # `gpuherd ls | head`: the reader left; nothing to report
        sys.exit(0)


if __name__ == "__main__":
    main()
