"""`gpuherd sweep` arguments: `-p NAME V1 V2 ...` groups, their typed values, and the spec and
submit options they make with the other options (from a template, or a sweep file that the
command line overrides)."""

from __future__ import annotations

import math
import re
import shlex
from collections.abc import Collection
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import click
from click.core import ParameterSource

from gpuherd.cli.option_checks import (
    refuse_cpu_only_mem,
    refuse_hold_with_begin,
    refuse_kill_without_timeout,
)
from gpuherd.cli.option_values import refuse_option_as_value
from gpuherd.cli.output_options import check_outputs
from gpuherd.cli.sweep_placeholder_paths import refuse_placeholder_paths
from gpuherd.core.sweep import FILE_SUFFIXES, SweepError, SweepSpec
from gpuherd.core.sweep_names import default_sweep_name
from gpuherd.errors import HerdError
from gpuherd.paths import current_folder
from gpuherd.submission_text import reject_reserved_names
from gpuherd.wire_requests import SweepOptions

if TYPE_CHECKING:
    from gpuherd.sweepfile import SweepFile


class _RunContext(click.Context):
    """The hidden `sweep submit` is typed as `sweep ...`: usage lines and error hints say so
    (`see gpuherd sweep --help`, which shows its options)."""

    @property
    def command_path(self) -> str:
        return self.parent.command_path if self.parent else super().command_path


class ParamsCommand(click.Command):
    """Takes `-p NAME V1 V2 ...` out of the arguments before click parses the rest."""

    context_class = _RunContext

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        rest, params = take_params(args)
        refuse_option_as_value(ctx, rest, {"--name": "lr-grid"})
        ctx.meta["gpuherd.params"] = params
        return super().parse_args(ctx, rest)


def _is_value(token: str) -> bool:
    if not token.startswith("-") or token == "-":
        return True
    try:
        float(token)  # -1, -0.5, -1e-3 are values
    except ValueError:
        return False
    return True


def take_params(args: list[str]) -> tuple[list[str], list[tuple[str, list[Any]]]]:
    """Split `-p NAME V1 V2 ...` groups from the other arguments (a value ends at an option)."""
    rest: list[str] = []
    params: list[tuple[str, list[Any]]] = []
    i = 0
    while i < len(args):
        token = args[i]
        if token == "--":
            rest += args[i:]
            break
        if token not in ("-p", "--param"):
            rest.append(token)
            i += 1
            continue
        if i + 1 >= len(args) or not _is_value(args[i + 1]):
            raise click.UsageError(f"{token} needs a NAME and values: -p lr 0.1 0.01")
        name, i = args[i + 1], i + 2
        first = i
        values: list[Any] = []
        while i < len(args) and _is_value(args[i]):
            values.append(typed(args[i]))
            i += 1
        if "=" in name:
            raise click.UsageError(_joined_name(name, args[first:i]))
        if not values:
            raise click.UsageError(f"-p {name}: give at least one value")
        if any(name == known for known, _ in params):
            raise click.UsageError(f"-p {name} given twice: list all its values after one -p")
        params.append((name, values))
    return rest, params


def _joined_name(name: str, values: list[str]) -> str:
    """Why `-p lr=0.1` is refused: other tools' habit (Hydra's `lr=0.1,0.01`, W&B's `--lr=0.1`)
    makes one word of a name and its values, which here was a parameter named `lr=0.1` with
    no value ("give at least one value"), or the wrong name for the values after it."""
    key, _, joined = name.partition("=")
    # A word with a placeholder is the command template, typed after -p (as the joined form
    # ends its values, it reads as the end): kept in, the advice made it one more value.
    template = [value for value in values if "{" in value]
    values = [value for value in values if "{" not in value]
    meant = shlex.join(["-p", key, *(joined.split(",") if joined else []), *values])
    said = f"-p {name}: give the name and its values apart, as separate words: {meant}"
    if template:
        said += f" (after the command template: {shlex.join([*template, *meant.split()])})"
    return said


_RANGE = re.compile(r"(\d+)-(\d+)(?::(\d+))?(?:%(\d+))?")
"""Slurm's --array range: 0-99, with a step (0-99:2) or a cap (0-99%4: 4 at a time)."""


def lone_value_warnings(params: list[tuple[str, list[Any]]]) -> list[str]:
    """A warning for each -p whose one value reads as several: other tools' ways of listing
    values (Hydra's and gflow's `0.1,0.01`, a list `[0.1, 0.01]`, Slurm's `0-99`, numbers
    quoted into one word: `-p lr "$LRS"`) ran one point with that text as its value. Not
    refused: a value may hold a comma (`-p layers 64,64 128,128`)."""
    warnings = []
    for name, values in params:
        if len(values) == 1 and isinstance(values[0], str) and (meant := _listed(values[0])):
            given = f"-p {shlex.quote(name)} {shlex.quote(values[0])}"
            warnings.append(
                f"{given} is one value, so one point: for a point per value give them as"
                f" separate words: -p {shlex.quote(name)} {meant}"
            )
    return warnings


def _listed(value: str) -> str | None:
    """The values `value` seems to list, as words to type; None when it reads as one."""
    if found := _RANGE.fullmatch(value):
        first, last, step, cap = found.groups()
        if int(first) >= int(last) or step == "0":
            return None  # (a date's 2026-11 is no range)
        seq = f"$(seq {first} {step} {last})" if step else f"$(seq {first} {last})"
        return seq + (f" --max-parallel {cap}" if cap and cap != "0" else "")
    inner = value[1:-1] if value[:1] == "[" and value[-1:] == "]" else value
    spaced = inner == value and any(c.isspace() for c in value)
    if "," in inner:
        if not _commas_separate(inner):
            return None  # (JSON, a call, a tuple: one structured value)
        # Only the blanks beside a comma go: a part's own characters are typed as they are.
        parts = [part.strip() for part in inner.split(",")]
        if spaced and not all(map(_is_number, parts)):
            return None  # ("Hello, world" is one text; "0.1, 0.01" lists two numbers)
    elif all(_is_number(part) for part in inner.split()):
        parts = inner.split()  # ("hello world" is one text)
    else:
        return None
    if len(parts) < 2 or not all(parts) or len(set(parts)) < len(parts):
        return None  # (a repeat, `64,64`, is rather one value: a layer's sizes)
    return " ".join(map(shlex.quote, parts))


_CLOSING = {")": "(", "]": "[", "}": "{"}


def _commas_separate(text: str) -> bool:
    """Whether each comma of `text` reads as a separator of values: none is inside brackets
    (`f(a,b)`, `(1,2)`, `{"a":1,"b":2}`, `[[1,2],[3,4]]`), and there are no quotes, whose
    text the comma may belong to (`'a,b'`). Split there, the advice typed two halves of
    one value (`-p cfg '{"a":1' 'b":2}'`), and took the quotes off them."""
    if "'" in text or '"' in text:
        return False
    opened: list[str] = []
    for char in text:
        if char in "([{":
            opened.append(char)
        elif char in _CLOSING and (not opened or opened.pop() != _CLOSING[char]):
            return False  # (unbalanced: not a list either)
        elif char == "," and opened:
            return False
    return not opened


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def typed(text: str) -> Any:
    """A number when the text reads back the same (32, 0.001), else the text ("1e-3", "007",
    and "nan", "inf": JSON has no such numbers; the command gets the text all the same)."""
    try:
        if str(int(text)) == text:
            return int(text)
    except ValueError:
        pass
    try:
        number = float(text)
        if repr(number) == text and math.isfinite(number):
            return number
    except ValueError:
        pass
    return text


def is_file(source: str) -> bool:
    """Whether `sweep SOURCE` names a sweep file rather than a command template."""
    return (
        source.lower().endswith(FILE_SUFFIXES)
        and not any(c.isspace() for c in source)
        and ("{" not in source)
    )


def build(
    ctx: click.Context, source: str, params: list[tuple[str, list[Any]]], opts: dict[str, Any]
) -> tuple[SweepSpec, SweepOptions, str]:
    """The spec, the submit options and the folder the jobs run in, from a file or a
    template. A flag given on the command line wins over the file's key of its name
    (sweepfile_options.SubmitOptions); `--env` over the file's `env` name by name."""

    def given(name: str) -> bool:
        return ctx.get_parameter_source(name) is ParameterSource.COMMANDLINE

    from_file: dict[str, Any] = {}
    loaded: SweepFile | None = None
    try:
        if is_file(source):
            from gpuherd.sweepfile import SweepFileError, load_sweep
            from gpuherd.sweepfile_options import kept_options

            if params:
                raise click.UsageError("give the parameters in the sweep file, or -p, not both")
            try:
                loaded = load_sweep(source)
            except SweepFileError as exc:
                raise HerdError(str(exc)) from None
            spec = loaded.spec
            from_file = kept_options(loaded.options, [k for k in opts if given(k)])
        else:
            name = opts["name"] or default_sweep_name(source)
            grid = {key: tuple(values) for key, values in params}
            spec = SweepSpec(
                name=name,
                command=source,
                results_dir=f"results/{name}",
                grids=(grid,) if grid else (),
            )
        changes = {
            key: opts[key]
            for key in ("name", "results_dir", "samples", "seed")
            if opts[key] is not None
        }
        if opts["shuffle"]:
            changes["shuffle"] = True
        spec = replace(spec, **changes)
    except SweepError as exc:
        # What is refused here was typed: the template, -p, --name, --results-dir, --samples,
        # --seed (a file's own values are load_sweep's, refused above, exit 1): a mistake of
        # the command line, exit 2, as an option's bad value (`--name a/b`, `{y}` with -p x
        # alone exited 1, as the daemon's refusal of a job it cannot take).
        raise click.UsageError(f"invalid sweep: {exc}") from None
    if loaded is not None:
        _check_file_points(loaded, spec, changes)
    reject_reserved_names("", dict(opts["env_pairs"]))  # (as the daemon does: for --dry-run)
    env = {**from_file.pop("env", {}), **dict(opts["env_pairs"])}
    chosen = {**opts, **from_file}
    cwd = chosen["cwd"] or current_folder()

    def in_file(key: str) -> str | None:
        """Where the file gave `key`'s value (a default is None: one not None is the file's)."""
        return loaded.where(key) if loaded and from_file.get(key) is not None else None

    results_where = loaded.where("results_dir") if loaded and not given("results_dir") else None
    refuse_placeholder_paths(chosen, in_file, spec.results_dir, results_where)
    check_outputs(chosen, cwd, in_file)  # (the file's named as its keys, as its other errors)
    refuse_hold_with_begin(chosen["hold"], chosen["begin"])
    _refuse_together(chosen, [k for k in from_file if not given(k)], source)
    options = SweepOptions(
        env_overrides=env,
        gpus=chosen["gpus"],
        only_gpus=list(chosen["only_gpus"] or ()),
        mem=chosen["mem"],
        ram=chosen["ram"],
        oom_retry=chosen["oom_retry"],
        exclusive=chosen["exclusive"],
        priority=chosen["priority"],
        after=opts["after"] or [],  # (never a file's: job ids are the command line's)
        after_any=opts["after_any"] or [],
        after_fail=opts["after_fail"] or [],
        retries=chosen["retries"],
        retry_delay=chosen["retry_delay"],
        timeout=chosen["timeout"],
        max_log_size=chosen["max_log_size"],
        grace=chosen["grace"],
        no_output_timeout=chosen["no_output_timeout"],
        kill_on_no_output=chosen["on_no_output"] == "kill",
        project=chosen["project"],
        hold=chosen["hold"],
        begin=chosen["begin"],
        max_parallel=chosen["max_parallel"],
        order=chosen["order"],
        output=chosen["output"],
        error=chosen["error"],
    )
    return spec, options, cwd


def _check_file_points(loaded: SweepFile, spec: SweepSpec, overridden: Collection[str]) -> None:
    """Refuse what the file's points would be refused for, at its key's line (its samples,
    its command's format specs: sweepfile_points.py), before the daemon or a dry run expands
    them and says it naming no file."""
    from gpuherd.sweepfile import SweepFileError
    from gpuherd.sweepfile_points import check_points

    try:
        check_points(loaded, spec, overridden)
    except SweepFileError as exc:
        raise HerdError(str(exc)) from None


def _refuse_together(chosen: dict[str, Any], file_keys: list[str], file: str) -> None:
    """Refuse what `submit` refuses of its options together (cli/option_checks.py), exit 2, where
    the daemon answered in its field names (`kill_on_no_output ... needs no_output_timeout`).
    Checked once the flags have overridden the file's keys (a file's `gpus: 0` and
    `exclusive: true` may be mended by `--gpus 1`); a value the file set is named as its key
    there. A refused value is never a default, so one not on the command line is the file's."""
    given: dict[str, str] = {}
    if {"gpus", "mem", "exclusive", "on_no_output"} & set(file_keys):
        # `mem with gpus: 0 in FILE` (both the file's: the file named once), `mem in FILE
        # with --gpus 0`, `--mem with gpus: 0 in FILE`.
        where = f" in {file}"
        given["gpus"] = f"gpus: 0{where}" if "gpus" in file_keys else "--gpus 0"
        own = "" if "gpus" in file_keys else where
        for key, as_key in (("mem", "mem"), ("exclusive", "exclusive: true")):
            if key in file_keys:
                given[key] = as_key + own
        if "on_no_output" in file_keys:
            given["on_no_output"] = f"on_no_output: kill{where}"
        given["timeout"] = "no_output_timeout"
        given["example"] = "`no_output_timeout: 30m` in the file, or --no-output-timeout 30m"
    refuse_cpu_only_mem(chosen["gpus"], chosen["mem"], "--gpus", chosen["exclusive"], given)
    refuse_kill_without_timeout(chosen["on_no_output"], chosen["no_output_timeout"], given)
