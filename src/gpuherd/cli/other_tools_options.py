"""Other tools' options typed to gpuherd's commands (pueue's `submit --label`, Slurm's
`--gres`, task-spooler's `-D`, gflow's `--depends-on`): what to give here instead, and whose
they are. other_tools.py words the error (option_hint); this is its table, loaded only then."""

from __future__ import annotations

TOP = ""
"""THEIR_COMMANDS' and THEIR_OPTIONS' key for `gpuherd` itself (task-spooler's verbs are
its flags); a group's own key is its name (`gpus`)."""

_GROUP = "--project NAME (pueue's --group)"
PUEUE_DELAY = "--begin {} (pueue's -d, --delay)"
"""pueue's `add -d 2h`, with its time (submit's `-d` is task-spooler's unless one follows)."""
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

# A daemon's options typed to `run`, which has none: its jobs run on this machine.
_RUN_ON_RAY = (
    "gpuherd run runs its jobs on this machine's GPUs; on a Ray cluster: gpuherd daemon start "
    "--executor ray --address HOST:PORT, then gpuherd submit --file FILE"
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
# Options of a job that `edit` does not change (core/waiting_options.py's _NOT_EDITABLE):
# typed to it, click offered `--retries` for `--oom-retry`.
_SUBMIT_ONLY = ("--oom-retry", "--no-oom-retry", "--no-output-timeout", "--on-no-output")
_NOT_EDITED = (
    "edit cannot change {0} of a waiting job: gpuherd kill ID, then submit its command again "
    "with {0}"
)
# Slurm's squeue and scancel take -u $USER: a daemon's jobs are all its user's.
_MINE = "{}: a daemon's jobs are all its user's (Slurm's {})"
_EVERY_JOB = "gpuherd kill $(gpuherd ls -q) stops every job"
_LEAVE_OUT = "leave it out"
_BY_NAME = (
    "gpuherd kill $(gpuherd ls -q --name NAME) stops the jobs of that name, or of a pattern: "
    "--name 'resnet-*' (Slurm's scancel {})"
)
# pueue's groups are projects here: what it does to a group's jobs, done to the ids of one.
_KILL_GROUP = (
    "gpuherd kill $(gpuherd ls -q --project NAME) stops a project's jobs (pueue's kill {})"
)
_PAUSE_GROUP = (
    "gpuherd hold $(gpuherd ls -q --project NAME --state queued) keeps a project's queued jobs "
    "from starting, gpuherd pause $(gpuherd ls -q --project NAME --state running) pauses its "
    "running ones (pueue's pause {})"
)
_PAUSE_ALL = (
    "leave it out: gpuherd pause starts nothing more; gpuherd pause $(gpuherd ls -q --state "
    "running) pauses the running jobs too (pueue's pause {})"
)
_RESUME_GROUP = (
    "gpuherd release $(gpuherd ls -q --project NAME --state held) and gpuherd resume $(gpuherd "
    "ls -q --project NAME --state paused) let a project's jobs go on (pueue's start {})"
)
_RESUME_ALL = (
    "leave it out: gpuherd resume starts the queue again; gpuherd resume $(gpuherd ls -q "
    "--state paused) the paused jobs too (pueue's start {})"
)
_WAIT_ALL = (
    "leave it out: gpuherd wait waits for every job queued, running or paused (pueue's wait --all)"
)
_RETRY_FAILED = (
    "gpuherd retry $(gpuherd ls -q --all --state failed{}) runs the failed jobs again (pueue's "
    "restart {})"
)
_SIGNAL = (
    "gpuherd kill IDS sends SIGTERM, then SIGKILL after the job's grace (--grace 5m: more "
    "time to save; --grace 0: at once); gpuherd pause IDS sends SIGSTOP, gpuherd resume IDS "
    "SIGCONT; no other signal ({})"
)
_LOG_JSON = (
    "gpuherd show ID --json gives a job's fields, gpuherd log ID its output (pueue's log {})"
)
# Slurm's CPU count: gpuherd hands out GPUs (and --ram), not CPUs.
_CPUS = (
    "leave it out: gpuherd neither counts nor limits a job's CPUs; --gpus 0 makes a CPU-only "
    "job, gpuherd config set cpu-jobs N caps how many of those run (Slurm's {})"
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
        "-s": "--hold (pueue's -s, --stashed)",
        "-l": "--name NAME (pueue's -l, --label)",
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
        "--nodelist": "--only-gpus 0,2: the job runs only on those GPUs of this machine "
        "(Slurm's --nodelist names nodes)",
        "--partition": "leave it out: a daemon has one queue, of this machine's GPUs; --project "
        "NAME groups jobs, gpuherd config set project-limits NAME=N caps a group (Slurm's "
        "--partition)",
        "--cpus-per-task": _CPUS.format("--cpus-per-task"),
        "-c": _CPUS.format("-c"),
        "--gpus-per-node": "--gpus N (Slurm's --gpus-per-node)",
        "--gpus-per-task": "--gpus N (Slurm's --gpus-per-task)",
        "--mem-per-gpu": "--mem SIZE, the GPU memory it needs on each GPU (Slurm's --mem-per-gpu)",
        "--ntasks": "leave it out: a job is one command, which starts its own processes, as "
        "torchrun --nproc_per_node N does (Slurm's --ntasks)",
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
        "-i": "--priority P to put it first; it starts once GPUs are free (pueue's -i)",
        "--logpath": "--output DIR/%j.log"
        + _OUTPUT_FILE.format("a file in DIR")
        + " (gpulimit's --logpath)",
        "--outfile": "--output FILE" + _OUTPUT_FILE.format("FILE") + " (GPUPeasy's outfile)",
        "--jobname": "--name NAME (GPUPeasy's jobname)",
    },
    "run": {
        "-o": _RUN_OUTPUT,
        "--output": _RUN_OUTPUT,
        "-e": _RUN_OUTPUT,
        "--error": _RUN_OUTPUT,
        "--executor": _RUN_ON_RAY,
        "--address": _RUN_ON_RAY,
    },
    "pause": {
        "--wait": "leave it out: gpuherd pause lets running jobs finish (pueue's pause --wait)",
        "-w": "leave it out: gpuherd pause lets running jobs finish (pueue's pause -w)",
        "-g": _PAUSE_GROUP.format("-g"),
        "--group": _PAUSE_GROUP.format("--group"),
        "-a": _PAUSE_ALL.format("-a"),
        "--all": _PAUSE_ALL.format("--all"),
    },
    "resume": {
        "-g": _RESUME_GROUP.format("-g"),
        "--group": _RESUME_GROUP.format("--group"),
        "-a": _RESUME_ALL.format("-a"),
        "--all": _RESUME_ALL.format("--all"),
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
        "-u": _MINE.format(_LEAVE_OUT, "squeue -u"),
        "--user": _MINE.format(_LEAVE_OUT, "squeue --user"),
        "--me": _MINE.format(_LEAVE_OUT, "squeue --me"),
        "-n": "--name NAME, or a pattern: --name 'resnet-*' (Slurm's squeue -n)",
    },
    "wait": {"--group": _GROUP, "-g": _GROUP, "-a": _WAIT_ALL, "--all": _WAIT_ALL},
    "clean": {
        "--successful-only": "--state succeeded (pueue's --successful-only)",
        "-s": "--state succeeded (pueue's clean -s)",
    },
    "retry": {
        "--stashed": _HOLD,
        "--in-place": "leave it out: a retry always keeps the job's id (pueue's --in-place)",
        "--edit": _EDIT,
        "-e": _EDIT,
        "-a": _RETRY_FAILED.format("", "-a"),
        "--all-failed": _RETRY_FAILED.format("", "--all-failed"),
        "-g": _RETRY_FAILED.format(" --project NAME", "-g"),
        "--failed-in-group": _RETRY_FAILED.format(" --project NAME", "--failed-in-group"),
    },
    "kill": {
        "--all": _ALL,
        "-a": _ALL,
        "-u": _MINE.format(_EVERY_JOB, "scancel -u"),
        "--user": _MINE.format(_EVERY_JOB, "scancel --user"),
        "-n": _BY_NAME.format("-n"),
        "--name": _BY_NAME.format("--name"),
        "-g": _KILL_GROUP.format("-g"),
        "--group": _KILL_GROUP.format("--group"),
        "-s": _SIGNAL.format("pueue's kill -s"),
        "--signal": _SIGNAL.format("pueue's kill --signal, Slurm's scancel --signal"),
    },
    "edit": {
        "--priority": "gpuherd priority ID P changes a job's priority",
        "--label": "--name NAME (pueue's --label)",
        "--path": "--cwd DIR (pueue's edit --path)",
        **{option: _NOT_EDITED.format(option) for option in _SUBMIT_ONLY},
    },
    "log": {
        "--full": "leave it out: gpuherd log ID prints the whole log, -n N its last N lines "
        "(pueue's log --full)",
        "--tail": "use -n N (--lines N): the last N lines, with -f then what follows "
        "(docker's and kubectl's logs --tail N, tail -n N)",
        "-l": "--lines N (-n N): the last N lines (pueue's log -l)",
        "-j": _LOG_JSON.format("-j"),
        "--json": _LOG_JSON.format("--json"),
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
