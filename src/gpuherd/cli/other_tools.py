"""What a command or option of pueue, task-spooler, Slurm, gflow, gpulimit or GPUPeasy is called
here, for the error of one typed from habit: click's guesses pointed elsewhere (`switch`: "Did
you mean 'wait'?", `submit --group`: "Did you mean '--gpus'?", GPUPeasy's `submit --outfile`:
"Did you mean '--file'?", which reads commands from that file). The README's "Coming from
another tool" table lists the same; this module is loaded only to word such an error. A few
of gpuherd's own words, typed where they are not (`gpus rm` for `gpus remove`), are answered
so too."""

from __future__ import annotations

import os
import shlex
import shutil
from collections.abc import Sequence

from gpuherd.typed_name import as_typed

TOP = ""
"""THEIR_COMMANDS' and THEIR_OPTIONS' key for `gpuherd` itself (task-spooler's verbs are
its flags); a group's own key is its name (`gpus`)."""

_GPU_REMOVE = "gpuherd gpus remove INDEX stops using a GPU; jobs running on it go on"

THEIR_COMMANDS = {
    TOP: {
        "add": "gpuherd submit -- CMD queues a command (pueue's add; gpulimit's add, where a "
        "smaller --priority runs first: here a higher one does)",
        "status": "gpuherd ls lists the jobs, --json for scripts (pueue's status); gpuherd "
        "daemon status and gpuherd gpus show the daemon and the GPUs (gpulimit's status)",
        "follow": "gpuherd log -f ID follows a job's output (pueue's follow)",
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
    },
    # Not another tool's, but the habit of `gpuherd rm` and of rm(1).
    "gpus": {"rm": _GPU_REMOVE, "del": _GPU_REMOVE, "delete": _GPU_REMOVE},
}
"""Another tool's command, by the group typed: what to type here instead, and whose it is."""

_GROUP = "--project NAME (pueue's --group)"
_HOLD = "--hold (pueue's --stashed)"
_EDIT = (
    "gpuherd retry --hold IDS, then gpuherd edit IDS ..., then gpuherd release IDS (pueue's --edit)"
)
_ALL = "gpuherd kill $(gpuherd ls -q) stops every job (pueue's kill --all)"
_MAIL = (
    "gpuherd config set on-end CMD runs CMD each time a job ends, told its id and state "
    "(GPUHERD_JOB_ID, GPUHERD_JOB_STATE): mail from there"
)
_OUTPUT_FILE = (
    ": the job's stdout and stderr go to {}, %j standing for its id (--error FILE keeps stderr "
    "apart); gpuherd log ID still prints them"
)

# Slurm's and gflow's --time 30 is 30 minutes; a bare --timeout 30 here, 30 seconds.
_MINUTES = "; a bare number is seconds here, not minutes: --time 30 is --timeout 30m"

_COLUMNS = (
    "--columns id,name,state,time, the columns in order (Slurm's squeue {}); --csv or --json "
    "give scripts every field"
)

# submit's -o/-e typed to `run`, whose jobs' output has no file of the user's choosing.
_RUN_OUTPUT = (
    "--output-dir DIR: gpuherd run keeps each job's stdout and stderr in DIR/job_N/ "
    "(stdout.log, stderr.log); -o/--output FILE and -e/--error FILE are gpuherd submit's"
)

# task-spooler 1.0 (Debian's package) ran -d's and -D's job only if the one before succeeded;
# from 1.1 on (and in its GPU version) they run it however that one ended, and -W only if it
# succeeded: afterany and afterok, --after-any and --after here.
_TSP_ENDED = (
    ": once they ended, however they ended (tsp -D); --after IDS only once they succeeded (tsp -W)"
)
_TSP_LAST = (
    ": after the job submitted last, however it ended (tsp -d); --after last only if it "
    "succeeded (tsp -d of task-spooler 1.0)"
)
_TSP_WELL = ": only once they succeeded (tsp -W, and tsp -D of task-spooler 1.0)"
_TSP_SLOTS = (
    " takes N GPUs (tsp -G); a job counts as one against gpuherd config set max-running N, "
    "whatever it takes (tsp -N)"
)
_TSP_APART = (
    "leave it out: a job's stderr is always kept apart from its stdout; gpuherd log ID "
    "--stderr prints it (tsp -E)"
)
# gflow (gbatch) waits with --depends-on for a job's success; @ is the job submitted last.
_GFLOW_AFTER = "--after IDS: once they all succeeded; last for gflow's @ (gflow's {})"

THEIR_OPTIONS = {
    TOP: {
        "-k": "gpuherd kill IDS, or kill last: the job submitted last (tsp -k)",
        "-K": "gpuherd daemon stop --kill (tsp -K)",
        "-C": "gpuherd clean removes the finished jobs (tsp -C)",
        "-l": "gpuherd ls (tsp -l)",
        "-t": "gpuherd log -f ID follows a job's output (tsp -t)",
        "-c": "gpuherd log ID (tsp -c)",
        "-i": "gpuherd show ID (tsp -i)",
        "-r": "gpuherd rm IDS (tsp -r)",
        "-w": "gpuherd wait IDS (tsp -w)",
        "-u": "gpuherd move ID --first (tsp -u)",
        "-S": "gpuherd config set max-running N (tsp -S)",
        "-f": "gpuherd submit --wait -- CMD (tsp -f)",
        "-L": "gpuherd submit --name NAME -- CMD (tsp -L)",
        "-d": "gpuherd submit --after-any last -- CMD" + _TSP_LAST,
        "-D": "gpuherd submit --after-any IDS -- CMD" + _TSP_ENDED,
        "-W": "gpuherd submit --after IDS -- CMD" + _TSP_WELL,
        "-G": "gpuherd submit --gpus N -- CMD (tsp -G)",
        "-N": "gpuherd submit --gpus N -- CMD" + _TSP_SLOTS,
        "-n": "gpuherd submit --output /dev/null -- CMD keeps none of its output (tsp -n)",
        "-E": _TSP_APART,
        "-p": "gpuherd show ID prints its pid, gpuherd ls --columns id,pid each job's (tsp -p)",
        "-o": "gpuherd show ID names its stdout and stderr files, gpuherd ls --columns "
        "id,stdout each job's (tsp -o)",
        "-s": "gpuherd show ID prints its state, gpuherd ls --columns id,state each job's (tsp -s)",
        "-T": "gpuherd kill $(gpuherd ls -q --state running) stops every running job (tsp -T)",
        "-m": _MAIL + " (tsp -m)",
        "-V": "gpuherd --version (tsp -V)",
        "-U": "gpuherd move ID1 --swap ID2 swaps two waiting jobs' places (tsp -U ID1-ID2)",
    },
    "submit": {
        "--label": "--name NAME (pueue's --label, tsp -L)",
        "-L": "--name NAME (tsp -L, pueue's --label)",
        "--group": f"{_GROUP}; gpuherd config set project-limits NAME=N caps it",
        "--delay": "--begin +2h, or a time: --begin 23:30 (pueue's --delay)",
        "--stashed": _HOLD,
        "--working-directory": "--cwd DIR (pueue's --working-directory)",
        "-d": "--after-any last" + _TSP_LAST,
        "-D": "--after-any IDS" + _TSP_ENDED,
        "-W": "--after IDS" + _TSP_WELL,
        "-G": "--gpus N (tsp -G)",
        "-N": "--gpus N" + _TSP_SLOTS,
        "-E": _TSP_APART,
        "-f": "--follow (tsp -f)",
        "-u": "--priority P, or after submitting: gpuherd move last --first (tsp -u)",
        "--dependency": "--after IDS (afterok), --after-any IDS (afterany), --after-fail IDS "
        "(afternotok) (Slurm's --dependency)",
        "--time": "--timeout 2:00:00, or 2h" + _MINUTES + " (Slurm's and gflow's --time)",
        "-t": "--timeout 2:00:00, or 2h" + _MINUTES + " (Slurm's -t)",
        "--signal": "--grace 60s: at its --timeout a job gets SIGTERM, and SIGKILL 60 s later, "
        "time to save a checkpoint; trap TERM, not USR1 (Slurm's --signal=USR1@60)",
        "--requeue": "--retries N: an attempt that failed, timed out or was lost runs again, "
        "up to N times (Slurm's --requeue)",
        "--mail-type": _MAIL + " (Slurm's --mail-type)",
        "--mail-user": _MAIL + " (Slurm's --mail-user)",
        "--print-task-id": "--quiet (-q) to print only the job's id (pueue's --print-task-id)",
        "--wrap": "gpuherd submit -- CMD runs CMD as it is (Slurm's --wrap)",
        "--job-name": "--name NAME (Slurm's --job-name)",
        "-J": "--name NAME (Slurm's -J)",
        "--nice": "--priority P, where higher runs first: --nice=N is --priority -N "
        "(Slurm's --nice)",
        "--gres": "--gpus N (Slurm's --gres=gpu:N)",
        "--chdir": "--cwd DIR (Slurm's --chdir)",
        "--array": "gpuherd sweep './job.sh {i}' -p i $(seq 0 99) --max-parallel 4 runs a job "
        "per value, 4 at a time, {i} standing for $SLURM_ARRAY_TASK_ID (Slurm's --array=0-99%4, "
        "gflow's --array 0-99); a script that reads the index from the variable gets it so: "
        "gpuherd sweep 'GFLOW_ARRAY_TASK_ID={i} ./job.sh' -p i $(seq 0 99)",
        "--depends-on": _GFLOW_AFTER.format("--depends-on"),
        "--depends-on-all": _GFLOW_AFTER.format("--depends-on-all"),
        "--depends-on-any": "none here starts a job once the first of several succeeded: "
        "--after IDS waits for all of them to succeed, --after-any IDS for all of them to end "
        "(gflow's --depends-on-any)",
        "--no-auto-cancel": "leave it out: a job whose --after job did not succeed is "
        "cancelled (dependency_failed); gpuherd retry IDS runs both again (gflow's "
        "--no-auto-cancel)",
        "--max-retries": "--retries N (gflow's --max-retries)",
        "--gpu-memory": "--mem SIZE, the GPU memory it needs on each GPU: jobs with --mem share "
        "GPUs (gflow's --gpu-memory and --shared)",
        "--shared": "--mem SIZE: jobs with --mem share GPUs up to their memory (gflow's --shared)",
        "--memory": "--ram SIZE (gflow's --memory)",
        "--conda-env": "gpuherd submit -- conda run --no-capture-output -n ENV CMD runs CMD in "
        "that environment (gflow's --conda-env)",
        "--max-concurrent": "gpuherd sweep ... --max-parallel N runs at most N points at once "
        "(gflow's --max-concurrent)",
        "--param": "gpuherd sweep 'python train.py --lr {lr}' -p lr 0.001 0.01 runs a job per "
        "value (gflow's --param lr=0.001,0.01)",
        "--immediate": "--priority P to put it first; it starts once GPUs are free "
        "(pueue's --immediate)",
        "--logpath": "--output DIR/%j.log"
        + _OUTPUT_FILE.format("a file in DIR")
        + " (gpulimit's --logpath)",
        "--outfile": "--output FILE" + _OUTPUT_FILE.format("FILE") + " (GPUPeasy's outfile)",
        "--jobname": "--name NAME (GPUPeasy's jobname)",
    },
    "run": {"-o": _RUN_OUTPUT, "--output": _RUN_OUTPUT, "-e": _RUN_OUTPUT, "--error": _RUN_OUTPUT},
    "pause": {
        "--wait": "leave it out: gpuherd pause lets running jobs finish (pueue's pause --wait)",
        "-w": "leave it out: gpuherd pause lets running jobs finish (pueue's pause -w)",
    },
    "ls": {
        "--group": _GROUP,
        "-g": _GROUP,
        "-P": "--project NAME (gflow's gqueue -P)",
        "-s": "--state STATE (gflow's gqueue -s)",
        "-j": "gpuherd show ID tells everything about a job (gflow's gqueue -j)",
        "-t": "gpuherd show ID names the jobs it waits for (gflow's gqueue -t)",
        "-f": "--columns id,name,state,time, the columns in order (gflow's gqueue -f)",
        "--format": _COLUMNS.format("--format"),
        "-o": _COLUMNS.format("-o"),
    },
    "wait": {"--group": _GROUP, "-g": _GROUP},
    "clean": {
        "--successful-only": "--state succeeded (pueue's --successful-only)",
        "-s": "--state succeeded (pueue's clean -s)",
    },
    "retry": {
        "--stashed": _HOLD,
        "--in-place": "leave it out: a retry always keeps the job's id (pueue's --in-place)",
        "--edit": _EDIT,
        "-e": _EDIT,
    },
    "kill": {"--all": _ALL, "-a": _ALL},
    "edit": {
        "--priority": "gpuherd priority ID P changes a job's priority",
        "--label": "--name NAME (pueue's --label)",
        "--path": "--cwd DIR (pueue's edit --path)",
    },
    "log": {
        "--full": "leave it out: gpuherd log ID prints the whole log, -n N its last N lines "
        "(pueue's log --full)",
        "--tail": "use -n N (--lines N): the last N lines, with -f then what follows "
        "(docker's and kubectl's logs --tail N, tail -n N)",
    },
}
"""Another tool's option of a command: what to give here instead, and whose it is."""

SWEEP = "sweep"
"""THEIR_OPTIONS' key for `gpuherd sweep TEMPLATE|FILE ...` (its hidden command is named
`submit`, whose key holds submit's own options)."""

# A sweep takes submit's job options by their long names only (-p is a parameter there), and
# submits without waiting: submit's words hold for it, but for its short names, its ways to
# wait (click guessed: `--wait`, "Did you mean '--after', '--quiet'?") and gflow's --param,
# which is a sweep's own -p.
_BY_LONG_NAME = " (submit's {}: a sweep takes job options by their long names only)"
_WAIT_SWEEP = "gpuherd wait --sweep NAME waits for the points once they are submitted ({})"
THEIR_OPTIONS[SWEEP] = {
    **{option: hint for option, hint in THEIR_OPTIONS["submit"].items() if option != "--param"},
    **{
        short: long + _BY_LONG_NAME.format(short)
        for short, long in (("-g", "--gpus N"), ("-n", "--name NAME"), ("-a", "--after IDS"))
    },
    "--max-concurrent": "--max-parallel N (gflow's --max-concurrent)",
    "--wait": _WAIT_SWEEP.format("submit's --wait"),
    "-w": _WAIT_SWEEP.format("submit's -w"),
    "-f": _WAIT_SWEEP.format("tsp -f"),
    "--follow": _WAIT_SWEEP.format("submit's --follow") + "; gpuherd log -f ID follows one",
    "--file": "gpuherd sweep FILE.yaml runs a sweep file; gpuherd submit --file FILE queues "
    "a file's commands, one a line (submit's --file)",
}

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


def command_hint(group: str, name: str) -> str | None:
    """`No such command 'status': gpuherd ls lists the jobs ...`, or None."""
    hint = THEIR_COMMANDS.get(group, {}).get(name)
    return f"No such command {name!r}: {as_typed(hint)}" if hint else None


def argument_hint(command: str | None, word: str) -> str | None:
    """`'main' is no job id: gpuherd daemon log shows ...`, or None."""
    hint = THEIR_ARGUMENTS.get(command or "", {}).get(word.strip())
    return f"{word.strip()!r} is no job id: {as_typed(hint)}" if hint else None


def option_hint(command: str | None, option: str) -> str | None:
    """`No such option '--label': use --name NAME (...)`, or None."""
    hint = THEIR_OPTIONS.get(command or "", {}).get(option)
    if hint is None:
        return None
    use = "use " if hint.startswith("--") else ""  # (not before a whole command)
    return f"No such option {option!r}: {use}{as_typed(hint)}"


def program_hint(words: Sequence[str]) -> str | None:
    """`No such command 'python': gpuherd submit -- python train.py queues it ...` for a
    command typed where gpuherd's go, as task-spooler queues `tsp python train.py` (and gflow
    `gbatch python train.py`); None when its first word names no program nor file."""
    program, *rest = words
    if shutil.which(program) is None:
        if not os.path.isfile(program):
            return None
        if "/" not in program:  # a script here runs as ./job.sh: sh looks `job.sh` up on PATH
            words = [f"./{program}", *rest]
    queue = f"{as_typed('gpuherd submit -- ')}{shlex.join(words)}"
    return f"No such command {program!r}: {queue} queues it (tsp CMD, gflow's gbatch CMD)"
