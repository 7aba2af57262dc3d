"""Parameter types shared by the commands: durations, sizes, id lists, KEY=VALUE pairs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from gpuherd.core.idspec import parse_ids
from gpuherd.core.units import parse_duration, parse_size

F = TypeVar("F", bound=Callable[..., Any])


class _Parsed(click.ParamType):  # type: ignore[type-arg]
    """A click type that delegates to one of the core's parsers (ValueError = bad value)."""

    def __init__(self, name: str, parse: Any) -> None:
        self.name = name
        self._parse = parse

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if not isinstance(value, str):
            return value
        try:
            return self._parse(value)
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


def _env_pair(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key or not key.replace("_", "a").isalnum() or key[0].isdigit():
        raise ValueError(f"invalid --env '{text}': use NAME=VALUE, e.g. --env SEED=1")
    return key, value


DURATION = _Parsed("duration", parse_duration)
SIZE = _Parsed("size", parse_size)
IDS = _Parsed("ids", parse_ids)
ENV_PAIR = _Parsed("NAME=VALUE", _env_pair)


def ids_argument(required: bool = True) -> Callable[[F], F]:
    return click.argument("ids", nargs=-1, required=required)


def expand_ids(tokens: tuple[str, ...]) -> list[int]:
    """Job ids from argv tokens such as `3-7,9` or `1 2 3`."""
    try:
        return parse_ids(list(tokens))
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="IDS") from None


def memory_options(what: str = "the job") -> Callable[[F], F]:
    """--mem, --ram and --oom-retry, as submit, run and sweep all take them."""

    def apply(command: F) -> F:
        for option in reversed(
            [
                click.option(
                    "--mem",
                    type=SIZE,
                    help=f"GPU memory {what} needs on each GPU, e.g. 10GiB: jobs with --mem "
                    "share GPUs up to their memory.",
                ),
                click.option("--ram", type=SIZE, help=f"Host memory {what} needs, e.g. 16GiB."),
                click.option(
                    "--oom-retry",
                    is_flag=True,
                    help="Retry a CUDA out-of-memory failure with a larger --mem.",
                ),
            ]
        ):
            command = option(command)
        return command

    return apply


def json_option() -> Callable[[F], F]:
    return click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")
