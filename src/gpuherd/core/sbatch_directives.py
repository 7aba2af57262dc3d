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

FIELDS = {
    "--name": "name",
    "--gpus": "gpus",
    "--timeout": "timeout",
    "--output": "output",
    "--error": "error",
    "--ram": "ram",
    "--begin": "begin",
    "--priority": "priority",
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


def _timeout(value: str) -> str:
    """Slurm's time limit as `--timeout` takes it: a bare number is minutes there (seconds
    here), and `D-HH`, `D-HH:MM` are days and hours (`D-HH:MM:SS` and clocks are taken)."""
    if value.isdigit():
        return f"{value}m"
    if days := re.fullmatch(r"(\d+)-(\d+)(?::(\d+))?", value):
        day, hours, minutes = days.groups()
        return f"{day}d{hours}h" + (f"{minutes}m" if minutes else "")
    return value


def submit_options(words: Sequence[str]) -> tuple[list[tuple[str, str]], list[str]]:
    """(`submit`'s options that do what sbatch's `words` ask, as (option, value); sbatch's
    options that have none here, in the order given). A `--dependency` is one of those: the
    ids a script names are Slurm's, not this queue's."""
    given: dict[str, str] = {}
    left_out: list[str] = []
    for option, value in _options(words):
        count = _gpus(option, value) if option == "--gres" or option in _GPU_COUNTS else None
        if option in _SAME:
            given[_SAME[option]] = value
        elif count is not None:
            given["--gpus"] = count
        elif option in ("--time", "-t"):
            given["--timeout"] = _timeout(value)
        elif option == "--mem":  # host memory there; --mem here is a GPU's
            given["--ram"] = f"{value}M" if value.isdigit() else value
        elif option == "--nice" and value.lstrip("-").isdigit():
            given["--priority"] = str(-int(value))
        elif option not in left_out:
            left_out.append(option)
    return list(given.items()), left_out
