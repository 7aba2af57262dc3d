"""The GPUs removed with `gpuherd gpus remove`, with the slots they had: kept in herd.db's
`removed_gpus` setting (saved_settings.parse_removed reads it; start_mends puts a damaged one
right), so across restarts, for `gpus add` without --slots to give a GPU back its own, and for
a start to keep them out."""

from __future__ import annotations

import json
from collections.abc import Iterable

from gpuherd.core.model import DeviceState
from gpuherd.saved_settings import REMOVED_GPUS
from gpuherd.start_mends import read_mended
from gpuherd.store import DeviceConfig, Store


def removed_gpus(store: Store) -> dict[int, DeviceConfig]:
    """The GPUs removed, with the slots they had (none, said in daemon.log, where the row is
    damaged: read while the daemon runs, a hand edit may have left it so)."""
    saved: dict[int, tuple[int, int | None]] = read_mended(store, REMOVED_GPUS)
    return {i: DeviceConfig(i, n, DeviceState.ENABLED, cap) for i, (n, cap) in saved.items()}


def keep_removed(store: Store, removed: dict[int, DeviceConfig]) -> None:
    saved = {i: [d.slots, d.max_jobs] for i, d in sorted(removed.items())}
    store.set_setting(REMOVED_GPUS, json.dumps(saved))


def settle_removed(store: Store, named: Iterable[int], same_setup: bool) -> list[int]:
    """After a start's --gpus or --fake-gpus configured the GPUs `named`
    (daemon_executor.choose_probe): the GPUs removed (`gpuherd gpus remove`) that it uses
    again. The last start's setup again (`same_setup`: a restart from a script or a service
    unit) keeps them out, as a start without options does. Another setup is the user's
    choice of GPUs now: those of them it names are used again, and the others are forgotten
    as removed, as a drain goes with a GPU left out (a job's GPU left out is then
    `unconfigured`, not `removed`). Before, a GPU named again was used, yet still called
    removed once a later start left it out."""
    removed = removed_gpus(store)
    if same_setup:
        for index in sorted(set(removed) & set(named)):
            store.remove_device(index)
        return []
    if removed:
        keep_removed(store, {})
    return sorted(set(removed) & set(named))
