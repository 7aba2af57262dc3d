"""Which executor and which GPUs a daemon start runs jobs on (daemon.py): from its options,
or the last start's, remembered in herd.db; and a switch of executor refused while jobs run
on the other, which a daemon on this one could not reach."""

from __future__ import annotations

import json
import logging

from gpuherd.core.model import MAX_SLOTS
from gpuherd.core.states import JobState
from gpuherd.core.units import plural
from gpuherd.errors import HerdError
from gpuherd.gpus import GpuProbe, make_probe
from gpuherd.gpus.choice import GpuChoice
from gpuherd.removed_gpus import keep_removed, settle_removed
from gpuherd.saved_settings import (
    EXECUTOR,
    NEVER_SAVED,
    PROBE,
    REMOVED_GPUS,
    DamagedSetting,
    SavedExecutor,
    parse_executor,
    parse_probe,
    shown,
)
from gpuherd.store import DeviceConfig, Store
from gpuherd.store_tables import DamagedDeviceRow, device_config

log = logging.getLogger("gpuherd.daemon")

NAME_THE_CLUSTER = (
    "give --address HOST:PORT (the head's GCS address, which `ray start --head` printed; port "
    "6379 by default), or --address auto for the cluster Ray finds from here (RAY_ADDRESS, "
    "else the one started last on this machine)"
)


def last_executor(store: Store, named: bool, abandon: bool) -> SavedExecutor | None:
    """The executor the last start saved; None when its row is damaged and no job is left
    to lose: this start's choice (the local executor, without options) then replaces it,
    with a warning in the log. While jobs run (or are paused) where it said, a guess would
    count them lost and run their retries while they go on (on a Ray cluster, say): refused,
    unless the start names the executor (`named`: --executor or --address, the user saying
    where they run) or gives them up (`abandon`: --abandon-running)."""
    try:
        return parse_executor(store.get_setting(EXECUTOR))
    except DamagedSetting as exc:
        live = store.count_jobs(LIVE)
        if live and not named and not abandon:
            runs, it = ("runs", "it") if live == 1 else ("run", "they")
            raise HerdError(
                f"{exc}, and {plural(live, 'job')} still {runs} on the executor it named: "
                f"start on the one {it} {runs} on, `gpuherd daemon start --executor local` "
                "(this machine) or `gpuherd daemon start --executor ray --address HOST:PORT` "
                "(a Ray cluster), which saves it again"
            ) from None
        log.warning("%s: replaced by this start's executor", exc)
        return None


def choose_executor(
    saved: SavedExecutor | None, kind: str | None, address: str | None, local_options: bool
) -> tuple[str, str | None, bool]:
    """The executor from the options, or from the last start (`saved`: last_executor; a
    daemon restarted without options must re-attach to the jobs where they run, never count
    them lost), and whether its address is the last start's. Saved by `remember_executor`
    once it is set up."""
    saved = saved or NEVER_SAVED
    remembered = False
    if kind is None:
        local = local_options and address is None
        kind = "ray" if address is not None else "local" if local else saved.kind
    if kind == "ray":
        if local_options:  # (with --address, `--executor local` was refused next in turn)
            here = "use --executor local" if address is None else "drop --address"
            raise ValueError(
                "--gpus, --fake-gpus and --slots are for the local executor (a Ray cluster's "
                f"GPUs are the ones its nodes declare): drop them, or {here} to run jobs here"
            )
        if address is not None and not address.strip():
            raise ValueError(f"--address is empty: {NAME_THE_CLUSTER}")
        remembered = address is None and bool(saved.address)
        address = address or saved.address
        if address is None:  # never "auto" on a guess: it may find another user's cluster
            raise ValueError(f"--executor ray needs the cluster's address: {NAME_THE_CLUSTER}")
    elif address is not None:
        raise ValueError(
            "--address is for --executor ray: drop --executor local to run jobs on the Ray "
            "cluster there, or drop --address to run them on this machine"
        )
    return kind, address, remembered


LIVE = (JobState.RUNNING, JobState.PAUSED)
"""The states of the jobs that run on the executor: a daemon on another cannot reach them."""


def refuse_a_switch_under_jobs(store: Store, before: str, kind: str, abandon: bool) -> None:
    """A daemon on another executor than the last start's cannot reach the jobs that run on
    that one: it counted them lost and, with --retries, ran them again while they went on
    (twice at once, on a cluster node and here). Refused while any runs, unless `abandon`
    (their cluster is gone for good, say): then they are counted lost, as before."""
    if before == kind or abandon:
        return
    refuse_to_leave_running_jobs(store, f"the {before} executor", f"the {kind} executor")


def refuse_to_leave_running_jobs(store: Store, there: str, here: str) -> None:
    """Refuse a daemon on `here` while jobs still run `there` (another executor, another Ray
    cluster), out of its reach: see refuse_a_switch_under_jobs."""
    live = store.count_jobs(LIVE)
    if live:
        # (one job: "it", "its"; a paused one counts: it is on `there` all the same)
        runs, them, their, go = (
            ("runs", "it", "its", "it goes") if live == 1 else ("run", "them", "their", "they go")
        )
        raise HerdError(
            f"{plural(live, 'job')} still {runs} on {there}, which a daemon on {here} cannot "
            f"reach: it would count {them} lost and run {their} retries while {go} on. Start "
            f"as before (`gpuherd daemon start` without options), let {them} end or kill "
            f"{them}, then switch; or add --abandon-running to count {them} lost ({their} "
            "processes may go on there)"
        )


def remember_executor(store: Store, kind: str, address: str | None) -> None:
    """Only an executor that was set up replaces the last start's choice (a mistyped or dead
    address must not take the place of a working one)."""
    store.set_setting(EXECUTOR, json.dumps({"kind": kind, "address": address}))


def choose_probe(store: Store, choice: GpuChoice, slots: int | None) -> tuple[GpuProbe, list[int]]:
    """The probe from the options (or GPUHERD_FAKE_GPUS), or from the last start, and the
    removed GPUs the options use again (settle_removed); the device table follows it. The
    variable is the user's intent now, so it replaces the last start's GPUs and is
    remembered as --fake-gpus would be. While the options (or the variable, exported for
    good) name the GPUs the last start used, as a script or a service unit gives them at
    every start, a start is a restart as without options: what `gpuherd gpus` changed
    (slots, GPUs added or removed) is kept; before, an option reset the slots (yet kept
    the drains and removals). Only --slots, the user asking for slots now, sets them all
    afresh from the options."""
    if slots is not None and not 1 <= slots <= MAX_SLOTS:
        raise ValueError(f"--slots must be 1 to {MAX_SLOTS}, got {slots}")
    saved = _last_gpus(store, choice)
    asked = {"gpus": choice.gpus, "fake_gpus": choice.fake_gpus}
    anew = _back_from_cluster(store)
    if saved and (not choice.given or (saved == asked and slots is None)):
        try:
            probe, slot_map = make_probe(saved["gpus"], saved["fake_gpus"], choice.origin)
        except ValueError as exc:  # (a --fake-gpus file gone since, or a value edited in)
            found = shown(json.dumps(saved))
            raise HerdError(
                f"the GPUs the last start used (herd.db's `{PROBE}` setting: {found}) cannot "
                f"be used: {exc}; {_NAME_THE_GPUS}"
            ) from None
        if anew:  # (the cluster's GPUs were dropped: the last local start's come back)
            store.replace_devices({i: n * (slots or 1) for i, n in slot_map.items()})
        elif slots is not None:
            slot_map = dict.fromkeys((d.index for d in store.devices()), slots)
            store.replace_devices(slot_map, keep_states=True)
        return probe, []
    probe, slot_map = make_probe(choice.gpus, choice.fake_gpus, choice.origin)
    if slots is not None:
        slot_map = {index: n * slots for index, n in slot_map.items()}
    with store.transaction():  # (a start cut short here must not use a removed GPU again)
        store.replace_devices(slot_map, keep_states=True)
        back = settle_removed(store, slot_map, same_setup=saved == asked)
        store.set_setting(PROBE, json.dumps(asked))
    return probe, back


LOCAL_GPUS_ASIDE = "local_gpus_aside"
"""herd.db's setting of the local executor's GPUs (each one's slots, state and cap on --mem
jobs) and of the GPUs removed there, set aside as a start switches to a Ray cluster, whose GPUs
take their place (ray_cluster.configure); put back by a local start after it."""


def set_local_gpus_aside(store: Store) -> None:
    """Keep the local executor's GPUs and removed GPUs for the next local start (the table
    that follows is the cluster's: `_back_from_cluster`)."""
    devices = [[d.index, d.slots, d.state.value, d.max_jobs] for d in store.devices()]
    removed = store.get_setting(REMOVED_GPUS)
    store.set_setting(LOCAL_GPUS_ASIDE, json.dumps({"devices": devices, "removed": removed}))


def _back_from_cluster(store: Store) -> bool:
    """After a start on a Ray cluster, whose GPUs (and GPUs removed there) took the place of
    the local ones: put the local ones back, as set aside at the switch. Before, the
    cluster's stayed: a restart with the last local start's options (taken as a plain
    restart) kept the cluster's GPUs (`--fake-gpus 4` gave 2), and a GPU removed on one
    executor was out, or "in use again", on the other. True when there was nothing to put
    back (a home whose first start was on a cluster, or switched by an older gpuherd): the
    cluster's are dropped, and the GPUs are to be configured anew."""
    try:
        if parse_executor(store.get_setting(EXECUTOR)).kind != "ray":
            return False
    except DamagedSetting:  # (a start that names its executor: taken as it is)
        return False
    # (kept after a start that fails later: the next one puts them back again)
    text = store.get_setting(LOCAL_GPUS_ASIDE)
    with store.transaction():
        store.replace_devices({})
        keep_removed(store, {})
        if not text:
            return True
        try:
            aside = json.loads(text)
            for row in aside["devices"]:
                store.put_device(_device(row))
            if aside["removed"] is not None:
                store.set_setting(REMOVED_GPUS, str(aside["removed"]))
        except (ValueError, TypeError, KeyError) as exc:  # (a hand edit's: start_mends words)
            log.warning("herd.db's `%s` setting is damaged (%s): not used", LOCAL_GPUS_ASIDE, exc)
            store.replace_devices({})
            keep_removed(store, {})
            return True
    return False


def _device(row: list[object]) -> DeviceConfig:
    index, slots, state, max_jobs = row
    if not isinstance(index, int) or isinstance(index, bool) or index < 0:
        raise ValueError(f"{index!r} is no GPU index")
    try:
        return device_config(index, slots, state, max_jobs)
    except DamagedDeviceRow as exc:  # (a value put right, as a start puts a device row right)
        return exc.mended


_NAME_THE_GPUS = (
    "start with the GPUs to use, `gpuherd daemon start --gpus 0,1` (or --fake-gpus N without "
    "GPUs), which saves them again"
)


def _last_gpus(store: Store, choice: GpuChoice) -> dict[str, str | None] | None:
    """The GPUs the last start saved (None: none saved). A damaged row is refused when the
    start names no GPUs: a guess (all those NVML finds) could put jobs on a GPU the user had
    left out, someone else's; a start that names them replaces it (a warning in the log)."""
    try:
        return parse_probe(store.get_setting(PROBE))
    except DamagedSetting as exc:
        if not choice.given:
            raise HerdError(f"{exc}: {_NAME_THE_GPUS}") from None
        log.warning("%s: replaced by this start's GPUs", exc)
        return None
