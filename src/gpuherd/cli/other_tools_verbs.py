"""Another tool's command typed with its options, where gpuherd answered the command alone:
gflow's `gbatch --gpus 1 --time 2:00:00 --name r1 python train.py` was told `gpuherd submit
-- CMD queues a command`, Slurm's `scancel --name foo` `gpuherd kill IDS stops jobs` and
`squeue -u $USER` `gpuherd ls lists the jobs`. What they are called here, worded from the
options' table (other_tools_options.py); other_tools.py's command_hint says it."""

from __future__ import annotations

import itertools
import re
import shlex
from collections.abc import Sequence

from gpuherd.cli.other_tools import THEIR_COMMANDS, THEIR_OPTIONS, TOP, pueue_begin
from gpuherd.typed_name import typed_name

_THEIR_VERBS = {"scancel": "kill", "gcancel": "kill", "cancel": "kill", "squeue": "ls"}
_THEIR_VERBS["gqueue"] = "ls"
"""Another tool's command that one of gpuherd's does, whose options are answered as they are
typed to that one: `scancel --name foo` was told `gpuherd kill IDS stops jobs`, `kill --name`
of its own the command that does it."""


def verb_option_hint(name: str, after: Sequence[str]) -> str | None:
    """The answer of the first of the options `after` the command `name` that its command
    here answers (kill's for scancel's): a whole command (`NAME` filled in with the value
    given), or the command's hint and the option's. None when there is none."""
    verb = _THEIR_VERBS.get(name)
    if verb is None:
        return None
    words = list(itertools.takewhile(lambda word: word != "--", after))
    for at, word in enumerate(words):
        option, eq, value = word.partition("=")
        hint = THEIR_OPTIONS[verb].get(option) if word.startswith("-") else None
        if hint is None:
            continue
        value = value if eq else next(iter(words[at + 1 : at + 2]), "")
        if hint.startswith("gpuherd"):
            named = value and not value.startswith("-") and "NAME" in hint
            return hint.replace("NAME", shlex.quote(value), 1) if named else hint
        use = "use " if hint.startswith("--") else ""
        return f"{THEIR_COMMANDS[TOP][name]}; {option}: {use}{hint}"
    return None


def gbatch_hint(words: Sequence[str], tool: str = "gflow") -> str | None:
    """`gpuherd submit --gpus 1 --timeout 2:00:00 --name r1 -- python train.py queues it`
    of gflow's `gbatch --gpus 1 --time 2:00:00 --name r1 python train.py` (a bare --time
    is minutes there: 30m); an option submit has none of is answered as typed to it
    (`--conda-env`). None (gbatch's hint) for an option known to neither, or no command.
    `tool` "pueue": the words after pueue's `add` (`--label x -- CMD`: `--name x`), whose
    answer was the generic one of `add` where an option came first."""
    from gpuherd.core.sbatch_directives import slurm_time

    given: list[str] = []
    rest = list(words)
    while rest and rest[0].startswith("-"):
        option, eq, value = rest.pop(0).partition("=")
        if option == "--":
            break
        same = _same_option(option, tool)
        if same is None:
            hint = THEIR_OPTIONS["submit"].get(option) if tool == "gflow" else None
            return None if hint is None else f"{option}: {'use ' * hint.startswith('--')}{hint}"
        value = value if eq else rest.pop(0) if rest else ""
        if same == "--after" and value == "@":  # (gflow's job submitted last)
            value = "last"
        if same == "--begin":  # (a delay it cannot read: as typed, for submit to refuse)
            value = pueue_begin(value) or value
        given += [same, slurm_time(value) if same == "--timeout" else value]
    if not rest:
        return None
    whose = "gflow's gbatch" if tool == "gflow" else "pueue add"
    return f"{typed_name()} submit {shlex.join([*given, '--', *rest])} queues it ({whose})"


def sbatch_hint(words: Sequence[str]) -> str | None:
    """`gpuherd submit -- python t.py queues it` of Slurm's `sbatch --wrap "python t.py"`
    (the answer was `gpuherd submit -- ./job.sh`, the command dropped): its words as they
    are where they say the same so, else as one argument, which sh runs as written, as
    sbatch does (`--wrap "a && b"`). None without --wrap."""
    for at, word in enumerate(words):
        option, eq, value = word.partition("=")
        if option != "--wrap":
            continue
        command = (value if eq else next(iter(words[at + 1 : at + 2]), "")).strip()
        try:
            split = shlex.split(command)
        except ValueError:  # (an unclosed quote: sh says so when the job runs)
            split = []
        said = command if split and shlex.join(split) == command else shlex.quote(command)
        return f"{typed_name()} submit -- {said} queues it (Slurm's sbatch --wrap)"
    return None


_SAME = {
    "gflow": {"--gpus": "--gpus", "--name": "--name", "--priority": "--priority"}
    | {"--time": "--timeout", "-t": "--timeout"},
    "pueue": {"--after": "--after", "-a": "--after", "--priority": "--priority"}
    | {"-o": "--priority", "--delay": "--begin", "-d": "--begin"},
}
"""gbatch's and pueue add's options that submit takes as they are, or by another name
(--time's minutes made `30m`, --delay's `10m` `+10m`)."""


def _same_option(option: str, tool: str) -> str | None:
    """submit's option of `tool`'s `option` with a value: as it is, or the one its hint
    names first when that is the tool's (`--max-retries`: `--retries N (gflow's
    --max-retries)`, `--label`: `--name NAME (pueue's --label, ...)`); None for any other."""
    if option in _SAME[tool]:
        return _SAME[tool][option]
    hint = THEIR_OPTIONS["submit"].get(option, "")
    named = re.match(r"(--[a-z-]+) [A-Z]+\b", hint)
    return named.group(1) if named and f"{tool}'s {option}" in hint else None
