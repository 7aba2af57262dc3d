"""`gpuherd gpus`: list the GPUs, and add, remove, drain or enable them while the daemon runs."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import click

from gpuherd.cli import gpu_table
from gpuherd.cli.group_options import alone_with_group
from gpuherd.cli.options import json_option
from gpuherd.cli.param_types import WholeRange, completes
from gpuherd.client import Client
from gpuherd.core.gpu_slots import MAX_SLOTS
from gpuherd.core.idspec import MAX_GPU_INDEX, format_ids, parse_gpu_indices
from gpuherd.core.int64 import whole
from gpuherd.core.text import ascii_digits
from gpuherd.typed_name import typed_name

NOT_CONFIGURED = frozenset({"removed", "unconfigured"})
"""The states of rows `gpuherd gpus` keeps for jobs on GPUs it does not have."""


def _not_an_index(text: str) -> str:
    return (
        f"invalid GPU index {text!r}: GPUs are numbered from 0 to {MAX_GPU_INDEX}, as "
        f"`{typed_name()} gpus` lists them"
    )


class _GpuIndex(click.ParamType):  # type: ignore[type-arg]
    """A GPU named by its index, as --only-gpus takes them (a larger one failed in the
    daemon), refused in gpuherd's words: click's were "Invalid value for 'INDEX': ... is not
    in the range 0<=x<=4095."."""

    name = "index"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if not isinstance(value, str):
            return value
        text = value.strip()
        if ascii_digits(text):
            number = whole(text)  # (more digits than int() reads: shown cut short)
            if number <= MAX_GPU_INDEX:
                return number
            value = str(number)
        raise click.UsageError(_not_an_index(value), ctx)


GPU_INDEX = _GpuIndex()


class _OneGpu(_GpuIndex):
    """`gpus add`'s GPU: one. `add 0-1` was told `GPUs are numbered from 0 to 4095`, as
    though 0 and 1 were not GPU indices (and `add 0 1` click's `unexpected extra argument`).
    Several are returned as a list, for `add` to refuse: it knows the --slots given."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and not ascii_digits(value.strip()):
            try:
                several = parse_gpu_indices(value)
            except ValueError:
                several = []
            if len(several) > 1:
                return several
        return super().convert(value, param, ctx)


def _one_at_a_time(indices: list[int], slots: int | None) -> click.UsageError:
    """The refusal of `add` of several GPUs, with the commands that add them, --slots kept
    (it was left out: `add 0 1 --slots 2` was told to type `gpus add 0`, then `gpus add 1`)."""
    name = typed_name()
    given = "" if slots is None else f" --slots {slots}"
    return click.UsageError(
        f"`{name} gpus add` takes one GPU (its --slots are its own): `{name} gpus add "
        f"{indices[0]}{given}`, then `{name} gpus add {indices[1]}{given}`"
    )


class _GpuIndices(click.ParamType):  # type: ignore[type-arg]
    """GPUs named as `gpuherd gpus` lists them: an index, or a list as in its `configured but
    not seen by the probe: 0-1` (a cluster's nodes started again leave such lists)."""

    name = "indices"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if not isinstance(value, str):
            return value
        if ascii_digits(value.strip()):  # one index, as `add` takes it
            return [GPU_INDEX.convert(value, param, ctx)]
        try:
            return parse_gpu_indices(value)
        except ValueError as exc:
            raise click.UsageError(str(exc), ctx) from None


GPU_INDICES = _GpuIndices()


@click.group(invoke_without_command=True)
@json_option()
@click.option("-w", "--watch", is_flag=True, help="Refresh in place every 2 s (Ctrl-C ends).")
@click.pass_context
def gpus(ctx: click.Context, as_json: bool, watch: bool) -> None:
    """List the GPUs: slots, state, memory, utilisation, jobs and foreign processes."""
    if ctx.invoked_subcommand is not None:
        if as_json or watch:  # (they were ignored: `gpus --json add 0` printed no JSON)
            raise alone_with_group(ctx, "--json" if as_json else "--watch")
        return
    if watch and as_json:  # (--json was ignored: the table was drawn)
        raise click.UsageError(
            f"give --watch or --json, not both: `{typed_name()} gpus --json` prints one "
            "reading for scripts; run it again for the next"
        )
    client = Client()
    if watch:
        _watch(client)
        return
    answer = client.get("/gpus")
    if as_json:
        click.echo(json.dumps(answer, indent=1))
    else:
        gpu_table.gpu_table(answer)


def _watch(client: Client) -> None:
    from gpuherd.cli.watching import watch

    watch(lambda term: gpu_table.gpu_lines(client.get("/gpus"), term))


_NEGATIVE = re.compile(r"-\d+")


class _TakesGpuIndex(click.Command):
    """`gpus add -1` was click's "No such option: -1": a GPU index that is not one (a typo,
    `gpus add $((N-1))` with N 0) is said to be so, in one line."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        given = list(args)  # (click's parser consumes `args`)
        try:
            return super().parse_args(ctx, args)
        except click.NoSuchOption as exc:
            # `-12` is click's option `-1`: the index is the argument that option starts.
            starts = exc.option_name
            negative = next(
                (a for a in given if _NEGATIVE.fullmatch(a) and a.startswith(starts)), None
            )
            if negative is None:
                raise
            raise click.UsageError(_not_an_index(negative), ctx) from None


@gpus.command(cls=_TakesGpuIndex)
@click.argument("indices", type=_OneGpu(), metavar="INDEX", nargs=-1, required=True)
@click.option(
    "--slots",
    type=WholeRange(1, MAX_SLOTS),
    help="Jobs that may share this GPU [default: the slots it has, or had when removed; 1 "
    "for a new GPU].",
)
def add(indices: tuple[int | list[int], ...], slots: int | None) -> None:
    """Add GPU INDEX (or change its slots); takes effect at once."""
    named = sorted(
        {i for given in indices for i in (given if isinstance(given, list) else [given])}
    )
    if len(named) > 1:  # (taken as several, to say so, not click's "extra argument")
        raise _one_at_a_time(named, slots)
    index = named[0]
    # Sent only when given: a daemon older than this takes none as 1, as it always did.
    body = {"index": index} if slots is None else {"index": index, "slots": slots}
    click.echo(Client().post("/gpus", body)["message"])


# remove, drain and enable take several GPUs (a node's GPUs before maintenance: `gpus drain
# 0-3`), also as several words, `gpus remove 0 1`, as the job verbs take ids (`kill 3 4`):
# that was click's "Got unexpected extra argument (1)".
_indices = click.argument(
    "indices",
    type=GPU_INDICES,
    metavar="INDEX...",
    nargs=-1,
    required=True,
    shell_complete=completes("gpus"),  # drain: those not drained; enable: drained ones
)


@gpus.command(cls=_TakesGpuIndex)
@_indices
def remove(indices: tuple[list[int], ...]) -> None:
    """Stop using GPU INDEX (or several: 0-1, 0,2, 0 2); jobs running on it go on."""
    _each(indices, lambda client, index: client.delete(f"/gpus/{index}"), "removed")


@gpus.command(cls=_TakesGpuIndex)
@_indices
def drain(indices: tuple[list[int], ...]) -> None:
    """Let jobs on GPU INDEX (or several: 0-3, 0,2, 0 2) finish and start nothing new there."""
    _each(indices, lambda client, index: client.post(f"/gpus/{index}/drain"), "drained")


@gpus.command(cls=_TakesGpuIndex)
@_indices
def enable(indices: tuple[list[int], ...]) -> None:
    """Use a drained GPU (or several: 0-3, 0,2, 0 2) again."""
    _each(indices, lambda client, index: client.post(f"/gpus/{index}/enable"), "enabled")


def _each(
    words: tuple[list[int], ...], verb: Callable[[Client, int], dict[str, Any]], done: str
) -> None:
    """The verb on each GPU the words name in turn (in order, each once), one line each; the
    first refusal ends it, as it says. Several GPUs are looked for first, all of them: `gpus
    drain 0-9` on four GPUs drained 0-3, then failed at 4, half done."""
    client = Client()
    indices = sorted({index for indices in words for index in indices})
    # (one GPU: the daemon's own refusal says more, e.g. that it was removed)
    if len(indices) > 1 and (absent := _not_configured(client.get("/gpus"), indices, done)):
        raise click.ClickException(absent)
    for index in indices:
        click.echo(verb(client, index)["message"])


def configured(answer: dict[str, Any]) -> set[int]:
    """The GPUs gpuherd has, of GET /gpus: those `gpus remove`, `drain` and `enable` take
    (and Tab offers, completion_cmd.gpus)."""
    # (a row kept for a job's GPU that is not configured is no GPU gpuherd has)
    have = {row["index"] for row in answer["gpus"] if row["state"] not in NOT_CONFIGURED}
    return have | set(answer.get("missing", ()))


def _not_configured(answer: dict[str, Any], indices: list[int], done: str) -> str | None:
    """Why GPUs named are not all gpuherd's (None: they are), as `gpuherd gpus` lists them:
    each row but a removed one's (kept while its jobs run), and the lost ones (`missing`),
    and for `remove` those removed already (`removed`); and the command of the others
    (`gpus remove 0 2` with GPU 2 not configured said `nothing removed` alone, and that
    `gpus add 2` adds GPU 2, the opposite of a removal)."""
    have = configured(answer)
    # A GPU removed already is no refusal of a removal: its own line says so, exit 0, as a
    # drain of a draining GPU (`gpus remove 0-1` with 1 removed was refused whole).
    done_already = set(answer.get("removed", ())) if done == "removed" else set()
    absent = [index for index in indices if index not in have | done_already]
    if not absent:
        return None
    one = len(absent) == 1
    said = f"{'GPU' if one else 'GPUs'} {format_ids(absent)} {'is' if one else 'are'} not "
    # (listed as a single GPU's refusal lists them: devices.py)
    said += f"configured (configured: {','.join(map(str, sorted(have))) or 'none'}): nothing {done}"
    if others := [index for index in indices if index in have]:
        verb = click.get_current_context().info_name
        said += f"; leave {'it' if one else 'them'} out: `{typed_name()} gpus {verb} "
        said += f"{format_ids(others)}`"
    # (a static --gpus list takes any GPU: `gpus drain 7` alone says `gpus add 7` adds it)
    seen = [i for i in absent if answer.get("adds_any") or i in answer.get("unused", ())]
    if seen and done != "removed":  # (one gpuherd does not use needs no removal)
        said += f"; `{typed_name()} gpus add {seen[0]}` adds GPU {seen[0]}"
    return said


COMMANDS = [gpus]
