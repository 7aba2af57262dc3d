"""Daemon settings a user can read and change while the daemon runs (`gpuherd config`).

Each is kept in the store as text, so it survives restarts, and parsed into the Policy.
"""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from gpuherd.core.int64 import LARGEST_SAID
from gpuherd.core.log_caps import parse_log_cap, show_log_cap
from gpuherd.core.model import ForeignMode, Policy
from gpuherd.core.units import (
    format_given,
    format_size,
    parse_duration,
    parse_size,
)
from gpuherd.errors import InvalidValue, unknown_setting
from gpuherd.host_memory import host_memory_total
from gpuherd.saved_settings import DamagedSetting
from gpuherd.store import Store
from gpuherd.store_rows import LARGEST

log = logging.getLogger("gpuherd.daemon")

_PREFIX = "config."
AUTO = "auto"
"""A value that means the setting's default where the daemon runs (`cpu-jobs auto`)."""
DEFAULT = "default"
"""The value that puts any setting back to its default, kept as such (`config unset NAME`
sets it): `reserve-after`, `retries` and others have no `auto`, and their default was only
to be had by knowing it and setting it."""


def _fraction(text: str) -> float:
    raw = text.strip()
    try:
        value = float(raw[:-1]) / 100 if raw.endswith("%") else float(raw)
    except ValueError:
        value = math.nan
    if not 0 <= value < 1:  # NaN too
        # (said as taken: 99.9% is, and `1` is all of it, not 1%; it said `(0-99%)`)
        raise ValueError(
            f"invalid fraction '{text}': use a percentage like 10% (from 0%, under 100%), "
            "or a fraction like 0.1"
        )
    return value


def _percent(fraction: float) -> str:
    """A share as `keep-free` and `keep-ram` show it: 0.1 -> `10%`."""
    return f"{fraction * 100:g}%"


def _ram(text: str) -> int:
    """A size, or a share of this machine's memory (20%, as gpulimit's SAFETY_KEEP_MEMORY)."""
    if text.strip() in ("0", "none"):
        return 0
    total = host_memory_total()
    size = int(_fraction(text) * total) if text.strip().endswith("%") else parse_size(text)
    if size >= total:
        raise ValueError(
            f"{format_size(size)} is all this machine's memory ({format_size(total)}) or more: "
            "no job with --ram could start; give less, or a share like 20%"
        )
    return size


def _whole(text: str, least: int, or_else: str = "") -> int:
    """A whole number from `least` up to what the store holds: a larger one, saved, made
    every job that took it fail to submit ("a number in the request is too large")."""
    try:
        value = int(text)
    except ValueError:
        value = least - 1
    if not least <= value <= LARGEST:
        raise ValueError(
            f"invalid count '{text}': use a number from {least} to {LARGEST_SAID}{or_else}"
        )
    return value


def _count(text: str, words: str = "or none (no cap)") -> int | None:
    """A count from 1, or none; a refusal names the `words` taken beside a number."""
    if text.strip().lower() in ("none", "unlimited"):
        return None
    # From 1: 0 meant "no cap", the opposite of what it says.
    return _whole(text, 1, f", {words}")


def _retries(text: str) -> int:
    return _whole(text, 0)


def _grace(text: str) -> float | str:
    """As `submit --grace` reads it (0 is refused there too: SIGKILL at once is a stop's
    choice, `kill --grace 0`), or auto (10s)."""
    return AUTO if text.strip().lower() == AUTO else parse_duration(text)


def _command(text: str) -> str | None:
    command = text.strip()
    return None if command.lower() in ("", "none") else command


def _shell_syntax(command: str | None) -> str | None:
    """What the hooks' shell (`sh -n`) says of `command`, None when it reads it: a hook that
    cannot parse (`echo "unterminated`) failed only once a job ended, in hooks.log."""
    import subprocess  # deferred: the daemon loads settings at every start; this is rare

    from gpuherd.executors.base import SpawnError, job_shell

    if command is None:
        return None
    try:
        shell = job_shell(os.environ)  # as hooks.py runs the hooks: the daemon's environment
    except SpawnError:
        return None  # a GPUHERD_SHELL that is not a program: logged when a hook starts
    try:
        proc = subprocess.run(
            [shell, "-n", "-c", command, "sh"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=10,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None  # no verdict: the hook's own run will tell
    said = [line.strip() for line in proc.stderr.decode(errors="replace").splitlines()]
    if proc.returncode == 0:
        return None
    complaint = next((line for line in said if line), f"exit status {proc.returncode}")
    return f"the hooks' shell {shell} cannot parse it: {complaint}; fix it and set it again"


def _project_limits(text: str, saved: bool = False) -> tuple[tuple[str, int], ...]:
    """`lr-sweep=2,eval=1` (none = no limits): at most N jobs of each project at once. A
    project given twice is refused, and a name with `=` in it (`a=1=2`, a typo, was taken as
    project `a=1`), unless `saved`: a value saved before those refusals is read as it was
    taken (a project at its last count; the last `=` splits)."""
    if text.strip().lower() in ("", "none"):
        return ()
    limits: dict[str, int] = {}
    for item in text.split(","):
        name, sep, count = item.strip().rpartition("=")
        name, count = name.strip(), count.strip()
        # (int() raises on a string of over 4300 digits: such a count is refused here.)
        number = int(count) if count.isdecimal() and len(count) < 40 else 0
        if not sep or not name or not 1 <= number <= LARGEST:
            raise ValueError(
                f"invalid limit '{item.strip()}': use PROJECT=N with N from 1 to {LARGEST_SAID}, "
                "comma-separated (lr-sweep=2,eval=1), or none"
            )
        words = item.split()
        if len(words) > 1 and all("=" in word for word in words) and not saved:
            # (`'g=1 h=2'`: not a project `g=1 h` with an `=` in it, as it was said to be)
            raise ValueError(
                f"invalid limit '{item.strip()}': separate limits with commas, not spaces: "
                f"{','.join(words)}"
            )
        if "=" in name and not saved:
            raise ValueError(
                f"invalid limit '{item.strip()}': a project name cannot contain '=': use "
                "PROJECT=N, comma-separated (lr-sweep=2,eval=1)"
            )
        if name in limits and not saved:  # (a typo, most likely)
            twice = f"{name}={limits[name]}, {name}={number}"
            raise ValueError(f"project '{name}' is given twice ({twice}): keep one")
        limits[name] = number
    return tuple(sorted(limits.items()))


def _show_limits(limits: tuple[tuple[str, int], ...]) -> str:
    return ",".join(f"{name}={count}" for name, count in limits) or "none"


def _cpu_jobs(text: str) -> int | str | None:
    if text.strip().lower() == AUTO:
        return AUTO
    return _count(text, "auto (one per core of this machine) or none (no cap)")


def _foreign(text: str) -> ForeignMode:
    try:
        return ForeignMode(text.strip().lower())
    except ValueError:
        modes = ", ".join(m.value for m in ForeignMode)
        raise ValueError(f"invalid mode '{text}': use one of {modes}") from None


@dataclass(frozen=True)
class Setting:
    field: str
    parse: Callable[[str], Any]
    show: Callable[[Any], str]
    help: str
    check: Callable[[Any], str | None] = lambda _value: None
    """What is wrong with a parsed value, checked when set (not when loaded, which keeps
    what was accepted)."""
    load: Callable[[str], Any] | None = None
    """How a saved value is read, where an older gpuherd accepted more than `parse` does
    (else `parse`): dropped at the load, a setting would be lost in silence."""
    off: str | None = None
    """How it is turned off on purpose, for a setting whose `parse` reads an empty value as
    off (kept for the values saved so): an empty one is refused when set, saying this."""


SETTINGS: dict[str, Setting] = {
    "foreign": Setting(
        "foreign",
        _foreign,
        str,
        "GPU processes gpuherd did not start: auto (busy for jobs without --mem, only their "
        "memory counts for jobs with --mem), memory, exclusive, ignore",
    ),
    "keep-free": Setting(
        "keep_free",
        _fraction,
        _percent,
        "share of each GPU's memory placement never hands out, e.g. 10%",
    ),
    "keep-ram": Setting(
        "keep_ram",
        _ram,
        lambda v: format_size(v) if v else "0",
        "host memory that must stay available after a job's --ram is taken, e.g. 8GiB or 20%",
    ),
    "reserve-after": Setting(
        "reserve_after",
        parse_duration,
        format_given,  # (as given: `2s`, `5m`; format_duration's `2.0s`, `5m00s` are measured)
        "how long a job that does not fit waits before it reserves GPUs against smaller jobs",
    ),
    "max-running": Setting(
        "max_running",
        _count,
        lambda v: "none" if v is None else str(v),
        "at most this many jobs run at once (none = no cap)",
    ),
    "cpu-jobs": Setting(
        "cpu_jobs",
        _cpu_jobs,
        lambda v: "none" if v is None else str(v),
        "at most this many CPU-only jobs (--gpus 0) run at once (auto = one per core of "
        "this machine, no cap on a Ray cluster; none = no cap)",
    ),
    "project-limits": Setting(
        "project_limits",
        _project_limits,
        _show_limits,
        "at most N jobs of a project (--project) run at once: PROJECT=N,... (none = no "
        "limits; the whole list is set at once)",
        load=partial(_project_limits, saved=True),
        off="give PROJECT=N,... (lr-sweep=2,eval=1), or none for no limits",
    ),
    "retries": Setting(
        "retries",
        _retries,
        str,
        "how often a failed job runs again when it was submitted without --retries",
    ),
    "grace": Setting(
        "grace",
        _grace,
        format_given,
        "time between SIGTERM and SIGKILL when a job submitted without --grace is stopped "
        "(auto = 10s)",
    ),
    "on-end": Setting(
        "on_end",
        _command,
        lambda v: v or "none",
        "shell command run when a job that ran ends, told of it by GPUHERD_JOB_* "
        "variables (none = no command)",
        _shell_syntax,
        off="give a command, or none to turn the hook off",
    ),
    "max-log-size": Setting(
        "max_log_size",
        parse_log_cap,
        show_log_cap,
        "a job submitted without --max-log-size is stopped once its stdout or stderr log "
        "grows past this, e.g. 10GiB (none = no cap)",
    ),
}


def load_policy(store: Store, defaults: Policy) -> Policy:
    """The saved settings over `defaults` (what a setting never set, or set to auto, is). A
    saved value this gpuherd does not read is not taken, and said (daemon.log): it fell back
    on the default in silence, the user's `config set retries 3` lost without a word."""
    policy = defaults
    for name, setting in SETTINGS.items():
        raw = store.get_setting(_PREFIX + name)
        try:
            value = _saved(setting, raw)
        except ValueError as exc:
            default = setting.show(getattr(defaults, setting.field))
            log.warning("%s", not_taken(name, raw, exc, f"{name} is {default} (its default)"))
            continue
        if value is not _UNSET:
            policy = _with(policy, setting, value, defaults)
    return policy


_UNSET = object()
"""A setting never set, or set back to its default (`config unset`)."""


def _saved(setting: Setting, raw: str | None) -> Any:
    """A saved value as read (ValueError: one this gpuherd does not read), or _UNSET."""
    if raw is None or raw.strip().lower() == DEFAULT:
        return _UNSET
    return (setting.load or setting.parse)(raw)


def not_taken(name: str, raw: str | None, why: ValueError, instead: str = "") -> str:
    """The line that says a setting's saved value is not taken, and the ways out. The row is
    kept as it is, not replaced by `default` as start_mends.py replaces its rows: this text is
    what the user set (a value cut short still says which), and may be one another gpuherd
    reads (a newer one's syntax, after a downgrade); replaced, it were lost for good. Said
    with what is in effect `instead` (the listing shows that value beside it)."""
    damaged = DamagedSetting(_PREFIX + name, str(raw), str(why))
    instead = f", {instead}" if instead else ""
    return (
        f"{damaged}: not taken{instead}; `gpuherd config set {name} VALUE` sets it again, "
        f"`gpuherd config unset {name}` keeps the default"
    )


def _with(policy: Policy, setting: Setting, value: Any, defaults: Policy) -> Policy:
    if value == AUTO:
        value = getattr(defaults, setting.field)
    return replace(policy, **{setting.field: value})


def describe(policy: Policy, store: Store) -> dict[str, dict[str, str]]:
    """Each setting's value in effect and help; and, where herd.db's row for it is one that
    is not taken (damaged), `not_taken`: that line (the value shown alone was the default,
    and the user who set another had no way to tell that theirs was not in effect)."""
    described = {}
    for name, setting in SETTINGS.items():
        raw = store.get_setting(_PREFIX + name)
        described[name] = {"value": _shown(setting, policy, raw), "help": setting.help}
        try:
            _saved(setting, raw)
        except ValueError as exc:
            described[name]["not_taken"] = not_taken(name, raw, exc)
    return described


def _shown(setting: Setting, policy: Policy, raw: str | None) -> str:
    """The value in effect; a share set as such (`keep-ram 20 %`) stays one, written as the
    value is (`20% (4.7 GiB)`). A value that is a share itself (`keep-free`) is said once:
    `10 %` or `10.0%` as set were `10 % (10%)`."""
    value = setting.show(getattr(policy, setting.field))
    share = (raw or "").strip()
    if not share.endswith("%") or value.endswith("%"):
        return value
    try:
        share = _percent(_fraction(share))
    except ValueError:  # one an older gpuherd kept that this one reads otherwise: as it is
        pass
    return f"{share} ({value})"


def change(store: Store, policy: Policy, name: str, value: str, defaults: Policy) -> Policy:
    """The policy with `name` set to `value`, saved; HerdError names what is wrong."""
    setting = SETTINGS.get(name)
    if setting is None:
        raise unknown_setting(name, SETTINGS)
    if value.strip().lower() == DEFAULT:
        store.set_setting(_PREFIX + name, DEFAULT)
        return replace(policy, **{setting.field: getattr(defaults, setting.field)})
    # `config set on-end "$HOOK"` with HOOK unset is not an order to turn the hook off, as
    # `edit --name ""` is no name (the others' parse already refuses an empty value).
    if setting.off is not None and not value.strip():
        raise InvalidValue(f"{name} is empty: {setting.off}")
    try:
        parsed = setting.parse(value)
    except ValueError as exc:
        raise InvalidValue(f"{name}: {exc}") from None
    problem = setting.check(parsed)
    if problem is not None:
        raise InvalidValue(f"{name}: {problem}")
    store.set_setting(_PREFIX + name, value)
    return _with(policy, setting, parsed, defaults)
