"""A submitted job, checked: from the wire's SubmitItem to the core's JobSpec."""

from __future__ import annotations

import functools
import os
import resource
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from gpuherd.core.commands import MAX_COMMAND_BYTES
from gpuherd.core.deps import KINDS, contradiction, kept_apart
from gpuherd.core.env_vars import MAX_VARIABLE_BYTES
from gpuherd.core.idspec import JOBS_THERE_ARE, MAX_GPU_INDEX, MOST_GPUS, said_ids
from gpuherd.core.model import Device, JobSpec, Policy
from gpuherd.core.reasons import Refusal, never_fits
from gpuherd.core.reasons_never import GPUS_FLAG
from gpuherd.core.units import BARE_LEAST, LONGEST, format_size, format_size_down
from gpuherd.core.when import BEGIN_RANGE, LATEST
from gpuherd.errors import InvalidValue, NotFound
from gpuherd.host_memory import host_memory_total
from gpuherd.output_paths import absolute, output_problem, shown
from gpuherd.submission_folders import check_cwd
from gpuherd.submission_text import (
    blank,
    check_given,
    field,
    reject_bad_names,
    reject_nul,
)
from gpuherd.wire import SubmitItem

DEFAULT_SETTINGS = Policy()
"""The settings of a daemon whose `config` is untouched (and of `gpuherd run`)."""


def spec_from_item(
    item: SubmitItem,
    where: str = "",
    settings: Policy = DEFAULT_SETTINGS,
    folders: set[str] | None = None,
) -> JobSpec:
    """The JobSpec a submitted item asks for; InvalidValue names the first thing wrong.

    `where` begins a message with which item of a batch it is (Batch.where: `job 3 of the
    submission: `, a line of a file); `settings` (the daemon's `config`) give the retries
    and the grace of an item that gives none, stored in the job as they are now;
    `folders` holds the working directories found to exist so far in this batch (its jobs
    nearly all share one: one look, not 10,000).
    """
    reject_nul(
        where,
        command=item.command,
        cwd=item.cwd,
        name=item.name or "",
        project=item.project or "",
        env=item.env or {},
        env_overrides=item.env_overrides,
        folder=item.folder or "",
        sweep=item.sweep or "",
        git=item.git or "",
        output=item.output or "",
        error=item.error or "",
    )
    reject_bad_names(where, item.env or {}, item.env_overrides)
    for what, text in ("name", item.name), ("project", item.project):
        if (wrong := blank(text)) is not None:  # (the dashboard sends a blank box as none)
            raise InvalidValue(f"{where}{field(what)} {wrong}: give a {what}, or leave it out")
    given = ("name", "project", "env_overrides", "mem", "ram")  # (asdict copies `env`)
    check_given(where, {what: getattr(item, what) for what in given})
    if item.begin is not None and not 0 <= item.begin <= LATEST:  # NaN too
        raise InvalidValue(f"{where}{field('begin')} must be {BEGIN_RANGE}")
    if item.begin is not None and item.hold:
        raise InvalidValue(
            f"{where}give {field('hold')} or {field('begin')}, not both: "
            "begin keeps the job held until then"
        )
    if item.folder and not os.path.isabs(item.folder):  # the daemon's cwd is no one's
        raise InvalidValue(
            f"{where}folder {item.folder} is relative: give an absolute path (a request has "
            "no working directory to take it from)"
        )
    # As an edit keeps them: a job in after_any and another list waits as the other says.
    after, after_any, after_fail = kept_apart(item.after, item.after_any, item.after_fail)
    env = dict(item.env or {})
    # The daemon's secret (the dashboard's token), which no job is given (job_environment):
    # not stored either, where every `daemon backup` copied it with herd.db.
    env.pop("GPUHERD_TOKEN", None)
    spec = JobSpec(
        command=item.command.strip(),
        cwd=item.cwd,
        env=env,
        env_overrides=dict(item.env_overrides),
        name=item.name,
        gpus=item.gpus,
        only_gpus=tuple(sorted(set(item.only_gpus))),
        mem=item.mem,
        ram=item.ram,
        oom_retry=item.oom_retry,
        exclusive=item.exclusive,
        after=after,
        after_any=after_any,
        after_fail=after_fail,
        retries=settings.retries if item.retries is None else item.retries,
        retry_delay=item.retry_delay,
        timeout=item.timeout,
        max_log_size=_log_cap(item.max_log_size, settings.max_log_size),
        no_output_timeout=item.no_output_timeout,
        kill_on_no_output=item.kill_on_no_output,
        grace=settings.grace if item.grace is None else item.grace,
        project=item.project or None,
        folder=item.folder,
        sweep=item.sweep,
        git=item.git,
    )
    check_spec(spec, where)
    if folders is None or item.cwd not in folders:
        check_cwd(item.cwd, where)
        if folders is not None:
            folders.add(item.cwd)
    if item.output is not None or item.error is not None:
        spec = replace(
            spec, output=_output(item, "output", where), error=_output(item, "error", where)
        )
    return spec


def _log_cap(given: int | None, default: int | None) -> int | None:
    """An item's --max-log-size: its own (0, `none` said explicitly: no cap, whatever the
    daemon's), else the daemon's `config max-log-size`."""
    return default if given is None else given or None


def _output(item: SubmitItem, name: str, where: str) -> str | None:
    """The item's `output` or `error` file, absolute; InvalidValue if it cannot be one."""
    given: str | None = getattr(item, name)
    return None if given is None else output_file(given, item.cwd, name, where)


def output_file(given: str, cwd: str, name: str, where: str = "") -> str:
    """A job's `output` or `error` file (`name`) as given, for a job that runs in `cwd`:
    absolute; InvalidValue if it cannot be one (a submission's, and an edit's)."""
    if problem := output_problem(given, cwd):
        raise InvalidValue(f"{where}{field(name)} {shown(given)}: {problem}")
    return absolute(given, cwd)


def unknown_jobs(missing: Sequence[int], holders: Sequence[object]) -> NotFound:
    """The error for dependencies (`after`, `after_any`, `after_fail`) that name no job: those
    of the first kind that names one, in the jobs or specs `holders`, by that kind's option
    (`after_fail (--after-fail): no job 99`; every kind was said `after`)."""
    gone = set(missing)
    for kind in KINDS:
        named = sorted({i for h in holders for i in getattr(h, kind) if i in gone})
        if named:
            return NotFound(f"{field(kind)}: no job {said_ids(named)} ({JOBS_THERE_ARE})")
    raise ValueError(f"no dependency of {holders!r} names {missing}")  # (a caller's mistake)


MAX_PATH_BYTES = 4095
"""The longest path Linux takes (PATH_MAX, 4096 with its NUL): no job runs in a longer one."""
EXEC_CEILING = 6 * 1024 * 1024
"""What Linux lets a program start with, arguments and environment together, however large
its stack limit (fs/exec.c: three quarters of _STK_LIM)."""
EXEC_RESERVE = 16 * 1024
"""Of that, what a job's start adds to its command and environment: gpuherd's variables,
and its shell's script and paths."""


@functools.cache  # the limit a process starts with; gpuherd never changes its own
def exec_room() -> int:
    """The bytes of arguments and environment a program may start with here: a quarter of
    the stack limit (`ulimit -s`: 2 MiB of the usual 8 MiB), at most EXEC_CEILING, at least
    128 KiB. The jobs a daemon (or `gpuherd run`) starts inherit its limit."""
    soft = resource.getrlimit(resource.RLIMIT_STACK)[0]
    quarter = EXEC_CEILING if soft == resource.RLIM_INFINITY else soft // 4
    return max(MAX_COMMAND_BYTES + 1, min(EXEC_CEILING, quarter))


def _too_long(text: str, most: int = MAX_COMMAND_BYTES) -> bool:
    """More than `most` UTF-8 bytes (encoded only when it may be: 4 bytes a character)."""
    return len(text) > most // 4 and len(text.encode()) > most


_POSITIVE = "must be positive, at most 100 years"
_GRACE = "must be greater than zero, at most 100 years; a kill may choose 0 (SIGKILL at once)"
"""A job's own grace, refused here for every client in the CLI's words (`--grace: invalid
duration '0': must be greater than zero`): the Python and JSON APIs stored a 0, and the job was
SIGKILLed at once on each stop (a kill, a timeout, `daemon stop --kill`). A stop's own grace
(`kill --grace 0`) may be 0: lifecycle.chosen_grace_refused."""


def check_spec(spec: JobSpec, where: str = "") -> None:
    """InvalidValue for the first value a job cannot have (at submission, and after an edit)."""
    # A message is built only for a problem found: a batch of 10,000 jobs checks 10,000
    # specs, and formatting every message for each cost more than all the checks.
    if problem := (
        _request_problem(spec)
        or _limit_problem(spec)
        or _size_problem(spec)
        or contradiction(spec.after, spec.after_fail)
    ):
        raise InvalidValue(f"{where}{problem}")


def _request_problem(spec: JobSpec) -> str | None:
    """What is wrong with the command or the GPUs asked for."""
    if not spec.command:
        return "the command is empty: give it after -- or as one string"
    if _too_long(spec.command):
        return (
            f"the command is {len(spec.command.encode()):,} bytes, over the 128 KiB a program's "
            "argument may hold: put it in a script file and run that"
        )
    if not 0 <= spec.gpus <= MOST_GPUS:
        return f"{field('gpus')} must be between 0 and {MOST_GPUS}, got {spec.gpus}"
    if any(not 0 <= i <= MAX_GPU_INDEX for i in spec.only_gpus):
        return f"{field('only_gpus')} takes GPU indices from 0 to {MAX_GPU_INDEX}"
    if spec.exclusive and spec.gpus == 0:
        return (
            f"{field('exclusive')} with {field('gpus', '0')}: a CPU-only job gets no GPU "
            "to itself; drop one of them"
        )
    if bool(spec.only_gpus) and spec.gpus == 0:
        return (
            f"{field('only_gpus')} with {field('gpus', '0')}: a CPU-only job gets no GPU; "
            "drop one of them"
        )
    if spec.retries < 0:
        return f"{field('retries')} must be 0 or more, got {spec.retries}"
    return None


def _limit_problem(spec: JobSpec) -> str | None:
    """What is wrong with the job's times and memory."""
    if not _duration(spec.timeout):
        return f"{field('timeout')} {_POSITIVE}"
    if spec.max_log_size is not None and spec.max_log_size <= 0:
        # (0 is no cap only as a request carries `none`: --max-log-size 0 is refused)
        return (
            f"{field('max_log_size')} must be a positive number of bytes; for no cap give "
            "none (0 in a JSON request)"
        )
    if not _duration(spec.retry_delay):
        return f"{field('retry_delay')} {_POSITIVE}"
    if not _duration(spec.no_output_timeout):
        return f"{field('no_output_timeout')} {_POSITIVE}"
    if not 0 < spec.grace <= LONGEST:  # (NaN too) 0 would SIGKILL the job at every stop
        return f"{field('grace')} {_GRACE}"
    if spec.kill_on_no_output and spec.no_output_timeout is None:
        return (
            f"{field('kill_on_no_output', '', '--on-no-output kill')} needs "
            f"{field('no_output_timeout')}: how long a job may print nothing"
        )
    if spec.mem is not None and spec.mem <= 0:
        return f"{field('mem')} must be positive"
    if spec.mem is not None and spec.gpus == 0:  # (as the CLI says it, for every client)
        return (
            f"{field('mem')} with {field('gpus', '0')}: a CPU-only job gets no GPU memory; "
            f"drop one of them; host memory is {field('ram')}"
        )
    if spec.ram is not None and spec.ram <= 0:
        return f"{field('ram')} must be positive"
    return None


_AS_VARIABLES = (
    ("name", "GPUHERD_JOB_NAME"),
    ("project", "GPUHERD_JOB_PROJECT"),
    ("sweep", "GPUHERD_JOB_SWEEP"),
)
"""The fields a job (or its on-end hook) gets as variables of its environment."""


def _size_problem(spec: JobSpec) -> str | None:
    """What of the job is larger than Linux lets it start with, or than any client sends
    (the CLI's arguments, the Python API's checks): a raw request's 50 MB environment was
    stored, and failed the job at its start."""
    for what, variable in _AS_VARIABLES:
        text = getattr(spec, what)
        # A job (its on-end hook) gets it as one string of its environment, NAME=VALUE, which
        # Linux caps at 128 KiB with its NUL: a name 17 bytes under 128 KiB never started.
        if text and _too_long(text, most := MAX_VARIABLE_BYTES - len(variable) - 1):
            return (
                f"the {what} is {len(text.encode()):,} bytes, over the {most:,} it may have: "
                f"jobs get it as {variable}, and Linux caps an environment variable at 128 KiB "
                "with its name: give a shorter one"
            )
    if spec.git and _too_long(spec.git):
        return (
            f"the git commit is {len(spec.git.encode()):,} bytes, over the 128 KiB a "
            "program's argument may hold: give a shorter one"
        )
    for what, value in ("working directory", spec.cwd), ("folder", spec.folder):
        if value and _too_long(value, MAX_PATH_BYTES):
            return (
                f"the {what} is {len(value.encode()):,} bytes, over the {MAX_PATH_BYTES:,} "
                "bytes a path may have: give a shorter one"
            )
    env = {**spec.env, **spec.env_overrides}
    return env_problem(env, len(spec.command.encode()))


def env_problem(env: Mapping[str, str], command_bytes: int) -> str | None:
    """A variable longer than Linux takes, or an environment and command together larger
    (a sweep's environment is checked once, before its points: `command_bytes` 0)."""
    # As Linux counts them: each string with its NUL, and a pointer to it.
    overhead = 10 * len(env) + command_bytes + 9 + EXEC_RESERVE
    # Characters first (a character is at most 4 UTF-8 bytes): an environment far within
    # the limits, as nearly all are, passes without being encoded; a batch of 10,000 jobs
    # checks 10,000 copies of it.
    chars = sum(map(len, env)) + sum(map(len, env.values()))
    if 4 * chars <= MAX_COMMAND_BYTES and 4 * chars + overhead <= exec_room():
        return None
    env_bytes = len("".join([*env, *env.values()]).encode())
    if env_bytes > MAX_COMMAND_BYTES:  # else no variable can be
        for name, value in env.items():
            if _too_long(pair := f"{name}={value}"):
                return (
                    f"the environment variable {_shown(name)} is {len(pair.encode()):,} bytes "
                    "with its name, over the 128 KiB an environment variable may hold: put the "
                    "value in a file and give its path"
                )
    size = env_bytes + overhead
    if size > (room := exec_room()):
        return (
            f"the job's environment ({len(env):,} variables) and command take {size:,} bytes "
            f"with gpuherd's own, over the {format_size(room)} a program may start with here "
            "(a quarter of the stack limit, ulimit -s, at most 6 MiB): unset large "
            "variables, or give values in files"
        )
    return None


def _shown(name: str) -> str:
    """A variable's name for a message: a long one cut short."""
    return repr(name if len(name) <= 40 else name[:40] + "…")


def _duration(seconds: float | None) -> bool:
    """None (no limit), or a positive number of seconds within LONGEST (not NaN)."""
    return seconds is None or 0 < seconds <= LONGEST


def never_runs(
    spec: JobSpec,
    devices: Sequence[Device],
    policy: Policy,
    missing: Sequence[Device] = (),
    unused: Sequence[Device] = (),
    gpus_flag: str = GPUS_FLAG,
) -> Refusal | None:
    """Why a job asking for this could never start here (None: it can), and the way out.
    `missing`: GPUs configured but not seen by the probe now, as last seen: they may come
    back (a GPU fallen off the bus), so a job only they could run is accepted, and waits.
    `unused`: GPUs the probe sees that gpuherd does not use, whose `gpus add` the way out
    names where they would let the job run. `gpus_flag`: the option of a job's GPU count
    that the way out names (`gpuherd run`'s --gpus-per-job)."""
    if spec.gpus:
        configured = [*devices, *missing]
        asks = spec.gpus, spec.mem, configured, policy, spec.exclusive, spec.only_gpus
        found = never_fits(*asks, unused, gpus_flag)
        if found:
            return found
    keep = policy.keep_ram
    if spec.ram and spec.ram > (room := (total := host_memory_total()) - keep):
        # No job starts that would leave less than keep-ram available (core/placement.py):
        # one asking more than the total less it waited for ever. At most what is left, as
        # --mem's refusal says (rounded down: `--ram 23.5GiB` fits in 23.54 GiB; no "at most 0 B").
        has = f"more than this machine has ({format_size(total)})"
        most = format_size_down(room) if room >= BARE_LEAST else ""
        if keep:
            has = f"but this machine has {format_size(total)} ({most or '0 B'} "
            has += f"once keep-ram's {format_size(keep)} is kept free)"
        what = f"asks for {format_size(spec.ram)} of host memory, {has}"
        way = f"give a smaller {field('ram')}" + (f", at most {most}" if most else "")
        edit = f"--ram {most.replace(' ', '')}" if most else ""
        return Refusal(what, way, edit, where="on this machine")
    return None


def never_runs_judge(
    devices: Sequence[Device],
    policy: Policy,
    missing: Sequence[Device] = (),
    unused: Sequence[Device] = (),
    gpus_flag: str = GPUS_FLAG,
) -> Callable[[JobSpec], str | None]:
    """never_runs() for many jobs: asked once per request shape (a sweep's points, a queue's
    jobs all ask alike)."""
    verdicts: dict[tuple[object, ...], str | None] = {}

    def judge(spec: JobSpec) -> str | None:
        request = (spec.gpus, spec.mem, spec.exclusive, spec.ram, spec.only_gpus)
        if request not in verdicts:
            verdicts[request] = never_runs(spec, devices, policy, missing, unused, gpus_flag)
        return verdicts[request]

    return judge
