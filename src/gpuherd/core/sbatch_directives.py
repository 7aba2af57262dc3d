"""The `#SBATCH` lines of a job script written for Slurm, as `gpuherd submit`'s options.

sbatch reads a script's `#SBATCH --gres=gpu:2 --time=2:00:00` lines as its options; gpuherd
runs the script and reads none: `gpuherd submit -- ./job.sh` of such a script ran on one GPU,
with no time limit, its output not in the file its `--output` named, and nothing said
(cli/submit_hints.py warns, with the options that do it here).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator, Sequence

from gpuherd.core.text import ascii_digits

_PREFIX = "#SBATCH"

_SAME = {
    "--job-name": "--name",
    "-J": "--name",
    "--output": "--output",
    "-o": "--output",
    "--error": "--error",
    "-e": "--error",
    "--begin": "--begin",
    "-b": "--begin",
}
"""sbatch's options whose value is taken as it is (`%j` and `%x` mean the same here; sbatch's
`now+2hours` is one `--begin` takes). Not `--chdir`: `--cwd` would run `./job.sh` there."""
_GPU_COUNTS = ("--gpus", "-G", "--gpus-per-node", "--gpus-per-task")
_SHORT_FLAGS = set("HWOQvkhs")
"""sbatch's one-letter options that take no value (`-H`: hold, `-W`: wait, ...)."""
_LONG_FLAGS = {"--requeue", "--no-requeue", "--exclusive", "--hold", "--wait", "--parsable"}
_LONG_NAMES = {"-a": "--array", "-d": "--dependency"}
"""Short names of the options answered by their long one (submit's hint names those)."""

FIELDS = {
    "--name": "name",
    "--gpus": "gpus",
    "--timeout": "timeout",
    "--output": "output",
    "--error": "error",
    "--ram": "ram",
    "--begin": "begin",
    "--priority": "priority",
    "--mem": "mem",
    "--grace": "grace",
}
"""Each option given here, by the field of a submission it sets."""


def directive_words(script: str) -> list[str]:
    """The words of the `#SBATCH` lines of `script`, as sbatch reads them: those before its
    first command (a line neither blank nor a comment). A line that does not split (an
    unbalanced quote) is left out, as sbatch would refuse it."""
    words: list[str] = []
    for line in script.splitlines():
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            break
        if line.startswith(_PREFIX) and line[len(_PREFIX) : len(_PREFIX) + 1].isspace():
            try:
                words += shlex.split(line[len(_PREFIX) :], comments=True)
            except ValueError:
                continue
    return words


def _options(words: Sequence[str]) -> Iterator[tuple[str, str]]:
    """(option, value) of sbatch's words: `--time=2:00:00`, `--time 2:00:00`, `-t 2:00:00`,
    `-t2:00:00`; a flag's value is ""."""
    rest = iter(words)
    for word in rest:
        if word.startswith("--"):
            option, eq, value = word.partition("=")
            if not eq and option not in _LONG_FLAGS:
                value = next(rest, "")
        elif word.startswith("-") and len(word) > 1:
            option, value = word[:2], word[2:]
            if not value and word[1] not in _SHORT_FLAGS:
                value = next(rest, "")
            option = _LONG_NAMES.get(option, option)
        else:
            continue  # (a stray word: sbatch would refuse the script)
        yield option, value


def _gpus(option: str, value: str) -> str | None:
    """The GPU count of `--gres=gpu:2` (`gpu:a100:2`, `gpu`: 1) or `--gpus=a100:2`."""
    if option == "--gres":
        gres = next((g for g in value.split(",") if g.split(":")[0] == "gpu"), None)
        if gres is None:
            return None
        count = gres.split(":")[-1] if ":" in gres else "1"
    else:
        count = value.split(":")[-1]
    return count if count.isdigit() else None


def slurm_time(value: str) -> str:
    """Slurm's time limit as `--timeout` takes it: a bare number is minutes there (seconds
    here), and `D-HH`, `D-HH:MM` are days and hours (`D-HH:MM:SS` and clocks are taken)."""
    if value.isdigit():
        return f"{value}m"
    if days := re.fullmatch(r"(\d+)-(\d+)(?::(\d+))?", value):
        day, hours, minutes = days.groups()
        return f"{day}d{hours}h" + (f"{minutes}m" if minutes else "")
    return value


def _megabytes(value: str) -> str:
    """Slurm's memory size as --ram and --mem take it: a bare number is megabytes there."""
    return f"{value}M" if value.isdigit() else value


def submit_options(words: Sequence[str]) -> tuple[list[tuple[str, str]], list[str]]:
    """(`submit`'s options that do what sbatch's `words` ask, as (option, value); sbatch's
    options that have none here, in the order given). A `--dependency` is one of those: the
    ids a script names are Slurm's, not this queue's; so are `--array` (a sweep here:
    array_values) and `--requeue` (`--retries N`, of no N given). `--signal=USR1@60`, time
    to save before the time limit, is `--grace 60s`: the time from the timeout's SIGTERM to
    its SIGKILL (the signal is SIGTERM here: slurm_signal names the one asked)."""
    given: dict[str, str] = {}
    left_out: list[str] = []
    for option, value in _options(words):
        count = _gpus(option, value) if option == "--gres" or option in _GPU_COUNTS else None
        if option in _SAME:
            given[_SAME[option]] = value
        elif count is not None:
            given["--gpus"] = count
        elif option in ("--time", "-t"):
            given["--timeout"] = slurm_time(value)
        elif option == "--mem":  # host memory there; --mem here is a GPU's
            given["--ram"] = _megabytes(value)
        elif option == "--mem-per-gpu":  # (it was "not used here": submit's hint said --mem)
            given["--mem"] = _megabytes(value)
        elif option == "--signal" and (signal := slurm_signal(value)) is not None:
            given["--grace"] = f"{signal[1]}s"
        elif option == "--nice" and ascii_digits(value.lstrip("-")):  # (`²`: traceback)
            given["--priority"] = str(-int(value))
        elif option not in left_out:
            left_out.append(option)
    return list(given.items()), left_out


def values(words: Sequence[str]) -> dict[str, str]:
    """sbatch's options of `words` with their values (the last one given, as sbatch takes
    it), to word the answer of those submit_options leaves out (`--array=0-9%2`)."""
    return dict(_options(words))


_SIGNAL = re.compile(r"(?:[RB]+:)?(?:SIG)?(\w+)(?:@(\d+))?", re.IGNORECASE)


def slurm_signal(value: str) -> tuple[str, int] | None:
    """(the signal, the seconds before the time limit it comes) of `--signal=B:USR1@90`
    (60 s without `@`, as Slurm's); None when it does not read so."""
    found = _SIGNAL.fullmatch(value)
    if found is None:
        return None
    return found.group(1).upper(), int(found.group(2) or 60)


_STEPPED = re.compile(r"(\d+)(?:-(\d+)(?::(\d+))?)?")


def array_values(spec: str) -> tuple[str, int | None] | None:
    """The indices of an `--array` as words to give a sweep's `-p i` (`0-9` is `$(seq 0 9)`,
    `1-7:2` `$(seq 1 2 7)`, `1,3,5-6` `1 3 $(seq 5 6)`), and how many may run at once
    (`%4`: 4; None without); None when `spec` does not read so."""
    listed, _, cap = spec.partition("%")
    words = []
    for part in listed.split(","):
        found = _STEPPED.fullmatch(part)
        if found is None:
            return None
        first, last, step = found.groups()
        if last is None:
            words.append(first)
        elif step is None:
            words.append(f"$(seq {first} {last})")
        else:
            words.append(f"$(seq {first} {step} {last})")
    if cap and not ascii_digits(cap):
        return None
    return " ".join(words), int(cap) if cap and int(cap) > 0 else None


_AFTER = {"afterok": "--after", "afterany": "--after-any", "afternotok": "--after-fail"}
"""Slurm's dependency types that one of submit's options waits for alike."""


def dependency_options(value: str) -> list[tuple[str, str]] | None:
    """submit's options of a `--dependency=afterok:3:4,afterany:5` (`--after 3,4`,
    `--after-any 5`); None for one that has none (`?`: any of them, `after`: once started,
    `singleton`, `aftercorr`, a `+time`)."""
    options: dict[str, list[str]] = {}
    for part in value.split(","):
        kind, _, ids = part.partition(":")
        if kind not in _AFTER or not re.fullmatch(r"\d+(:\d+)*", ids):
            return None
        options.setdefault(_AFTER[kind], []).extend(ids.split(":"))
    return [(option, ",".join(ids)) for option, ids in options.items()]
