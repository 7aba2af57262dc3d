"""Daemon settings a user can read and change while the daemon runs (`gpuherd config`).

Each is kept in the store as text, so it survives restarts, and parsed into the Policy.
"""

from __future__ import annotations

import logging
import math
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from gpuherd.config_counts import AUTO, count, cpu_jobs, project_limits, retries, show_limits
from gpuherd.config_hook import hook_command, hook_problem
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

log = logging.getLogger("gpuherd.daemon")

_PREFIX = "config."
DEFAULT = "default"
"""The value that puts any setting back to its default, kept as such (`config unset NAME`
sets it): `reserve-after`, `retries` and others have no `auto`, and their default was only
to be had by knowing it and setting it."""


_DECIMAL = r"[0-9]+(?:\.[0-9]*)?|\.[0-9]+"
"""A share's number: ASCII digits, as a count's (float() took `1_0%` and `١٠%` as 10%)."""


def _share(text: str, saved: bool = False) -> float:
    """The share `text` says (`10%`, `0.1`, blanks aside), NaN where it says none. A value
    `saved` before is read as float() took it: refused at the load, it were dropped."""
    raw = text.strip()
    number = raw[:-1].strip() if raw.endswith("%") else raw
    if not saved and not re.fullmatch(_DECIMAL, number):
        return math.nan
    try:
        value = float(number)
    except ValueError:
        return math.nan
    return value / 100 if raw.endswith("%") else value


def _fraction(text: str, saved: bool = False) -> float:
    value = _share(text, saved)
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


_RAM_FORMS = (
    "use a size like 8GiB (a number alone is bytes), a share of this machine's memory like "
    "20% (from 0%, under 100%), or 0 or none to turn it off"
)
"""What keep-ram takes, said by each of its refusals: keep-free's said "or a fraction like
0.1", which keep-ram refuses, and parse_size's "must be greater than zero" of 0, its default."""


def _ram(text: str, saved: bool = False) -> int:
    """A size, or a share of this machine's memory (20%, as gpulimit's SAFETY_KEEP_MEMORY).
    No job at all starts while less than it is available (core/placement.py), with --ram or
    without: one the machine can never have available is refused, all of its memory or
    more, or so near it (`99.99%`) that what this process itself holds is missing from it.
    The refusal said "no job with --ram could start", and 99.99% was taken. In ASCII
    digits, unless `saved` (as _share)."""
    raw = text.strip()
    if raw.lower() in ("0", "none"):  # (any case, as every other setting's none)
        return 0
    total = host_memory_total()
    share = raw.endswith("%")
    if share:
        size = int(value * total) if 0 <= (value := _share(raw, saved)) < 1 else -1
    else:
        try:
            size = parse_size(raw, allow_zero=True) if saved or raw.isascii() else -1
        except ValueError:
            size = -1
    if size < 0:
        raise ValueError(f"invalid {'share' if share else 'size'} '{text}': {_RAM_FORMS}")
    own = _own_resident()
    if size >= total - own:
        said = f"all this machine's memory ({format_size(total)}) or more"
        if size < total:
            said = f"more than this machine's {format_size(total)} less the "
            said += f"{format_size(own)} the daemon itself holds"
        raise ValueError(
            f"{format_size(size)} is {said}: no job could start (none starts while less "
            "than keep-ram is available); give less, or a share like 20%"
        )
    return size


def _own_resident() -> int:
    """The memory this process holds (resident), which no job can ever have: 0 where
    /proc does not say it."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _grace(text: str) -> float | str:
    """As `submit --grace` reads it (0 is refused there too: SIGKILL at once is a stop's
    choice, `kill --grace 0`), or auto (10s)."""
    return AUTO if text.strip().lower() == AUTO else parse_duration(text)


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
        load=partial(_fraction, saved=True),
    ),
    "keep-ram": Setting(
        "keep_ram",
        _ram,
        lambda v: format_size(v) if v else "0",
        "host memory that must stay available after a job's --ram is taken, e.g. 8GiB or 20%",
        load=partial(_ram, saved=True),
    ),
    "reserve-after": Setting(
        "reserve_after",
        parse_duration,
        format_given,  # (as given: `2s`, `5m`; format_duration's `2.0s`, `5m00s` are measured)
        "how long a job that does not fit waits before it reserves GPUs against smaller jobs",
    ),
    "max-running": Setting(
        "max_running",
        count,
        lambda v: "none" if v is None else str(v),
        "at most this many jobs run at once (none = no cap)",
        load=partial(count, saved=True),
    ),
    "cpu-jobs": Setting(
        "cpu_jobs",
        cpu_jobs,
        lambda v: "none" if v is None else str(v),
        "at most this many CPU-only jobs (--gpus 0) run at once (auto = one per core of "
        "this machine, no cap on a Ray cluster; none = no cap)",
        load=partial(cpu_jobs, saved=True),
    ),
    "project-limits": Setting(
        "project_limits",
        project_limits,
        show_limits,
        "at most N jobs of a project (--project) run at once: PROJECT=N,... (none = no "
        "limits; the whole list is set at once)",
        load=partial(project_limits, saved=True),
        off="give PROJECT=N,... (lr-sweep=2,eval=1), or none for no limits",
    ),
    "retries": Setting(
        "retries",
        retries,
        str,
        "how often a failed job runs again when it was submitted without --retries",
        load=partial(retries, saved=True),
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
        hook_command,
        lambda v: v or "none",
        "shell command run when a job that ran ends, told of it by GPUHERD_JOB_* "
        "variables (none = no command)",
        hook_problem,
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
        share = _percent(_fraction(share, saved=True))
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
