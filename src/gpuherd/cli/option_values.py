"""An option given without its value, where click takes the next option for it: `run --prefix
--gpus 0 jobs.txt` made `--gpus` the prefix and said "unexpected argument 0", `run --yielder
-q` looked for a file `-q`, `submit --name -q -- true` queued a job named `-q`. Said here, by
`run`, `submit` and `sweep`, before click parses: the option, and a value to give it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import click

from gpuherd.core.text import shell_word

EXAMPLES: Mapping[str, str] = {
    "--name": "train-lr0.1",
    "--prefix": "job_",
    "--project": "vision",
    "--gpus": "1",
    "--fake-gpus": "4",
    "--gpus-per-job": "1",
    "--only-gpus": "0,2",
    "--yielder": "make_jobs.py",
    "--output-dir": "runs/today",
    "--times-from": "runs/yesterday",
    "--gpu-file": "gpus.txt",
    "--results-dir": "results/lr",
    "--cwd": "/data/run3",
    "--file": "jobs.txt",
    "--output": "train-%j.log",
    "--error": "train-%j.err",
    "--mem": "20GiB",
    "--ram": "32GiB",
    "--max-log-size": "1GiB",
    "--timeout": "2h",
    "--retry-delay": "30s",
    "--no-output-timeout": "30m",
    "--grace": "30s",
    "--begin": "+2h",
    "--retries": "2",
    "--max-parallel": "4",
    "--priority": "10",
    "--samples": "20",
    "--seed": "1",
    "--after": "12",
    "--after-any": "12",
    "--after-fail": "12",
    "--order": "longest-first",
    "--on-no-output": "kill",
    "--env": "SEED=1",
}
"""A value each option takes, shown with it: by its long name (`run` gives its own --gpus)."""

FREE_TEXT = frozenset({"--name", "--prefix", "--project", "--output", "--error"})
"""Options whose value may start with '-' (a job named `-q`): given joined (`--name=-q`)."""


def refuse_option_as_value(
    ctx: click.Context, args: Sequence[str], examples: Mapping[str, str] | None = None
) -> None:
    """UsageError for the first option of `ctx`'s command in `args` whose value (the next
    word) is one of its options, or reads as one (`--gpus`, `--gpus=0`, `-q`): the value was
    left out. `examples`: values of its own, where they differ (`run --gpus 0,1`).
    Arguments stop the look where options do (submit's command). `--opt=VALUE` is as given;
    so are `--`, '' (the option says those) and a file of that name for a file's option."""
    options = {
        name: param
        for param in ctx.command.get_params(ctx)
        if isinstance(param, click.Option)
        for name in (*param.opts, *param.secondary_opts)
    }
    takes = {name for name, param in options.items() if not param.is_flag and not param.count}
    at = 0
    while at < len(args):
        word = args[at]
        at += 1
        if word == "--" or (not word.startswith("-") and not ctx.allow_interspersed_args):
            return
        option = _option_taking_next(word, takes, set(options))
        if option is None:
            continue
        if at < len(args) and _reads_as_option(args[at], takes, set(options)):
            param = options[option]
            if not (isinstance(param.type, click.Path) and Path(args[at]).exists()):
                raise click.UsageError(_said(ctx, option, args[at], param, examples or {}), ctx)
        at += 1


def _option_taking_next(word: str, takes: set[str], known: set[str]) -> str | None:
    """The option of `word` that takes the next word as its value: `--name`, `-n`, the `n`
    closing a cluster of flags (`-qn`); None for a flag, a value joined (`--name=x`, `-nx`),
    an argument or a word no option of the command is (click says that one)."""
    if word.startswith("--"):
        return word if word in takes else None
    if len(word) < 2 or not word.startswith("-"):
        return None
    for at, letter in enumerate(word[1:], start=2):
        short = "-" + letter
        if short in takes:
            return short if at == len(word) else None
        if short not in known:
            return None
    return None


def _reads_as_option(word: str, takes: set[str], known: set[str]) -> bool:
    """`--gpus`, `--gpus=0`, `-q`, `-qw`, `-n5`: an option of the command; not `-` (stdin),
    `-5` (a number), `--`, `--p` or `-quick` (no option of it: a value, as `--project --p`
    was taken)."""
    if word.startswith("--"):
        return word.partition("=")[0] in known
    if len(word) < 2 or not word.startswith("-"):
        return False
    for letter in word[1:]:
        short = "-" + letter
        if short in takes:
            return True
        if short not in known:
            return False
    return True


def _said(
    ctx: click.Context, option: str, value: str, param: click.Option, examples: Mapping[str, str]
) -> str:
    long = param.opts[-1]
    example = examples.get(long) or EXAMPLES.get(long) or param.make_metavar(ctx)
    said = (
        f"{option}: no value given ({shell_word(value)} is an option): give one after it, "
        f"e.g. {option} {example}"
    )
    if long in FREE_TEXT:
        said += f"; or, to give {shell_word(value)} itself, {long}={shell_word(value)}"
    return said
