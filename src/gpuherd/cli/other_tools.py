"""What a command or option of pueue, task-spooler, Slurm, gflow, gpulimit or GPUPeasy is called
here, for the error of one typed from habit: click's guesses pointed elsewhere (`switch`: "Did
you mean 'wait'?", `submit --group`: "Did you mean '--gpus'?", GPUPeasy's `submit --outfile`:
"Did you mean '--file'?", which reads commands from that file). The README's "Coming from
another tool" table lists the same; this module is loaded only to word such an error, or the
warning of an on-end command written as pueue's callback (other_tools_options.py holds the
options' table). A few of gpuherd's own words, typed where they are not (`gpus rm` for `gpus
remove`), are answered so too."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import time
from collections.abc import Sequence
from typing import Any

# (main.py and the tests take the options' table from here)
from gpuherd.cli.other_tools_options import PUEUE_DELAY
from gpuherd.cli.other_tools_options import SWEEP as SWEEP
from gpuherd.cli.other_tools_options import THEIR_OPTIONS as THEIR_OPTIONS
from gpuherd.cli.other_tools_options import TOP as TOP
from gpuherd.typed_name import as_typed, typed_name

_GPU_REMOVE = "gpuherd gpus remove INDEX stops using a GPU; jobs running on it go on"
_GPU_ENABLE = (
    "gpuherd gpus enable INDEX uses a drained GPU again (Slurm's scontrol update state=resume)"
)
_GPU_LIST = "gpuherd gpus alone lists the GPUs (--json for scripts, --watch to follow them)"
_CONFIG_LIST = (
    "gpuherd config alone lists the settings (--json for scripts); gpuherd config get NAME "
    "prints one"
)

_RM_OR_KILL = (
    "gpuherd rm IDS removes jobs that are not running, gpuherd kill IDS stops running ones"
)

_SWEEP_KILL = "gpuherd kill $(gpuherd ls -q --sweep NAME) stops a sweep's jobs"
_SWEEP_RM = (
    "gpuherd sweep rm NAME removes a sweep's jobs, its results stay (stop its running ones "
    "first: gpuherd kill $(gpuherd ls -q --sweep NAME))"
)
_SWEEP_STATUS = (
    "gpuherd sweep status NAME shows each point's parameters, state, run time and metrics "
    "(gpuherd sweep ls lists the sweeps)"
)
_SWEEP_LOG = (
    "gpuherd log ID prints a point's output, ID being its JOB in gpuherd sweep status NAME "
    "(whose --json gives each point's log_files)"
)
_SWEEP_AGAIN = (
    "submitting the sweep again (the same TEMPLATE -p ... or FILE) reruns the points not done; "
    "gpuherd retry $(gpuherd sweep status NAME --state failed -q) reruns the failed ones"
)

THEIR_COMMANDS = {
    TOP: {
        "add": "gpuherd submit -- CMD queues a command (pueue's add; gpulimit's add, where a "
        "smaller --priority runs first: here a higher one does)",
        "status": "gpuherd ls lists the jobs, --json for scripts (pueue's status); gpuherd "
        "daemon status and gpuherd gpus show the daemon and the GPUs (gpulimit's status)",
        "follow": "gpuherd log -f ID follows a job's output (pueue's follow)",
        "logs": "gpuherd log ID prints a job's output, -n N its last N lines, -f what follows "
        "(docker's and kubectl's logs, --tail N)",
        "stash": "gpuherd hold IDS keeps queued jobs from starting (pueue's stash)",
        "enqueue": "gpuherd release IDS lets held jobs run (pueue's enqueue)",
        "start": "gpuherd resume starts the queue again, gpuherd resume IDS paused jobs "
        "(pueue's start); gpuherd retry IDS runs killed or failed jobs again, gpuherd move ID "
        "--first runs a queued one next (gpulimit's start ID)",
        "restart": "gpuherd retry IDS runs finished jobs again under their ids; retry --hold "
        "puts them back held, to edit them first (pueue's restart --in-place, --stashed)",
        "switch": "gpuherd move ID1 --swap ID2 swaps two waiting jobs' places (pueue's switch)",
        "parallel": "gpuherd config set max-running N caps the jobs running at once, gpuherd "
        "config set project-limits NAME=N those of a project (pueue's parallel)",
        "group": "a project is a group: gpuherd submit --project NAME -- CMD, and gpuherd "
        "config set project-limits NAME=N (pueue's group)",
        "remove": "gpuherd rm IDS (pueue's remove)",
        "shutdown": "gpuherd daemon stop (pueue's shutdown; --kill stops the jobs too, as tsp -K)",
        "env": "gpuherd edit IDS --env NAME=VALUE sets a variable of waiting jobs (pueue's env)",
        "requeue": "gpuherd retry IDS runs jobs again (Slurm's scontrol requeue)",
        "sbatch": "gpuherd submit -- ./job.sh queues a script (Slurm's sbatch)",
        "squeue": "gpuherd ls lists the jobs; --columns id,state,time picks its columns, "
        "--watch keeps it up to date (Slurm's squeue)",
        "scancel": "gpuherd kill IDS stops jobs (Slurm's scancel)",
        "sacct": "gpuherd ls --all lists every job with its state and run time, gpuherd ls "
        "--since 2d those in the queue in the last 2 days; --csv --columns id,state,exit,time "
        "or --json gives scripts each one's state, exit_code and seconds run (Slurm's sacct)",
        "scontrol": "gpuherd hold IDS and gpuherd release IDS keep waiting jobs from starting "
        "and let them run, gpuherd edit IDS --timeout 2h (--gpus, --after, ...) changes them, "
        "gpuherd retry IDS runs jobs again (Slurm's scontrol hold, release, update, requeue)",
        "send": "a job's standard input is /dev/null here: give its input in the command, as "
        "yes | CMD or CMD < answers.txt (pueue's send)",
        "set": "gpuherd config lists the settings, gpuherd config set NAME VALUE changes one: "
        "retries N, keep-ram 20%, keep-free 10% (gpulimit's set)",
        "debug": "gpuherd show ID prints a failed job's last lines of stderr, gpuherd log ID "
        "--stderr all of it (gpulimit's debug)",
        "help": "gpuherd --help lists the commands, gpuherd COMMAND --help tells what one "
        "does and takes, as gpuherd submit --help (gpulimit's help)",
        "gbatch": "gpuherd submit -- CMD queues a command, gpuherd submit -- ./job.sh a script "
        "(gflow's gbatch)",
        "gqueue": "gpuherd ls lists the jobs, gpuherd ls --all the finished ones too (gflow's "
        "gqueue)",
        "gcancel": "gpuherd kill IDS stops jobs (gflow's gcancel)",
        "cancel": "gpuherd kill IDS stops jobs, queued ones are cancelled (gflow's gcancel, "
        "Slurm's scancel)",
        "ginfo": "gpuherd gpus lists the GPUs and the jobs on them (gflow's ginfo)",
        "gjob": "gpuherd show ID tells everything about a job; gpuherd hold IDS, release IDS, "
        "retry IDS change them (gflow's gjob)",
        "gflowd": "gpuherd daemon start, gpuherd daemon status, gpuherd daemon stop (gflow's "
        "gflowd up, status, down)",
        # (`reset` is a program too: it was answered "gpuherd submit -- reset queues it".)
        "reset": "gpuherd kill $(gpuherd ls -q) ends every job, then gpuherd clean removes "
        "the finished ones (pueue's reset)",
        "srun": "gpuherd submit --follow -- CMD queues a command, prints its output as it runs "
        "and exits with its exit status (Slurm's srun)",
        "sinfo": "gpuherd gpus lists the GPUs and the jobs on them, gpuherd daemon status the "
        "daemon (Slurm's sinfo)",
        # Words of no one tool, but of habit: click guessed 'release' for `delete`.
        "delete": _RM_OR_KILL,
        "del": _RM_OR_KILL,
        "stop": "gpuherd kill IDS stops jobs, gpuherd pause IDS pauses them (SIGSTOP), "
        "gpuherd daemon stop stops the daemon",
    },
    # Not another tool's, but the habit of `gpuherd rm` and of rm(1).
    "gpus": {
        "rm": _GPU_REMOVE,
        "del": _GPU_REMOVE,
        "delete": _GPU_REMOVE,
        # Slurm's word: click guessed "Did you mean 'drain'?", the opposite of what is asked.
        "undrain": _GPU_ENABLE,
        "resume": _GPU_ENABLE,
        # click guessed "Did you mean 'enable'?" of `disable`, the opposite too.
        "disable": "gpuherd gpus drain INDEX lets jobs on a GPU finish and starts nothing new "
        "there (Slurm's drain); gpuherd gpus remove INDEX stops using it",
        **dict.fromkeys(("list", "ls", "show", "status"), _GPU_LIST),
        "set": "gpuherd gpus add INDEX --slots N changes a GPU's slots",
    },
    "config": dict.fromkeys(("list", "ls", "show"), _CONFIG_LIST),
    # `gpuherd sweep kill lr`: the word went to the sweep's template (the click error was
    # "Got unexpected extra argument (lr)"); a sweep is acted on by its points' ids.
    SWEEP: {
        **dict.fromkeys(("kill", "cancel", "stop"), _SWEEP_KILL),
        **dict.fromkeys(("delete", "del", "remove"), _SWEEP_RM),
        **dict.fromkeys(("show", "results", "info", "summary", "report"), _SWEEP_STATUS),
        "list": "gpuherd sweep ls lists the sweeps",
        **dict.fromkeys(("log", "logs", "output"), _SWEEP_LOG),
        **dict.fromkeys(("retry", "rerun", "resume", "restart"), _SWEEP_AGAIN),
        "hold": "gpuherd hold $(gpuherd ls -q --sweep NAME --state queued) keeps a sweep's "
        "waiting points from starting",
        "release": "gpuherd release $(gpuherd ls -q --sweep NAME --state held) lets them run",
    },
}
"""Another tool's command, by the group typed: what to type here instead, and whose it is."""

_EVERY = "the ids gpuherd ls -q prints name every job not finished (gpulimit's kill all)"

THEIR_ARGUMENTS = {
    "log": {"main": "gpuherd daemon log shows the daemon's own log (gpulimit's log main)"},
    "kill": {"all": f"gpuherd kill $(gpuherd ls -q) stops every job: {_EVERY}"},
    "rm": {
        "all": "gpuherd clean removes every finished job; gpuherd kill $(gpuherd ls -q) ends "
        "the others first, as rm takes no running job"
    },
    "retry": {"all": "gpuherd retry $(gpuherd ls -q --state failed) runs every failed job again"},
    "hold": {"all": "gpuherd hold $(gpuherd ls -q --state queued) holds every queued job"},
    "release": {"all": "gpuherd release $(gpuherd ls -q --state held) lets every held job run"},
    "pause": {
        "all": "gpuherd pause without IDS pauses the queue (running jobs go on); gpuherd "
        "pause $(gpuherd ls -q --state running) stops every running job"
    },
    "resume": {
        "all": "gpuherd resume without IDS resumes the queue; gpuherd resume "
        "$(gpuherd ls -q --state paused) every paused job"
    },
}
"""A word another tool takes where a command here takes job ids: what to give instead."""


_STDOUT = '"$GPUHERD_ATTEMPT_DIR/stdout.log"'
PUEUE_CALLBACK = {
    "id": "$GPUHERD_JOB_ID",
    "command": "$GPUHERD_JOB_COMMAND",
    "group": "$GPUHERD_JOB_PROJECT",
    "result": "$GPUHERD_JOB_STATE",
    "exit_code": "$GPUHERD_JOB_EXIT_CODE",
    "output_path": "$GPUHERD_ATTEMPT_DIR/stdout.log",
    "output": f"$(tail -n 10 {_STDOUT})",
}
"""pueue's callback placeholders (`{{ id }}`) and the hook's variables that say the same
(`path`, `start`, `end`, `queued_count` and `stashed_count` have none here)."""
_HANDLEBARS = re.compile(r"\{\{\s*(\w+)\s*\}\}")


def callback_template_hint(command: str) -> str | None:
    """What to say of an on-end command written as pueue's callback (`notify-send "Task {{ id
    }} {{ result }}"`): the hook's shell gets it as it is, so the notice said `Task {{ id }}`
    at every job's end. The command with the variables in their place; None: no placeholder."""
    found = list(dict.fromkeys(match.group(0) for match in _HANDLEBARS.finditer(command)))
    if not found:
        return None
    rewritten = _HANDLEBARS.sub(
        lambda match: PUEUE_CALLBACK.get(match.group(1), match.group(0)), command
    )
    lacking = [word for word in found if _HANDLEBARS.sub(r"\1", word) not in PUEUE_CALLBACK]
    none = f" ({', '.join(lacking)}: none here, leave it out)" if lacking else ""
    return (
        f"{', '.join(found)}: pueue's callback placeholders are not filled in here (the hook's "
        f"shell gets them as written); the hook is told of the job by variables{none}: "
        f"{typed_name()} config set on-end {shlex.quote(rewritten)}"
    )


def command_hint(group: str, name: str, after: Sequence[str] = ()) -> str | None:
    """`No such command 'status': gpuherd ls lists the jobs ...`, or None. `after`: the words
    typed after it: the sweep's NAME in the hint of `sweep kill lr`; an array job's option
    (`sbatch --array 1-3 job.sh` is a sweep, not a submit)."""
    hint = THEIR_COMMANDS.get(group, {}).get(name)
    if hint and group == SWEEP and after and not after[0].startswith("-"):
        hint = hint.replace("NAME", shlex.quote(after[0]))
    if name in ("sbatch", "gbatch") and any(w.partition("=")[0] == "--array" for w in after):
        hint = THEIR_OPTIONS["submit"]["--array"]
    elif group == TOP and after:  # (`gbatch --gpus 1 ...`, `sbatch --wrap CMD`, `scancel -n x`)
        from gpuherd.cli.other_tools_verbs import gbatch_hint, sbatch_hint, verb_option_hint

        if name in ("gbatch", "sbatch"):
            theirs = gbatch_hint(after) if name == "gbatch" else sbatch_hint(after)
        else:
            theirs = verb_option_hint(name, after)
        hint = theirs or hint
    return f"No such command {name!r}: {as_typed(hint)}" if hint else None


def argument_hint(command: str | None, word: str) -> str | None:
    """`'main' is no job id: gpuherd daemon log shows ...`, or None."""
    hint = THEIR_ARGUMENTS.get(command or "", {}).get(word.strip())
    return f"{word.strip()!r} is no job id: {as_typed(hint)}" if hint else None


THEIR_EXTRA = {
    "ls": "gpuherd show ID tells everything about a job (gpuherd ls --name NAME, --state S, "
    "--sweep NAME pick jobs)",
    "daemon stop": "gpuherd kill IDS stops jobs; gpuherd daemon stop stops the daemon alone",
    "daemon status": "gpuherd show ID tells about a job",
}
"""What a word after a command that takes none may have meant (`ls 3`: the job 3)."""

_EXTRA = re.compile(r"Got unexpected extra arguments? \((.*)\)", re.DOTALL)


def extra_argument(ctx: Any, message: str) -> str | None:
    """`'3' is one argument too many: gpuherd ls [OPTIONS]; gpuherd show ID tells ...`, for
    click's "Got unexpected extra argument (3)"; None for another message."""
    found = _EXTRA.fullmatch(message)
    if found is None:
        return None
    words = found.group(1).split(" ")  # (click joins the extra words with spaces)
    usage = f"{ctx.command_path} {' '.join(ctx.command.collect_usage_pieces(ctx))}"
    many = "is one argument" if len(words) == 1 else "are arguments"
    said = f"{', '.join(map(repr, words))} {many} too many: {usage}"
    path = ctx.command_path.split(" ", 1)[1] if " " in ctx.command_path else ""
    hint = THEIR_EXTRA.get(path)
    return f"{said}; {as_typed(hint)}" if hint else said


def option_hint(command: str | None, option: str, after: Sequence[str] = ()) -> str | None:
    """`No such option '--label': use --name NAME (...)`, or None. `after`: the words typed
    after it: pueue's `add -d 2h` is its --delay, where task-spooler's `-d` takes no value."""
    hint = THEIR_OPTIONS.get(command or "", {}).get(option)
    delay = option in ("-d", "--delay") and command == "submit"
    if delay and (begin := _pueue_delay(after)) is not None:
        hint = PUEUE_DELAY.format(begin)
    if hint is None:
        return None
    use = "use " if hint.startswith("--") else ""  # (not before a whole command)
    return f"No such option {option!r}: {use}{as_typed(hint)}"


def _pueue_delay(after: Sequence[str]) -> str | None:
    """`--begin`'s value of pueue's `add -d 2h` (+2h; 23:30 as it is); None when the word
    after `-d` is no time: a job's command (`tsp -d python ...`), an id, nothing."""
    word = after[0] if after else ""
    return None if not word or word.isdigit() else pueue_begin(word)


def pueue_begin(word: str) -> str | None:
    """`--begin`'s value of pueue's delay `word` (`2h`: +2h; `23:30` as it is; `600`, its
    seconds: +600), None where --begin reads no time in it."""
    from gpuherd.core.when import parse_begin

    for begin in (word, f"+{word}") if ":" in word else (f"+{word}", word):
        try:
            parse_begin(begin, time.time())
        except ValueError:
            continue
        return begin
    return None


def own_option_hint(ctx: Any, option: str) -> str | None:
    """`No such option '--slots': gpuherd daemon start and gpuherd gpus add take it` for
    an option of other gpuherd commands (at most 3) typed to one that has none (`ctx`'s):
    click guessed `Did you mean '--json'?` of `submit --slots 2`. None for any other."""
    root = ctx.find_root()
    found: list[str] = []

    def look(group: Any, path: list[str]) -> None:
        for name in group.list_commands(root):
            command = group.get_command(root, name)
            if command is None or command.hidden:
                continue
            if hasattr(command, "list_commands"):  # a group: `daemon`, `gpus`, `sweep`
                look(command, [*path, name])
            elif any(option in (*p.opts, *p.secondary_opts) for p in command.params):
                found.append(" ".join(["gpuherd", *path, name]))

    look(root.command, [])
    if not found or len(found) > 3:
        return None
    said = " and ".join([", ".join(found[:-1]), found[-1]] if len(found) > 1 else found)
    return f"No such option {option!r}: {as_typed(said)} take{'s' * (len(found) == 1)} it"


def program_hint(words: Sequence[str]) -> str | None:
    """`No such command 'python': gpuherd submit -- python train.py queues it ...` for a
    command typed where gpuherd's go, as task-spooler queues `tsp python train.py` (and gflow
    `gbatch python train.py`); None when its first word names no program nor file. Another
    tool's own name first (`pueue add -- CMD`, `tsp -S 4`), installed or not, is answered
    with what its words are called here (other_tools_names.py)."""
    from gpuherd.cli.other_tools_names import tool_hint

    theirs = tool_hint(words)
    if theirs is not None:
        return theirs
    program, *rest = words
    if shutil.which(program) is None:
        if not os.path.isfile(program):
            return None
        if "/" not in program:  # a script here runs as ./job.sh: sh looks `job.sh` up on PATH
            words = [f"./{program}", *rest]
    queue = f"{as_typed('gpuherd submit -- ')}{shlex.join(words)}"
    return f"No such command {program!r}: {queue} queues it (tsp CMD, gflow's gbatch CMD)"
