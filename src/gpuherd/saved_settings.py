"""The settings herd.db keeps for the next daemon start (its `meta` rows), each parsed here and
nowhere else. A row a crash or a hand edit left damaged stopped `gpuherd daemon start` with
Python's words ("Expecting value: line 1 column 1 (char 0)", "'list' object has no attribute
'get'") or a traceback; it is now a DamagedSetting, one line that names the row and the value
found, which the start either refuses with the way to mend it or logs as it falls back on a
value that loses nothing (start_mends.py, daemon_executor.py).

Light (no store, no sqlite3): start_hint reads the same rows on the CLI's error path."""

from __future__ import annotations

import logging
import math
import sqlite3
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeGuard

from gpuherd.core.text import ascii_digits
from gpuherd.errors import HerdError
from gpuherd.json_parse import NotJson, parse_json
from gpuherd.listen_address import parse_address

if TYPE_CHECKING:
    from gpuherd.store import Store

log = logging.getLogger("gpuherd.daemon")

EXECUTOR = "executor"
"""Where the last start ran jobs: {"kind": "local" | "ray", "address": the cluster's}."""
PROBE = "probe"
"""The GPUs the last start named: {"gpus": --gpus, "fake_gpus": --fake-gpus} (null: none)."""
REMOVED_GPUS = "removed_gpus"
"""The removed GPUs' configurations: {"index": [slots, cap on --mem jobs or null]}."""
HOOKS_THROUGH = "hooks.through"
"""When the on-end command was set (epoch seconds): jobs that ended before, never hooked."""
QUEUE_PAUSED = "queue_paused"
""""1" while the queue is paused (`gpuherd pause`), "0" once resumed."""
LISTEN = "listen"
"""Where the last daemon listened on TCP, HOST:PORT ("": it did not): `daemon restart` with
no daemon running listens there again (daemon_home.bind_tcp)."""


class DamagedSetting(HerdError):
    """A setting whose row in herd.db is not one gpuherd writes: its key, the value found and
    what is wrong with it, as one line."""

    def __init__(self, key: str, found: str, why: str) -> None:
        super().__init__(f"herd.db's `{key}` setting is damaged (found {shown(found)}: {why})")
        self.key = key


def shown(found: str) -> str:
    """A value found in herd.db as a message quotes it: cut short, as a damaged row may be a
    whole file pasted in."""
    return repr(found if len(found) <= 60 else found[:57] + "...")


def _json(key: str, text: str) -> Any:
    try:
        return parse_json(text)
    except NotJson as exc:
        raise DamagedSetting(key, text, str(exc)) from None


@dataclass(frozen=True)
class SavedExecutor:
    kind: str = "local"
    address: str | None = None
    """The Ray cluster's address, as joined (never "auto"); None for the local executor."""


NEVER_SAVED = SavedExecutor()
"""A home no daemon started in: the local executor, as a start without options chooses."""


def parse_executor(text: str | None) -> SavedExecutor:
    """The `executor` row (None: there is none); DamagedSetting when it is not one that
    daemon_executor.remember_executor writes."""
    if text is None:
        return NEVER_SAVED
    value = _json(EXECUTOR, text)
    if not isinstance(value, dict):
        raise DamagedSetting(EXECUTOR, text, 'not an object like {"kind": "local"}')
    kind, address = value.get("kind"), value.get("address")
    if kind not in ("local", "ray"):
        raise DamagedSetting(EXECUTOR, text, "its kind is neither local nor ray")
    if kind == "ray" and not (isinstance(address, str) and address.strip()):
        raise DamagedSetting(EXECUTOR, text, "no Ray cluster's address in it")
    if kind == "local" and address is not None:
        raise DamagedSetting(EXECUTOR, text, "an address for the local executor")
    return SavedExecutor(kind, address)


def parse_probe(text: str | None) -> dict[str, str | None] | None:
    """The `probe` row as daemon_executor.choose_probe compares it with a start's options:
    {"gpus": ..., "fake_gpus": ...}; None when there is none (no start saved GPUs)."""
    if text is None:
        return None
    value = _json(PROBE, text)
    if not isinstance(value, dict):
        raise DamagedSetting(PROBE, text, 'not an object like {"fake_gpus": "2"}')
    saved = {name: value.get(name) for name in ("gpus", "fake_gpus")}
    if not all(v is None or isinstance(v, str) for v in saved.values()):
        raise DamagedSetting(PROBE, text, "its gpus or fake_gpus is not a string")
    if saved["gpus"] is not None and saved["fake_gpus"] is not None:
        raise DamagedSetting(PROBE, text, "it names both gpus and fake_gpus")
    return saved


def parse_removed(text: str | None) -> dict[int, tuple[int, int | None]]:
    """The `removed_gpus` row: each removed GPU's slots and cap on --mem jobs, by index."""
    if not text:
        return {}
    value = _json(REMOVED_GPUS, text)
    if not isinstance(value, dict):
        raise DamagedSetting(REMOVED_GPUS, text, 'not an object like {"1": [1, null]}')
    removed = {}
    for index, kept in value.items():
        if not (
            ascii_digits(index)
            and isinstance(kept, list)
            and len(kept) == 2
            and is_count(kept[0])
            and (kept[1] is None or is_count(kept[1]))
        ):
            raise DamagedSetting(REMOVED_GPUS, text, f"GPU {index}'s entry is not [slots, cap]")
        removed[int(index)] = (int(kept[0]), kept[1])
    return removed


def is_count(value: object, most: float = math.inf) -> TypeGuard[int]:
    """Whether a value read back is a whole number from 1 to `most` (JSON's true is not)."""
    return isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= most


def parse_hooks_through(text: str | None) -> float | None:
    """The `hooks.through` row (None: the on-end command was never set)."""
    if text is None:
        return None
    try:
        through = float(text)
    except ValueError:
        through = math.nan
    if not math.isfinite(through):
        raise DamagedSetting(HOOKS_THROUGH, text, "not a time in seconds")
    return through


def parse_paused(text: str | None) -> bool:
    """The `queue_paused` row (None: the queue was never paused)."""
    if text not in (None, "0", "1"):
        raise DamagedSetting(QUEUE_PAUSED, str(text), "neither 1 (paused) nor 0")
    return text == "1"


def parse_listen(text: str | None) -> str | None:
    """The `listen` row: an address to listen at again, or None (the last daemon did not)."""
    if not text:
        return None
    try:
        parse_address(text)
    except HerdError:
        raise DamagedSetting(LISTEN, text, "not an address like 127.0.0.1:8888") from None
    return text


def keep_listen(store: Store, address: str | None) -> str | None:
    """Save where the daemon listens as `gpuherd ui` (or `ui --stop`) changed it: saved at a
    start and a clean stop only, a restart after a crash undid the change (a listener closed
    opened again). None once saved; else why not, logged and said: the change stands."""
    try:
        store.set_setting(LISTEN, address or "")
        return None
    except (sqlite3.Error, HerdError) as exc:  # (locked by another program, a full disk)
        said = f"where the dashboard listens is not saved in herd.db ({exc}): a clean stop "
        said += "saves it; after a crash, `gpuherd daemon restart` listens as before this change"
        log.warning("%s", said)
        return said
