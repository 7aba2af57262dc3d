"""What the Python API's handles are given, checked (pyapi.py): a job's id, a wait's jobs and
timeout, a command, an edit's keywords; and what a submission warns of. A value of the wrong
kind gets one line saying what to give, where it raised Python's own error from deep inside
(or, for a command, ran as something else)."""

from __future__ import annotations

import functools
import os
import shlex
import time
from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from gpuherd.core.commands import command_from_args
from gpuherd.core.edit import BEGIN, CLEARABLE, EDITABLE
from gpuherd.core.int64 import LARGEST, TOO_LARGE
from gpuherd.core.near_names import did_you_mean
from gpuherd.core.sweep import SweepError, SweepSpec
from gpuherd.core.sweep_fixed import overridden_fixed
from gpuherd.errors import HerdError, InvalidValue
from gpuherd.program_hints import program_hints
from gpuherd.pyapi_types import WrongKindOfNumber, WrongType, WrongValue, as_given, refuse_nul
from gpuherd.script_files import missing_script_hints
from gpuherd.start_hint import runs_on_ray
from gpuherd.submission_text import blank
from gpuherd.task_values import from_numpy, is_numpy


def check_connect(
    home: Any, gpus: Any, fake_gpus: Any = None, start: Any = True
) -> str | list[int] | None:
    """connect()'s `home`, `gpus`, `fake_gpus` and `start`, refused in one line before any
    daemon is looked for (a number raised Python's "expected str, bytes or os.PathLike
    object", or "'int' object is not iterable" for `gpus=2`, taken for a count; `fake_gpus=2.5`
    was a DaemonError, as if a daemon had refused it; `start="no"`, true, started one).
    Returns `gpus` as connect() reads it: text, or a list (a generator read once, here)."""
    if not isinstance(start, bool):
        raise WrongType(
            f"start is True or False (whether to start a daemon if none runs), got "
            f"{as_given(start)}"
        )
    if home == "":  # (a script's unset variable: the folder Python ran in became a home)
        raise HerdError("home is empty: give the home's folder, or leave home out (GPUHERD_HOME)")
    if home is not None and not isinstance(home, str | os.PathLike):
        raise WrongType(f"home is a folder (a str or a Path), got {home!r} ({type(home).__name__})")
    if gpus is not None and (
        isinstance(gpus, bytes | Mapping) or not isinstance(gpus, str | Iterable)
    ):
        fake = (
            f"; fake_gpus={gpus} starts it with {gpus} fake GPUs" if isinstance(gpus, int) else ""
        )
        many = "" if isinstance(gpus, Mapping) else ", not how many"
        raise WrongType(
            f'gpus is which GPUs the daemon uses, their indices ([0, 2], or "0,2"){many}: '
            f"got {gpus!r} ({type(gpus).__name__}){fake}"
        )
    listed: list[int] | None = None if gpus is None or isinstance(gpus, str) else list(gpus)
    # ([None] was "invalid GPU index 'None'", as if text; a bool is no index either)
    if wrong := [i for i in listed or () if isinstance(i, bool) or not isinstance(i, int | str)]:
        raise WrongType(
            f'gpus are GPU indices ([0, 2], or "0,2"): {as_given(wrong[0])} in {listed!r} '
            "is not one"
        )
    count = isinstance(fake_gpus, int) and not isinstance(fake_gpus, bool)
    if fake_gpus is not None and not (count or isinstance(fake_gpus, str | os.PathLike)):
        raise WrongKindOfNumber(  # (an InvalidValue too, as a bad count is: GpusRefused)
            "fake_gpus is how many fake GPUs (4), their sizes ('2x24GiB,1x80GiB') or a .json "
            f"state file, got {fake_gpus!r} ({type(fake_gpus).__name__})"
        )
    return gpus if isinstance(gpus, str) else listed


def changed_spec(spec: SweepSpec, changes: Mapping[str, Any]) -> SweepSpec:
    """Herd.sweep's spec with its keywords' `changes`: WrongValue (an InvalidValue, as the
    daemon refuses samples past the grid) for a spec they make invalid, and for a fixed key
    every point varies, refused here for a task's sweep too (the daemon's check skips it)."""
    try:
        spec = replace(spec, **changes)
        if overridden := overridden_fixed(spec):
            raise overridden
    except SweepError as exc:
        raise WrongValue(f"invalid sweep: {exc}") from None
    return spec


def job_number(job_id: Any) -> int:
    """A job handle's id: a number, or its digits as text ("7", as `gpuherd submit -q` prints
    it); kept as given, "7" missed its own state in every wait's answer (a KeyError). Refused
    in the API's words: WrongType for another kind (1.5, None: a plain TypeError, traceback
    and all, in a notebook), WrongValue for text not digits ("abc") or an id under 1 (-1 made
    a handle, which said "no job -1" only when used) or one past the queue's 64 bits."""
    if is_numpy(job_id):  # (an id out of a DataFrame's column: numpy.int64)
        job_id = from_numpy(job_id)
    if isinstance(job_id, str):
        digits = job_id.strip()  # (ASCII only: "²".isdigit(), and int("²") raised)
        number = int(digits) if digits.isascii() and digits.isdigit() else 0
    elif isinstance(job_id, int) and not isinstance(job_id, bool):
        number = int(job_id)
    else:
        raise WrongType(f"a job id is a whole number (herd.job(7)), got {as_given(job_id)}")
    if number > LARGEST:  # (not "from 1 up": 10**30 is that; the queue's cap, as limit's)
        raise WrongValue(f"job id {number} {TOO_LARGE}")
    if number < 1:
        raise WrongValue(
            f"a job id is a whole number from 1 up (herd.job(7)), or its digits as text "
            f"('7'), got {job_id!r}"
        )
    return number


def wait_ids(jobs: Any, job_type: type[Any], herd: Any) -> list[int]:
    """`Herd.wait`'s jobs, handles or ids, as ids (handles were sorted, and raised); a handle
    of another daemon than `herd`'s refused, as as_completed() refuses it (its id was waited
    for on `herd`'s daemon, whose job of that number, if any, answered for it)."""
    if isinstance(jobs, str | int | job_type) or not isinstance(jobs, Iterable):
        raise WrongType(
            "wait() takes a list of jobs or ids (herd.wait([7, 8])), or a sweep, "
            f"got {as_given(jobs)}"
        )
    ids = set()
    for job in jobs:
        if isinstance(job, job_type):
            refuse_other_daemon(job, herd, "wait()")
        ids.add(job_number(job.id if isinstance(job, job_type) else job))
    return sorted(ids)


def refuse_other_daemon(job: Any, herd: Any, call: str) -> None:
    """WrongValue for a job handle (`job.herd`) of another daemon than `herd`'s: a wait
    (`call`) asks one daemon, which knows its own jobs by these ids, not the other's."""
    if job.herd is not herd and (other := _of_another(job, herd.client.home)):
        raise WrongValue(
            f"{other}: {call} waits on one daemon; wait for each daemon's jobs through its "
            "own connect()"
        )


def refuse_other_home(job: Any, home: Path, key: str) -> None:
    """WrongValue for a job handle of another daemon than `home`'s given as `key` (after=,
    move's before=): sent as its bare id, it named the job of that number here, if any."""
    if other := _of_another(job, home):
        raise WrongValue(f"{other}: {key}= takes only jobs of the job's own daemon")


def _of_another(job: Any, home: Path) -> str | None:
    """What says that `job` (a handle) is of another daemon than `home`'s; None if it is not."""
    if one_daemon(job.herd.client.home, home):
        return None
    return f"job {job.id} is of the daemon of {job.herd.client.home}, not of {home}"


def one_daemon(home: Path, other: Path) -> bool:
    """Whether both homes are one daemon's: one folder, also named two ways (a link, `..`)."""
    return home == other or home.resolve() == other.resolve()


def deadline_after(timeout: Any) -> float | None:
    """The `time.monotonic()` by which a wait of `timeout` seconds ends (None: no end)."""
    if timeout is None:
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, int | float):
        raise WrongType(
            f"timeout is a number of seconds (None waits as long as it takes), got {timeout!r}"
        )
    if not timeout >= 0:  # (NaN too) -1 waited not at all, then said "after -1s, ... still"
        raise WrongValue(
            f"timeout must be 0 or more seconds (None waits for ever), got {timeout!r}"
        )
    return time.monotonic() + timeout


def still_unfinished(timeout: float, left: Iterable[int], waited: int) -> TimeoutError:
    """The TimeoutError of a wait of `waited` jobs, of which `left` had not ended after
    `timeout` seconds: in one wording for herd.wait(), job.wait(), a sweep's wait() and
    as_completed() (two said it two ways)."""
    ids = sorted(left)
    shown = ", ".join(map(str, ids[:10])) + (", …" if len(ids) > 10 else "")
    job_s = "job" if waited == 1 else "jobs"
    return TimeoutError(
        f"after {timeout:g}s, {len(ids)} of {waited} {job_s} still unfinished "
        f"({'job' if len(ids) == 1 else 'jobs'} {shown})"
    )


def log_stream(stream: Any) -> str:
    """`Job.logs`' and `Job.follow`'s `stream`, refused at the call in the daemon's words (a
    follow refused it only at its first next(); a queued job's logs() answered "")."""
    from gpuherd.layout import STREAMS  # (here: `import gpuherd.pyapi` stays light)

    if stream not in STREAMS:
        raise InvalidValue(f"unknown stream {stream!r}: use stdout or stderr")
    return str(stream)


def refuse_unknown(
    options: Iterable[str], known: frozenset[str], said: str = "unknown option {!r}; options"
) -> None:
    """WrongType (a TypeError, as Python's own for an unknown keyword, in one line) for an
    option not `known` (`submit`'s, a task's), naming the closest one;
    `said` names it and the list (`{!r} cannot be edited; fields` for `Job.edit`)."""
    unknown = sorted(set(options) - known)
    if unknown:
        guess = did_you_mean(unknown[0], known)
        what, _, listed = said.format(unknown[0]).rpartition("; ")
        raise WrongType(f"{what}{guess}; {listed}: {', '.join(sorted(known))}")


EDIT_KEYWORDS = frozenset({*EDITABLE, BEGIN, "env"} - {"env_overrides"})
"""What `Job.edit` takes, by the names `submit` takes them (`env`, not the API's field)."""


CLEAR_NAMES = tuple("env" if name == "env_overrides" else name for name in CLEARABLE)
"""What `Job.edit(clear=...)` unsets, by the names `submit` takes them (`env`)."""


def check_edit(changes: Mapping[str, Any], clear: Any = ()) -> list[str]:
    """`Job.edit`'s keywords: WrongType for one it does not take, naming the closest; an empty
    name or project refused, as the CLI's `edit --name ''` is: `clear=` unsets them (quietly
    cleared, a script's empty variable lost the job's name without a word). Returns `clear`
    as a list (one name given alone is that name, not its letters), its names checked here in
    the words of this API: the daemon's refusals name the HTTP API's `env_overrides`."""
    refuse_unknown(changes, EDIT_KEYWORDS, "{!r} cannot be edited; fields")
    for key in ("name", "project"):  # (only white space too: no name, yet a name)
        if isinstance(changes.get(key), str) and (said := blank(changes[key])) is not None:
            raise InvalidValue(f'{key} {said}: give a {key}, or clear=["{key}"] to unset it')
    if isinstance(changes.get("command"), str) and (said := blank(changes["command"])):
        raise WrongValue(f"the command {said}: {_GIVE_COMMAND}")  # (the daemon's: "after --")
    if isinstance(changes.get("env"), Mapping):  # (the daemon's words: `env_overrides`)
        refuse_nul(changes["env"])
    if clear is not None and (isinstance(clear, bytes) or not isinstance(clear, Iterable)):
        # (clear=5 raised Python's "'int' object is not iterable")
        raise WrongType(
            f"clear is the fields to unset, a list of names (clear=['name']), got {as_given(clear)}"
        )
    cleared = [] if clear is None else [clear] if isinstance(clear, str) else list(clear)
    # (env_overrides, the HTTP API's name, is taken as it always was; only `env` is listed)
    if wrong := [name for name in cleared if name not in {*CLEAR_NAMES, "env_overrides"}]:
        names = ", ".join(CLEAR_NAMES)
        raise WrongValue(f"{wrong[0]!r} cannot be cleared: clear one of {names}")
    if both := [name for name in cleared if name in changes]:
        raise WrongValue(f"{both[0]} is both changed and cleared: give one")
    given = [key for key, value in changes.items() if value is not None]
    if not given and not cleared:  # (name=None reached the daemon, named in its HTTP words)
        none = next(iter(changes), None)
        unset = f" (clear=[{none!r}] unsets it)" if none in CLEAR_NAMES else ""
        said = f"{none}=None changes nothing{unset}; " if none else ""
        raise WrongValue(
            f"nothing to change: {said}give one of {', '.join(sorted(EDIT_KEYWORDS))} "
            "(or clear=[...])"
        )
    return cleared


def log_numbers(**given: Any) -> dict[str, int | None]:
    """`Job.logs`' and `Job.follow`'s `lines` and `attempt`, and `Herd.jobs`' `limit`, each None
    or a whole number from 1 up (`lines` from 0): refused here in the API's words, where the
    daemon answered in its HTTP form (`invalid request: query.lines: Input should be ...`) or
    took `attempt=0` for the latest."""
    for name, value in given.items():
        number = isinstance(value, int) and not isinstance(value, bool)
        least = 0 if name == "lines" else 1  # lines=0: none of the log so far (tail -n 0)
        if number and value > LARGEST:  # (not "from 1 up": 10**30 is that; the daemon's cap)
            raise InvalidValue(f"{name} {value} {TOO_LARGE}")
        if value is not None and (not number or not least <= value):
            latest = " (None: the latest)" if name == "attempt" else ""
            refusal = InvalidValue if number else WrongKindOfNumber  # ("5": a TypeError too)
            raise refusal(f"{name} is a whole number from {least} up{latest}, got {value!r}")
    return given


_GIVE_COMMAND = (
    "give the command to run, as text ('python train.py --lr 0.1') or a list of words "
    "(['python', 'train.py', '--lr', '0.1'])"
)


def command_text(command: Any) -> str:
    """`Herd.submit`'s command as sh runs it: text as written, or a list of words (text or
    paths) quoted and joined; a path alone is one word. A None word ran as '', and a number
    raised Python's "expected string or bytes-like object"."""
    if isinstance(command, str):
        if (said := blank(command)) is not None:  # (the daemon's words said "after --")
            raise WrongValue(f"the command {said}: {_GIVE_COMMAND}")
        return command
    if callable(command):  # (a function given to run on a GPU: a task's work)
        name = getattr(command, "__name__", "")
        name = name if name.isidentifier() else "f"  # (a lambda: `<lambda>.submit` is none)
        raise WrongType(
            f"the command is text or a list of words, got the function {name!r}: a function "
            f"runs as a task, a top-level def with `@gpuherd.task` above it, then "
            f"{name}.submit(...) with its arguments (docs/python.md)"
        )
    if isinstance(command, os.PathLike):  # one word, spaces and all
        return shlex.quote(str(command))
    if not isinstance(command, Iterable) or isinstance(command, bytes | Mapping):
        raise WrongType(
            "the command is text ('python train.py --lr 0.1') or a list of words "
            f"(['python', 'train.py', '--lr', '0.1']), got {command!r}"
        )
    words = list(command)
    if not words:
        raise WrongValue(f"the command is empty (no words): {_GIVE_COMMAND}")
    for word in words:
        if not isinstance(word, str | os.PathLike):
            number = isinstance(word, int | float) and not isinstance(word, bool)
            raise WrongType(
                f"the command's words are text (or paths): {word!r} in {words!r} is not"
                + (f"; give {str(word)!r}" if number else "")
            )
    return command_from_args([str(word) for word in words])


def submit_warnings(
    answer: Mapping[str, Any], item: Mapping[str, Any], home: Path | None = None
) -> list[str]:
    """What the submission of one job (`item`, as POST /jobs takes it) warns of, as the CLI
    does: the daemon's `answer` (cancelled at once: a job it waits for already ended badly),
    a program its shell will not find as written, with the fix as this API's call
    (`herd.submit('./job.sh ...')`: program_hints.py), and a script it runs that is not
    there (script_files.py); `home`: the daemon's."""
    command, cwd = item["command"], item["cwd"]
    env = {**item["env"], **(item.get("env_overrides") or {})}
    on_ray = functools.partial(runs_on_ray, home)
    missing = missing_script_hints([command], cwd, env, on_ray=on_ray)
    return [*answer.get("warnings", []), *program_hints(command, cwd, env, "python"), *missing]
