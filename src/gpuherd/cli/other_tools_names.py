"""Another tool's own name typed as gpuherd's first word, with the words its users type after
it: `gpuherd pueue add -- CMD`, `gpuherd tsp -S 4`, `gpuherd hog --job_file jobs.txt --gpus
0,1`. click guessed ("Did you mean 'pause'?" for pueue, 'log' for hog) or said nothing, and
a tool installed here was offered as a job to queue (`gpuherd submit -- pueue add -- CMD`).
What those words are called here; other_tools.py says it (program_hint)."""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from gpuherd.typed_name import as_typed, typed_name

SAME_WORDS = {
    "hog": (
        "run",
        "--job_file FILE --gpus 0,1",
        "runs them on those GPUs, taking gpu-hog's flags as they are (gpu-hog's hog)",
    ),
    "simple_gpu_scheduler": (
        "run",
        "--gpus 0 1 < FILE",
        "runs the commands of its standard input on those GPUs (simple_gpu_scheduler)",
    ),
    "simple_hypersearch": (
        "sweep",
        "'CMD --lr {lr}' -p lr 0.1 0.01",
        "queues a job per point; --dry-run prints their commands, which gpuherd run runs "
        "without a daemon (simple_hypersearch)",
    ),
}
"""Tools whose words a gpuherd command takes as they are: that command, an example of the
words for the tool typed alone, and what it does."""

VERBS = {"pueue": "pueue", "gpulimit": "gpulimit", "gpulimitc": "gpulimit"}
VERBS |= {"tsp": "tsp", "ts": "tsp"}  # task-spooler is `tsp` where moreutils' `ts` is
"""Tools of verbs (or of flags, task-spooler's) that gpuherd's words answer: by the name
their verbs' hints give them."""
_ALONE = {"pueue": "status", "gpulimit": "ls", "tsp": "-l"}
"""What the tool does typed alone: the verb whose hint answers it."""


def tool_hint(words: Sequence[str]) -> str | None:
    """`No such command 'pueue': leave it out: gpuherd kill 3`, or None when the first of
    `words` names no such tool."""
    from gpuherd.cli.main import COMMAND_TABLE
    from gpuherd.cli.other_tools import THEIR_COMMANDS, THEIR_OPTIONS, TOP
    from gpuherd.cli.other_tools_verbs import gbatch_hint

    tool, *rest = words
    said = f"No such command {tool!r}: "
    if tool in SAME_WORDS:
        command, example, does = SAME_WORDS[tool]
        given = shlex.join(rest) if rest else example
        return f"{said}{typed_name()} {command} {given} {as_typed(does)}"
    if tool == "gpulimit_server":
        return said + as_typed("gpuherd daemon start starts the daemon (gpulimit_server)")
    name = VERBS.get(tool)
    if name is None:
        return None
    verb = rest[0] if rest else _ALONE[name]
    if name == "tsp" and not verb.startswith("-"):  # `tsp CMD` queues CMD (`tsp ls` too)
        return f"{said}{typed_name()} submit -- {shlex.join(rest)} queues it (tsp CMD)"
    if verb in COMMAND_TABLE:  # `pueue kill 3`, `gpulimit show 3`: the same verb here
        return said + _same_verb(verb, rest)
    if verb == "add" and len(rest) > 1 and (rest[1] == "--" or not rest[1].startswith("-")):
        job = rest[2:] if rest[1] == "--" else rest[1:]  # (an option of add's: said below)
        queue = f"{typed_name()} submit -- {shlex.join(job)}"
        return f"{said}{queue} queues it ({name} add)"
    if verb == "add" and name == "pueue" and (options := gbatch_hint(rest[1:], "pueue")):
        return said + as_typed(options)  # (`pueue add --label x -- CMD`: with --name x)
    hint = THEIR_OPTIONS[TOP].get(verb) if name == "tsp" else THEIR_COMMANDS[TOP].get(verb)
    if hint is None:
        hint = f"gpuherd --help lists the commands that do {name}'s job here"
    return said + as_typed(hint)


def _same_verb(verb: str, rest: Sequence[str]) -> str:
    """What to do for `pueue kill 3` (leave pueue out), or, when a word after the verb is
    another tool's too (`pueue kill --all`, `gpulimit kill all`), what that is called here:
    "leave it out: gpuherd kill --all" was answered by a second error, naming the command
    that does it only then."""
    from gpuherd.cli.other_tools import THEIR_ARGUMENTS, THEIR_OPTIONS

    for word in rest[1:]:
        if word == "--":  # the job's own words from here (`pueue add -- CMD`)
            break
        name = word.split("=", 1)[0]
        theirs = THEIR_OPTIONS if word.startswith("-") else THEIR_ARGUMENTS
        hint = theirs.get(verb, {}).get(name)
        if hint is None:
            continue
        if hint.startswith("--"):  # the option's name here (`pueue wait -g` is --project)
            return f"leave it out, and for {name} use {as_typed(hint)}"
        return as_typed(hint)
    return f"leave it out: {typed_name()} {shlex.join(rest)}"
