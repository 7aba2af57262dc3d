"""`gpuherd run`'s command line as other tools' users type it, made into ours before click
parses it: gpu-hog's option names, and simple_gpu_scheduler's `--gpus 0 1 2` wherever it
stands; a job file whose name click read as options (`-jobs.txt`) is said to be one."""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass
from pathlib import Path

import click

from gpuherd.cli.option_values import refuse_option_as_value
from gpuherd.core.text import shell_word
from gpuherd.typed_name import typed_name

GPU_HOG_SPELLINGS = {"--job_yielder": "--yielder", "--output_dir": "--output-dir"}
"""gpu-hog's option names, taken as ours; its `--job_file F` is the FILE argument."""

FILE_VALUES = {
    "--job_file": "the job file",
    "--yielder": "the yielder's Python file",
    "--gpu-file": "the GPU file",
    "--output-dir": "the output folder",
    "--times-from": "the earlier run's output folder",
}
"""What the options that take a file or folder want after them: one given without it
(`--yielder --gpus 0`) is said to be so, where click took the next option for the file."""


class RunCommand(click.Command):
    """`run`, which also takes a gpu-hog command line as it is (`--job_file foo.txt`), and
    `--gpus 0 1 2` anywhere."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if ctx.resilient_parsing:  # Tab: a line typed halfway, whose errors are Enter's to say
            return super().parse_args(ctx, typed_so_far(args))
        try:
            ours, index_or_file = run_args(args)
        except click.UsageError as exc:  # (raised without the context its help names)
            raise click.UsageError(exc.message, ctx) from None
        refuse_option_as_value(ctx, ours, {"--gpus": "0,1"})  # (GPU indices here: not a count)
        ctx.meta["args"] = ours  # the options a refused script's `echo ./job.sh | run` keeps
        try:
            rest = super().parse_args(ctx, list(ours))  # (click's parser uses it up)
        except click.NoSuchOption as exc:  # `run -jobs.txt`: "No such option: -j"
            if (file := file_read_as_option(ours, exc.option_name)) is not None:
                raise click.UsageError(file_not_option(file), ctx) from None
            from gpuherd.cli.not_job_file import command_before

            # `run python3 train.py --lr 0.1`: the command's own option (its words as typed:
            # its `--gpus 0 1` is no run's to join)
            if (said := command_before(ctx, args, exc.option_name)) is not None:
                raise click.UsageError(said, ctx) from None
            raise
        words = list(ctx.params.get("args", ()))
        while words and is_gpu_indices(words[0]):  # (split_gpus_and_file's to say)
            words.pop(0)
        if words == [""]:  # (`run "$JOBS"`, JOBS unset: before the GPUs are probed)
            from gpuherd.cli.job_input import EMPTY_NAME

            raise click.UsageError(f"FILE is empty: {EMPTY_NAME}", ctx)
        if index_or_file is not None and not words and ctx.params.get("yielder") is None:
            # Read as the job file, it would make as valid a command line: say both ways.
            raise click.UsageError(index_or_file.both_valid(), ctx)
        if words and (len(words) > 1 or not Path(words[0]).exists()):  # (else a job file)
            from gpuherd.cli.not_job_file import command_given

            if (said := command_given(ctx, ours, words)) is not None:
                raise click.UsageError(said, ctx)
        return rest


def run_args(args: list[str]) -> tuple[list[str], IndexOrFile | None]:
    """`args` in our spellings, `--gpus` with all its indices in one value; and the last of
    those indices where it also names a file (gpu_indices_together)."""
    return gpu_indices_together(gpu_hog_args(args))


def typed_so_far(args: list[str]) -> list[str]:
    """`args` of a line typed halfway (Tab completion), as run_args makes them, refusing
    nothing: an option still without the file it wants (`--yielder <Tab>`, `--job_file
    <Tab>`) is left out, where run_args's error made completion offer nothing. (click
    completes the option's value from the words as typed.)"""
    kept = [arg for at, arg in enumerate(args) if not _lacks_value(args, at)]
    with contextlib.suppress(click.UsageError):  # (`--output-dir ''`: Enter's to say)
        return run_args(kept)[0]
    return kept


def _lacks_value(args: list[str], at: int) -> bool:
    if GPU_HOG_SPELLINGS.get(args[at], args[at]) not in FILE_VALUES or "--" in args[:at]:
        return False
    return at + 1 == len(args) or _is_option(args[at + 1])


def gpu_hog_args(args: list[str]) -> list[str]:
    """`args` with gpu-hog's spellings in ours (everything after `--` left as it is)."""
    out: list[str] = []
    rest = iter(args)
    for arg in rest:
        name, eq, value = arg.partition("=")
        ours = GPU_HOG_SPELLINGS.get(name, name)
        if arg == "--":
            return [*out, arg, *rest]
        if ours == "--job_file":
            value = _file_value(name, (value if eq else next(rest, "")) or None)
            # Named as the file: `--job_file -jobs.txt` is no option (`-` alone: stdin), and
            # `--gpus 0 --job_file 1` no GPU 1.
            named = (value.startswith("-") and value != "-") or reads_as_gpu_indices(value)
            out.append(f"./{value}" if named else value)
        elif ours in FILE_VALUES and not eq:
            given = next(rest, None)
            # (A `--` or '' there is said by the option itself: `no value given before --`,
            # `--output-dir is empty`.)
            out += [ours, given if given in ("--", "") else _file_value(name, given)]
        else:  # (without '=', name is arg and value empty)
            out.append(ours + eq + value)
    return out


def _file_value(option: str, value: str | None) -> str:
    """`value`, given after `option` as the file it wants; none (`--yielder --gpus 0`, where
    click would take `--gpus` for the file and then `0` for a stray argument) is an error."""
    if value is None or _is_option(value):
        wanted = FILE_VALUES[GPU_HOG_SPELLINGS.get(option, option)]
        raise click.UsageError(f"{option}: no value given: give {wanted} after it")
    return value


def _is_option(word: str) -> bool:
    """`--gpus`, `--gpus=0`, `--`, `-q`: an option where `--yielder` wants its file; a file of
    that name there is the file, as gpu-hog would take it."""
    looks = word.startswith("--") or re.fullmatch("-[A-Za-z]", word) is not None
    return looks and not Path(word).exists()


@dataclass(frozen=True)
class IndexOrFile:
    """A word typed after `--gpus`'s indices that is a GPU index and a file's name too
    (`--gpus 0 1` where a file `1` is there): read as an index, and the indices before it."""

    word: str
    before: str
    """The indices before it, joined (`0`)."""

    def both_valid(self) -> str:
        """What to say where reading it as the job file makes as valid a command line (no
        other job file, no --yielder): a guess ran the file `1` on GPU 0 alone, or standard
        input on GPUs 0 and 1, whichever was not meant."""
        word, gpus = self.word, f"GPU {self.word}" if self.word.isdigit() else f"GPUs {self.word}"
        return (
            f"--gpus {self.before} {word}: {word} is a GPU index and a file here: write --gpus "
            f"{self.before},{word} to use {gpus} too (jobs from standard input), or --gpus "
            f"{self.before} ./{word} to run the job file {word}"
        )


def gpu_indices_together(args: list[str]) -> tuple[list[str], IndexOrFile | None]:
    """`--gpus 0 1 2` as `--gpus 0,1,2`, and `--gpus 0 --gpus 1` as `--gpus 0,1` (click kept only
    the last: every job ran on GPU 1, silently). Click gives an option one value and leaves the
    other indices among the arguments, where those after a job file (`run jobs.txt --gpus 0 1`,
    `--job_file jobs.txt --gpus 0 1`) were taken for more job files. A word that reads as indices is
    one, also where a file has its name: it is the job file only when it is the last of them and
    nothing else is (RunCommand says so), as an index before another one cannot be (what follows it
    would be a second job file). Also returned: that last word, where it names a file."""
    out: list[str] = []
    index_or_file = None
    gpus_at = None  # where the first --gpus's value is in `out`
    at = 0
    while at < len(args):
        arg = args[at]
        at += 1
        if arg == "--":
            return [*out, arg, *args[at:]], index_or_file
        if arg == "--gpus" and at < len(args) and reads_as_gpu_indices(args[at]):
            spec = args[at]  # (click takes it for the value whatever it names)
            at += 1
        elif arg.startswith("--gpus=") and reads_as_gpu_indices(arg.removeprefix("--gpus=")):
            spec = arg.removeprefix("--gpus=")
        else:
            out.append(arg)
            continue
        while at < len(args) and reads_as_gpu_indices(args[at]):
            index_or_file = IndexOrFile(args[at], spec) if Path(args[at]).is_file() else None
            spec += "," + args[at]
            at += 1
        if gpus_at is None:
            gpus_at = len(out) + 1
            out += ["--gpus", spec]
        else:  # given again: both count, as --after's ids do (click kept only the last)
            out[gpus_at] += "," + spec
    return out, index_or_file


_GPU_INDICES = re.compile(r"[0-9][0-9,-]*")
"""Indices and ranges (`0,2-3`), or a bad one of them (`3-1`, `1-`) that the GPU spec's
parser then names: not a job file, whose name would be looked for in vain."""


def reads_as_gpu_indices(word: str) -> bool:
    """`0`, `0,1`, `1-3`: GPU indices by their look, whatever file has that name."""
    return _GPU_INDICES.fullmatch(word) is not None


def is_gpu_indices(word: str) -> bool:
    """`0`, `0,1`, `1-3`: GPU indices, unless a file of that name is there (the job file; a
    folder is none: `cannot read 1: Is a directory` took an index for it)."""
    return reads_as_gpu_indices(word) and not Path(word).is_file()


def file_read_as_option(args: list[str], option: str) -> str | None:
    """The word of `args` (before `--`) that names a file and that click read as the unknown
    `option`: a job file whose name starts with '-' (`-jobs.txt` read as the options -j,
    -o, ...; `--jobs.txt` as one). None when the unknown option is no file's name."""
    for word in args:
        if word == "--":
            return None
        if word.startswith("-") and word != "-" and _read_as(word, option) and Path(word).exists():
            return word
    return None


def _read_as(word: str, option: str) -> bool:
    if option.startswith("--") or word.startswith("--"):
        return word.partition("=")[0] == option
    return len(option) == 2 and option[1] in word[1:]  # one of a cluster of short options


def file_not_option(file: str) -> str:
    """What to say of a job file whose name starts with '-', which click read as options."""
    word = shell_word(file)
    return (
        f"{word} names a file, but its leading '-' makes it read as options: give it after "
        f"-- ({typed_name()} run -- {word}) or as {shell_word('./' + file)}"
    )
