"""The rows of herd.db a daemon start puts right when a crash or a hand edit left them damaged
and a safe value loses nothing: each GPU's row (devices table), the removed GPUs, the on-end
hooks' mark and the queue's pause. Each is logged as a warning (daemon.log) with the value
found and what the start did, and the row is rewritten, so that the running daemon, and the
next start, read a row gpuherd wrote; the removed GPUs, which the running daemon reads
again, are put right so there too (read_mended). (The executor and the GPUs a start uses are
refused instead while a guess could lose or misplace jobs: daemon_executor.py.)"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from gpuherd.saved_settings import (
    HOOKS_THROUGH,
    QUEUE_PAUSED,
    REMOVED_GPUS,
    DamagedSetting,
    parse_hooks_through,
    parse_paused,
    parse_removed,
)
from gpuherd.store import Store

log = logging.getLogger("gpuherd.daemon")

_MENDS: dict[str, tuple[Callable[[str | None], Any], str | None, str]] = {
    REMOVED_GPUS: (
        parse_removed,
        "{}",
        "forgotten (GPUs removed before stay out until a start's --gpus or --fake-gpus names "
        "them; `gpuherd gpus remove N` removes one again)",
    ),
    HOOKS_THROUGH: (
        parse_hooks_through,
        None,  # (now: set as the start mends it)
        "the on-end command runs for jobs that end from now on, not for those that ended "
        "while no daemon ran",
    ),
    QUEUE_PAUSED: (
        parse_paused,
        "1",
        "the queue is paused, which starts no job by a guess: `gpuherd resume` dispatches",
    ),
}
"""Per setting: its parser, the value that replaces a damaged row, and what that does."""


def read_mended(store: Store, key: str) -> Any:
    """The setting `key` (one of _MENDS) as parsed; damaged, it is put right first, logged.
    Also for the rows the running daemon reads again (the removed GPUs: removed_gpus.py): one
    a hand edit damaged meanwhile refused `daemon status` and `gpus remove` with its one line,
    which nothing but a restart put right."""
    parse, safe, meaning = _MENDS[key]
    try:
        return parse(store.get_setting(key))
    except DamagedSetting as exc:
        log.warning("%s: %s", exc, meaning)
        mended = safe if safe is not None else repr(time.time())
        store.set_setting(key, mended)
        return parse(mended)


def mend_settings(store: Store) -> None:
    """Put right the damaged rows this module is for, each logged."""
    for key in _MENDS:
        read_mended(store, key)
    for damaged in store.mend_devices():
        index = damaged.mended.index
        if damaged.column == "state":
            meaning = (
                f"drained (running jobs go on, nothing new starts there): `gpuherd gpus enable "
                f"{index}` uses it again"
            )
        elif damaged.column == "slots":
            meaning = f"1 slot: `gpuherd gpus add {index} --slots N` gives it more"
        else:
            meaning = "no cap on --mem jobs there"
        log.warning("%s: %s", damaged, meaning)
