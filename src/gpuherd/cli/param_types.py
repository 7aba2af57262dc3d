"""The parameter types the commands share: durations, sizes (a memory size wants its unit),
id lists, one job id, GPU indices, NAME=VALUE pairs, --begin and --since times, each refused in
gpuherd's words (one line saying what to give) through the core's parsers."""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Literal, NoReturn

import click

from gpuherd.core.env_vars import check_variable
from gpuherd.core.idspec import (
    OPTION_HELP,
    check_job_id,
    parse_after_refs,
    parse_gpu_indices,
    parse_job_refs,
)
from gpuherd.core.int64 import (
    LARGEST,
    SMALLEST,
    TOO_LARGE,
    WHOLE_TEXT,
    LongNumber,
    beyond,
    whole,
)
from gpuherd.core.log_caps import sent_log_cap
from gpuherd.core.units import MissingUnit, parse_duration, parse_grace, parse_memory
from gpuherd.core.when import parse_begin, parse_since
from gpuherd.errors import HerdError, InvalidValue
from gpuherd.listen_address import parse_address
from gpuherd.typed_name import as_typed, typed_name


class _Flagged(click.ParamType):  # type: ignore[type-arg]
    """A type whose refusal of an option's value is `flagged`: the option goes in front,
    then what is wrong and what to do (`--only-gpus: invalid GPU index 'x' ...`), as `daemon
    start --gpus` says it, not after click's "Invalid value for '--only-gpus':". Click's own
    types refuse through `fail`, so mixed in before one of them it words theirs too."""

    def fail(
        self, message: str, param: click.Parameter | None = None, ctx: click.Context | None = None
    ) -> NoReturn:
        if isinstance(param, click.Option):
            # Its first long name, as --help shows it (`--samples`, not its alias `--n-samples`;
            # `--gpus`, not `-g`): click does not say which one was typed.
            flag = next((o for o in param.opts if o.startswith("--")), param.opts[-1])
            raise click.UsageError(f"{flag}: {message}", ctx)
        super().fail(message, param, ctx)


@contextlib.contextmanager
def checked_by_daemon(option: str = "") -> Iterator[None]:
    """For an option whose value only the daemon can check (`sweep status --sort` names a
    metric, and metrics are data): the daemon's refusal of a value (422) is said as the
    CLI's own are, option first, with the help tail and exit 2. The command checks its other
    values itself before sending, so a refused value of its request is this option's.
    Without `option`, the daemon's words name what they refuse first themselves (`config
    set`: `max-running: invalid count '0': ...`, `unknown setting 'x': ...`)."""
    try:
        yield
    except InvalidValue as exc:
        said = f"{option}: {exc}" if option else str(exc)
        raise click.UsageError(said, click.get_current_context()) from None


class _Parsed(_Flagged):
    """A click type that delegates to one of the core's parsers (ValueError = bad value),
    whose words say what is wrong with the value (`invalid time 'x': ...`); the option goes
    in front (_Flagged)."""

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
    if not sep or not key:
        raise ValueError(f"invalid variable '{text}': use NAME=VALUE, e.g. --env SEED=1")
    try:
        check_variable(key, value)
    except ValueError as exc:
        raise ValueError(f"invalid variable '{text}': {exc}") from None
    return key, value


class _Memory(_Parsed):
    """--mem, --ram: a size, refused in the option's own words when the unit is missing."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        try:
            return parse_memory(value) if isinstance(value, str) else value
        except MissingUnit as exc:
            flag = param.opts[-1] if isinstance(param, click.Option) else "--mem"
            raise click.UsageError(
                f"{flag} {exc.number} is {exc.number} bytes: give a unit, e.g. {flag} "
                f"{exc.example} (a number without one is bytes, taken from 1 MiB up)",
                ctx,
            ) from None
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


DURATION = _Parsed("duration", parse_duration)
GRACE = _Parsed("duration", parse_grace)
SIZE = _Memory("size", parse_memory)
LOG_CAP = _Parsed("size", sent_log_cap)
"""--max-log-size: bytes, 0 for `none` (no cap, said: the request's None is the daemon's)."""


def _after_ids(text: str) -> list[int | str]:
    """Job ids, and `last` among them (`82,last`): the job submitted last (resolved by the
    command, which asks the daemon)."""
    return parse_after_refs(text, LAST, LAST, OPTION_HELP)


AFTER_IDS = _Parsed("ids", _after_ids)
GPU_INDICES = _Parsed("GPUs", parse_gpu_indices)


def _listen_address(text: str) -> str:
    """`daemon start --listen`, checked before a daemon is started (and its home made)."""
    try:
        parse_address(text)
    except HerdError as exc:
        raise ValueError(str(exc)) from None
    return text


LISTEN = _Parsed("HOST:PORT", _listen_address)
ENV_PAIR = _Parsed("NAME=VALUE", _env_pair)
BEGIN = _Parsed("time", lambda text: parse_begin(text, time.time()))
SINCE = _Parsed("time", lambda text: parse_since(text, time.time()))


class WholeRange(_Flagged, click.IntRange):
    """A whole number from `min` (to `max`): --retries, --slots, --limit, ... Click's "'x' is
    not a valid integer range." and "0 is not in the range x>=1." said nothing of what to give."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if not isinstance(value, str):
            return super().convert(value, param, ctx)
        if not WHOLE_TEXT.fullmatch(value.strip()):
            self.fail(f"{value!r} is not a whole number: {self.wanted()}", param, ctx)
        number = whole(value)
        if self.max is None and number > LARGEST:  # the daemon's 64 bits: said here, not there
            self.fail(f"{number} {TOO_LARGE}", param, ctx)
        if (self.min is not None and number < self.min) or (
            self.max is not None and number > self.max
        ):
            self.fail(f"{number} is out of range: {self.wanted()}", param, ctx)
        return number

    def wanted(self) -> str:
        upto = f"to {self.max}" if self.max is not None else "up"
        return f"use a whole number from {self.min} {upto}"


class Choosing(_Flagged, click.Choice):  # type: ignore[type-arg]
    """One of a few words (--on-no-output, --order, --state, ...), flagged: click's "'x' is
    not one of 'flag', 'kill'." ended in a full stop, after its "Invalid value for"."""

    def get_invalid_choice_message(self, value: Any, ctx: click.Context | None) -> str:
        words = [str(choice) for choice in self.choices]
        one_of = " or ".join(words) if len(words) == 2 else "one of " + ", ".join(words)
        return f"{value!r} is not a choice: use {one_of}"


class Place(_Flagged, click.Path):
    """A file or folder (--cwd, --output-dir, ...), flagged: click's "Directory 'x' does not
    exist." said what was wrong, not what to give. An empty value (`--cwd "$DIR"` with DIR
    unset) is refused: click made it the current folder, so `edit --cwd ''` moved a job to
    wherever the edit was typed and `run --times-from ''` read `.`, without a word. So is an
    empty argument (`daemon backup "$FILE"`: `FILE is empty: give ...`). `what` says what to
    give, where "a file", "a folder" or "a path" says too little."""

    def __init__(self, *args: Any, what: str | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.what = what

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if value == "" and isinstance(param, click.Option):
            raise click.UsageError(
                f"{param.opts[-1]} is empty: give {self._what()}, or leave {param.opts[-1]} out",
                ctx,
            )
        if value == "" and isinstance(param, click.Argument):
            raise click.UsageError(
                f"{param.human_readable_name} is empty: give {self._what()}", ctx
            )
        return super().convert(value, param, ctx)

    def fail(
        self, message: str, param: click.Parameter | None = None, ctx: click.Context | None = None
    ) -> NoReturn:
        said = message.rstrip(".")
        super().fail(f"{said[:1].lower()}{said[1:]}: give {self._what()}", param, ctx)

    def _what(self) -> str:
        if self.what is not None:
            return self.what
        what = "a folder" if not self.file_okay else "a file" if not self.dir_okay else "a path"
        return what + (" that exists" if self.exists else "")


class _Whole(click.ParamType):  # type: ignore[type-arg]
    """A whole number, refused in gpuherd's words: click's "'high' is not a valid integer."
    said nothing of what the number is for. `meaning` says it; `sample` is a good value. Each
    (a priority, an attempt, a seed) is one of the daemon's 64-bit numbers: past them it is
    refused here, naming the option, not by the daemon as `invalid request: query.attempt`."""

    name = "integer"

    def __init__(self, meaning: str, sample: int) -> None:
        self.meaning = meaning
        self.sample = sample

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if not isinstance(value, str):
            return value
        with contextlib.suppress(ValueError):
            # Of ASCII alone (UnicodeEncodeError is a ValueError): int() of a str takes `٣`.
            value.encode("ascii")
            number = whole(value)
            if isinstance(number, LongNumber) or not SMALLEST <= number <= LARGEST:
                what = param.human_readable_name.lower() if param else "value"
                if isinstance(param, click.Option):  # `--priority: N is too large ...`
                    what = f"{param.opts[-1]}:"
                raise click.UsageError(f"{what} {number} {beyond(number)}", ctx)
            return number
        if isinstance(param, click.Option):  # `submit --priority high`
            said = f"{param.opts[-1]} takes a whole number, not {value!r}"
            example = f"{param.opts[0]} {self.sample}"
        else:  # `priority 1 high`: the example repeats the arguments before it
            what = param.human_readable_name.lower() if param else "value"
            said = f"a {what} is a whole number, not {value!r}"
            before = [str(v) for v in (ctx.params.values() if ctx else ()) if v is not None]
            path = ctx.command_path if ctx else "gpuherd"
            example = " ".join([path, *before, str(self.sample)])
        raise click.UsageError(f"{said}: {as_typed(self.meaning)}, e.g. {example}", ctx)


PRIORITY = _Whole("higher runs first (the default is 0)", 10)
ATTEMPT = _Whole("attempts are numbered from 1 (gpuherd show lists them)", 2)
# A seed is one of the daemon's 64-bit numbers too, as Python's seed= (pyapi_checks): one of
# any size was taken here, recorded, and refused by herd.sweep() (`is too large`).
SEED = _Whole("the same seed draws the same points", 7)


LAST = "last"
"""Where the CLI takes job ids: the job submitted last (job_refs asks the daemon which)."""

Candidates = Literal["jobs", "one_job", "sweeps", "settings", "gpus", "files"]


def completes(what: Candidates) -> Callable[[click.Context, click.Parameter, str], list[Any]]:
    """A parameter's `shell_complete`: what the shell offers on Tab (completion_cmd.CANDIDATES:
    job ids, sweep names, GPU indices, ...). That module, and the daemon it asks, are loaded
    only when the shell asks: a command that runs costs nothing more."""

    def complete(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[Any]:
        from gpuherd.cli.completion_cmd import CANDIDATES

        return CANDIDATES[what](ctx, param, incomplete)

    return complete


class _OneJob(click.ParamType):  # type: ignore[type-arg]
    """One job id (`show`, `log`, `priority`, `move --before`), refused in gpuherd's words:
    click's were "'1-2' is not a valid integer range", with no word of what to do. `last`
    is kept as it is, for the command to ask which job that is (job_refs.one_job)."""

    name = "job_id"

    def shell_complete(
        self, ctx: click.Context, param: click.Parameter, incomplete: str
    ) -> list[Any]:
        return completes("one_job")(ctx, param, incomplete)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if not isinstance(value, str):
            return value
        text = value.strip()
        if text == LAST:  # the job submitted last, as the verbs of several ids take it
            return text
        path = ctx.command_path if ctx else "gpuherd"
        # An option names itself (--before); an argument is the command's one job.
        option = param.opts[-1] if isinstance(param, click.Option) else None
        number = text.isascii() and text.isdigit()
        ids = [] if number else _ids_or_none(text)  # several: "1-2", "3,5"
        if number and whole(text) >= 1:
            try:
                return check_job_id(whole(text))
            except ValueError as exc:  # past 64 bits
                raise click.UsageError(str(exc), ctx) from None
        if number:
            said = f"invalid job id {text!r}: ids start at 1; {_every_job()}"
        elif _NEGATIVE.fullmatch(text):
            said = _negative_id(text)
        elif len(ids) > 1 and option:
            said = f"{option} takes one job id, not {text!r}: give one, e.g. {option} {ids[0]}"
        elif len(ids) > 1:
            # `priority ID N`: the example shows that more follows the id.
            arguments = (
                [p for p in ctx.command.params if isinstance(p, click.Argument)] if ctx else []
            )
            rest = " ..." if len(arguments) > 1 else ""
            said = (
                f"{path.split()[-1]} takes one job id, not {text!r}: one job at a time "
                f"({path} {ids[0]}{rest}, then {path} {ids[1]}{rest}); {_every_job()}"
            )
        elif not option and (theirs := their_word(ctx, text)):
            said = theirs  # `log main`: gpulimit's word for the daemon's log
        else:
            example = f"{option} 3" if option else f"{path} 3"
            said = f"invalid job id {text!r}: give a number, e.g. {example}; {_every_job()}"
        raise click.UsageError(said, ctx)


def _ids_or_none(text: str) -> list[int | str]:
    try:
        return parse_job_refs(text, LAST)
    except ValueError:
        return []


def _every_job() -> str:
    return f"{typed_name()} ls --all lists every job"


JOB_ID = _OneJob()
_NEGATIVE = re.compile(r"-\d.*")
"""What click takes for an unknown option where a job id goes (`show -1`)."""


def _negative_id(text: str) -> str:
    return f"invalid job id {text!r}: job ids are positive numbers; {_every_job()}"


class TakesJobIds(click.Command):
    """A command whose arguments are job ids: `show -1` and `kill 3 -1` were click's "No such
    option '-1'", about an option no one meant to give."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        given = list(args)  # (click's parser consumes `args`)
        try:
            return super().parse_args(ctx, args)
        except click.NoSuchOption as exc:
            before_dash = given[: given.index("--")] if "--" in given else given
            negative = [
                arg
                for arg in before_dash
                if _NEGATIVE.fullmatch(arg) and arg.startswith(exc.option_name)
            ]
            if not negative:
                raise
            raise click.UsageError(_negative_id(negative[0]), ctx) from None


def refuse_negative_ids(tokens: Sequence[str]) -> None:
    """A job id typed negative refused as TakesJobIds refuses it, where the command lets
    such words through click as arguments (`priority 7 -3` takes a negative priority)."""
    if negative := next((token for token in tokens if _NEGATIVE.fullmatch(token)), None):
        raise click.UsageError(_negative_id(negative))


def their_word(ctx: click.Context | None, word: str) -> str | None:
    """Another tool's word where this command takes job ids (`kill all`, `log main`)."""
    if ctx is None:
        return None
    from gpuherd.cli.other_tools import argument_hint  # (loaded only to word this error)

    return argument_hint(ctx.info_name, word)
