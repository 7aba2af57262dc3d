"""The small POSIX sh (or $GPUHERD_SHELL) each local job runs in (executors/local.py): it leads
the job's session, records its pid and the command's exit status in the attempt folder's
`process` file, and runs the command."""

import errno
from signal import SIGHUP, SIGINT, SIGPIPE, SIGQUIT, SIGTERM, SIGXFSZ

# Python ignores SIGPIPE and SIGXFSZ, and a daemon started with nohup or `&` may ignore
# HUP/INT/QUIT; ignored dispositions survive exec and a shell cannot trap them, so a job
# would silently inherit them. Reset them to default in the job's shell (as subprocess does).
RESET_SIGNALS = (SIGPIPE, SIGXFSZ, SIGHUP, SIGINT, SIGQUIT, SIGTERM)

# $1 = command, $2 = working directory, $3 = attempt folder: passed as arguments so that no
# quoting of user text into the script is ever needed.
#
# One shell per job, the command run in it by `eval` (like `sh -c` would, with `$@` empty
# after the shift): a second shell for the command cost more CPU than the rest of gpuherd's
# work per job. The EXIT trap records the status however the command ends: at its end, by
# `exit N` (also inside the command), or by HUP/INT/TERM, which end the shell through the
# traps below. For a foreground command, POSIX defers a trapped signal until the command has
# finished, so the status recorded is the command's real one. Traps are reset to default in
# the commands the shell starts, so they die of these signals normally. A command that
# replaces the shell (`exec prog`) or sets its own EXIT trap leaves no `exit` line: the
# daemon then takes the status from the process itself, and only a daemon that was down
# when such a job ended finds it `lost`.
# Where the folder's path no longer leads (the home moved, `mv`, while the job ran: its
# re-attached end was recorded `lost`, home_id.py), the status goes through fd 8, the `process`
# file opened at the start, if fd 8 is still that file (an `exit N` inside the command, which
# does not get fd 8, `8>&-`, runs the trap with fd 8 closed, or as the command set it). Else,
# as always, by the path: no fork on the usual way out (readlink only after a move).
# The files are written with shell builtins only: every fork+exec here sits on the path from
# one job's exit to the next job's start. The shell opens the logs itself (first thing):
# posix_spawn's file actions would run in the vfork child while the daemon waits.
JOB_SHELL = r"""
__gpuherd_dir=$3
exec </dev/null >>"$3/stdout.log" 2>>"$3/stderr.log" 8>>"$3/process"
trap '__gpuherd_status=$?
if [ ! -e "$__gpuherd_dir/process" ] && [ -e /proc/$$/fd/8 ]; then
    case $(readlink /proc/$$/fd/8 2>/dev/null) in
    */process) printf "exit %s\n" "$__gpuherd_status" >&8 ;;
    esac
else
    printf "exit %s\n" "$__gpuherd_status" >>"$__gpuherd_dir/process"
fi' EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM
printf 'pid %s\n' "$$" >"$3/process"
if ! cd -- "$2" 2>/dev/null; then
    printf 'gpuherd: cannot enter working directory %s\n' "$2" >&2
    exit 127
fi
__gpuherd_command=$1
shift 3
eval "$__gpuherd_command" 8>&-
"""


def spawn_advice(error: int | None) -> str:
    """What to do when the job's shell could not be started (it said: check the attempt's
    folder, which the fork and exec never touch)."""
    if error in (errno.EAGAIN, errno.ENOMEM):
        return "the machine is out of processes or memory (ulimit -u, free -h): run it again later"
    if error == errno.E2BIG:
        return "its environment is too large for one process: unset long variables"
    return "set GPUHERD_SHELL to a POSIX shell such as bash (or its path), or unset it for /bin/sh"
