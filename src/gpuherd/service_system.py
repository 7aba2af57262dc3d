"""The verbs on the queue as a whole, the GPUs, the settings and the daemon (not on jobs)."""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from gpuherd import __version__, config
from gpuherd.core.idspec import MAX_GPU_INDEX, format_ids
from gpuherd.core.int64 import fits
from gpuherd.core.model import DeviceState, JobSpec
from gpuherd.core.placement import Hold
from gpuherd.core.recovery import runs_unwatched
from gpuherd.core.states import JobState
from gpuherd.core.units import format_given, plural
from gpuherd.devices import local_time
from gpuherd.engine import Engine
from gpuherd.errors import Conflict, InvalidValue
from gpuherd.gpu_processes import RunKey
from gpuherd.home_header import home_moved, identity
from gpuherd.hooks import hooks_from_now
from gpuherd.service_reasons import unknown_gpus_named
from gpuherd.store import Store
from gpuherd.store_checkpoint import replaced_while_running
from gpuherd.wire import device_view


class SystemVerbs:
    """Part of `Service` (which sets these attributes)."""

    engine: Engine
    home: Path
    store: Store
    started_at: float
    stop_mode: str | None = None
    """How the daemon was asked to stop (`leave`, `drain` or `kill`); None while it serves."""
    last_word: str | None = None
    """What the daemon says as it exits, if anything (`left_running`)."""
    gpus_back: Sequence[int] = ()
    """GPUs removed (`gpuherd gpus remove`) that this start's --gpus or --fake-gpus uses
    again (devices.settle_removed): `daemon start` says so."""
    home_id: str | None = None
    """The home folder's DEV:INO, taken at the first status (the start's own poll), as
    api/own_home.py takes it: the folder renamed since is still this daemon's home."""

    def asked_to_stop(self, mode: str) -> None:
        """The daemon was asked to stop (`gpuherd daemon stop [--drain | --kill]`)."""
        self.stop_mode = mode
        self._changed("stopping")  # open pages show it at once, as they show a pause

    def left_running(self, left: dict[int, str]) -> None:
        """A stop with --kill leaves these jobs running, out of the executor's reach (why,
        each): the daemon's last word, which `gpuherd daemon stop` prints (daemon.py)."""
        ids = sorted(left)
        one = len(ids) == 1
        them = f"job {ids[0]}" if one else f"jobs {format_ids(ids)}"
        self.last_word = (
            f"{them} could not be killed: {'; '.join(sorted(set(left.values())))}. "
            f"{'Its' if one else 'Their'} kill is kept, and the next `gpuherd daemon start` "
            "carries it out: start the daemon again once the cluster answers; until then "
            f"{'it' if one else 'they'} may go on running"
        )

    def pause_queue(self, paused: bool) -> str:
        if not paused and self.engine.stopping:
            raise Conflict(
                "cannot resume dispatch while the daemon drains: it stops once its running "
                "jobs end, and the next `gpuherd daemon start` dispatches the queue again"
            )
        # Asked twice, the state asked for holds: said so, and no error (a script's resume
        # that runs whatever the queue's state, as `hold` of a held job says `already held`).
        if paused == self.engine.queue_paused:
            return (
                "queue already paused: running jobs go on, nothing new starts"
                if paused
                else "queue was not paused: nothing to resume"
            )
        self.engine.set_queue_paused(paused)
        return "queue paused: running jobs go on, nothing new starts" if paused else "queue resumed"

    def _starving(self, hold: Hold) -> str:
        """Why GPUs are kept for `hold`'s job, that no job behind it takes them (`gpus` said
        they were free while the jobs behind waited: only `ls` told why)."""
        job = self.store.get_job(hold.job_id)
        asked = plural(job.spec.gpus, "GPU") if job is not None else "its GPUs"
        waited = format_given(self.engine.policy.reserve_after)  # (a setting, as given)
        behind = "no job behind it starts there"
        return f"which has waited for {asked} past reserve-after ({waited}): {behind}"

    def gpus(self) -> dict[str, Any]:
        # By run (job, attempt), not by job: two runs of one job may share a GPU (a held run
        # beside its job's next attempt), each in a slot of its own (wire.device_view).
        runs_on: dict[int, list[RunKey]] = {}
        for live in self.engine.live.values():
            for index in live.gpus:
                runs_on.setdefault(index, []).append((live.job_id, live.attempt))
        # A run that the database did not know (a restored backup), and its job was held for,
        # holds its GPUs until it ends, whatever its job's state now (released, cancelled).
        reserved: dict[int, list[dict[str, Any]]] = {}
        runs = [run for run in self.engine.attempts.held_runs.values() if run.reservation]
        theirs = self.store.get_jobs([run.job_id for run in runs]) if runs else {}
        for run in runs:
            state = theirs[run.job_id].state if run.job_id in theirs else JobState.HELD
            why = runs_unwatched(run.attempt, run.pid, state)
            for index in run.reservation.gpus if run.reservation else ():
                runs_on.setdefault(index, []).append(run.key)
                entry = {"job": run.job_id, "job_id": run.job_id, "reason": why}  # (as runs')
                reserved.setdefault(index, []).append(entry)
        self._unknown_runs(runs_on, reserved)
        if (hold := self.engine.hold) is not None:  # kept for a starving job: placement.py
            entry = {"job": hold.job_id, "job_id": hold.job_id, "reason": self._starving(hold)}
            for index in sorted(hold.gpus):
                reserved.setdefault(index, []).append(entry)
        table = self.engine.devices
        rows = []
        for d in self.engine.device_listing():
            rows.append(device_view(d, runs_on.pop(d.index, []), table.processes(d.index)))
        # A GPU removed or lost while jobs run on it keeps its row until they end.
        for index, on_it in runs_on.items():
            device, why = table.unlisted(index)
            row = {**device_view(device, on_it, table.processes(index)), "state": why}
            # A lost GPU keeps its drain (it takes nothing new when seen again): said, as
            # `gpus drain` of it was accepted and then shown nowhere.
            row["draining"] = why == "lost" and device.state is DeviceState.DRAINING
            if table.reading(index) is None:  # its memory is unknown until it is seen again
                row["memory_total"] = None
            rows.append(row)
        held, by_memory = self._held()
        for row in rows:
            row.setdefault("draining", row["state"] == DeviceState.DRAINING.value)
            row["history"] = [list(sample) for sample in table.history.get(row["index"], ())]
            row["held"] = held.get(row["index"], 0)
            row["mem_runs"] = by_memory.get(row["index"], 0)
            row["reserved"] = reserved.get(row["index"], [])
        failure, missing = table.failure, table.missing()
        return {
            "probe": self._probe_line(),
            "probe_error": None if failure is None else failure.reason,
            "probe_failing_since": None if failure is None else failure.since,
            "read_at": table.read_at,
            "gpus": sorted(rows, key=lambda row: int(row["index"])),
            "missing": [d.index for d in missing],
            "missing_draining": [d.index for d in missing if d.state is DeviceState.DRAINING],
            "unused": table.unused(),
            # (`gpus remove 0 1` with GPU 1 removed already: removes 0, says so of 1)
            "removed": table.removed(),
            "adds_any": table.adds_any,
        }

    def _unknown_runs(
        self, runs_on: dict[int, list[RunKey]], reserved: dict[int, list[dict[str, Any]]]
    ) -> None:
        """A run of a job herd.db does not know (moved aside, restored) holds its GPUs too, said
        as a held job's run is (engine_unwatched.py)."""
        for key, run in self.engine.set_aside.unwatched.runs.items():
            entry = {"job": key[0], "job_id": key[0], "reason": run.reason}
            for index in run.held.gpus:
                runs_on.setdefault(index, []).append(key)
                reserved.setdefault(index, []).append(entry)

    def _held(self) -> tuple[dict[int, int], dict[int, int]]:
        """Bytes of each GPU gpuherd's jobs hold, as placement counts them: each job the
        larger of its --mem and its measured use, from its start (before it uses any); and
        how many of the runs on each share it by memory (--mem), not by a slot: `gpuherd
        gpus` tells jobs sharing a GPU from more jobs than its slots (core/gpu_slots.py)."""
        held: dict[int, int] = {}
        by_memory: dict[int, int] = {}
        for r in self.engine.reservations():  # (one per run)
            for index in r.gpus:
                held[index] = held.get(index, 0) + r.mem
                if r.shares and not r.exclusive:
                    by_memory[index] = by_memory.get(index, 0) + 1
        return held, by_memory

    def _probe_line(self) -> str:
        """The probe, what it sees that gpuherd does not use, and whether it fails now."""
        table = self.engine.devices
        line = table.probe.describe()
        if unused := table.unused():
            one = len(unused) == 1
            gpus = f"GPU {unused[0]}" if one else f"GPUs {format_ids(unused)}"
            it = "it" if one else "one"
            line += f"; {gpus} seen but not used (`gpuherd gpus add {unused[0]}` adds {it})"
        if (failure := table.failure) is not None:
            read = f"the reading of {local_time(table.read_at)}" if table.read_at else "no reading"
            line += f"; failing since {local_time(failure.since)}: {failure.reason}; showing {read}"
        return line

    def unknown_gpus_named(self, jobs: Iterable[tuple[int, JobSpec]]) -> list[str]:
        """A warning per --only-gpus of these jobs (id, spec) that names GPUs gpuherd does not
        have, beside some it has (service_reasons.unknown_gpus_named)."""
        return unknown_gpus_named(self.engine, jobs)

    def gpu_add(self, index: int, slots: int | None) -> str:
        """Use GPU `index`, or change its slots; without `slots` it keeps (or gets back)
        its own (devices.DeviceTable.add)."""
        before, now = self.engine.devices.add(gpu_index(index), slots)
        self._changed("gpus")
        if before is None:
            back = " (as before it was removed)" if slots is None and now.slots > 1 else ""
            return f"GPU {index} added with {plural(now.slots, 'slot')}{back}"
        was = "" if before.slots == now.slots else f" (was {before.slots})"
        text = f"GPU {index}: {plural(now.slots, 'slot')}{was}"
        if before.state is DeviceState.DRAINING:
            # `add` only changes the slots: enabling a drained GPU is its own, explicit verb.
            text += f"; still draining: `gpuherd gpus enable {index}` uses it again"
        return text

    def gpu_remove(self, index: int) -> str:
        if not self.engine.devices.remove(gpu_index(index)):
            # Asked twice: said so, exit 0, as `gpus drain` of a draining GPU (it was
            # refused, `nothing to remove`, exit 1, so a teardown script's removal failed).
            return f"GPU {index} is removed already: `gpuherd gpus add {index}` uses it again"
        self._changed("gpus")
        return f"GPU {index} removed; jobs running on it go on"

    def gpu_state(self, index: int, state: DeviceState) -> str:
        draining = state is DeviceState.DRAINING
        if self.engine.devices.set_state(gpu_index(index), state) is state:
            # Asked twice: said so, exit 0, as `hold` of a held job says `already held` (it
            # said `GPU 0 draining: ...` again, as though something had changed).
            already = "draining already" if draining else "enabled already (not drained)"
            return f"GPU {index} is {already}"
        self._changed("gpus")
        if draining:
            return f"GPU {index} draining: running jobs finish, nothing new starts there"
        return f"GPU {index} enabled"

    def config(self) -> dict[str, dict[str, str]]:
        return config.describe(self.engine.policy, self.store)

    def set_config(self, name: str, value: str) -> str:
        engine = self.engine
        defaults = engine.policy_defaults
        engine.policy = config.change(self.store, engine.policy, name, value, defaults)
        if name == "on-end":
            hooks_from_now(self.store)
        self._changed("config")
        engine.wake()
        return f"{name} = {config.describe(engine.policy, self.store)[name]['value']}"

    def _changed(self, what: str) -> None:
        """Tell watchers that the GPUs or settings changed: why each queued job waits may have
        (a job's page refreshes its reason on such a change)."""
        self.engine.changes.publish({"event": what})

    def status(self, pid: int, socket: str) -> dict[str, Any]:
        listing, missing = self.engine.device_listing(), self.engine.devices.missing()
        self.home_id = self.home_id or identity(self.home)
        return {
            "pid": pid,
            "socket": socket,
            "home": str(self.home),
            "home_id": self.home_id,  # (`daemon stop` of the home renamed knows it by this)
            "version": __version__,
            "uptime": time.time() - self.started_at,
            "queue_paused": self.engine.queue_paused,
            "stopping": self.stop_mode,
            "running_jobs": len(self.engine.live),
            "probe": self._probe_line(),
            "scheduler_failing": self.engine.health.status(),
            "gpus": [d.index for d in listing],
            # Those of them nothing new starts on, and the configured ones not seen now
            # (lost), as `gpus` has them: `gpus: 0,1` hid both.
            # (a lost GPU drained too: it stays so when seen again)
            "draining": [
                d.index
                for d in sorted([*listing, *missing], key=lambda d: d.index)
                if d.state is DeviceState.DRAINING
            ],
            "missing": [d.index for d in missing],
            # Removed GPUs the probe sees, kept out through this start, and those it used
            # again: the start says both, as it says drains (daemon_status_text.start_notes).
            "removed": self.engine.devices.removed_seen(),
            "gpus_back": list(self.gpus_back),
            "counts": self.store.counts(),
            "last_job": self.store.last_submitted_id(),  # removed since or not: `last`
            "database_replaced": self.database_replaced(),
        }

    def database_replaced(self) -> str | None:
        """A herd.db replaced under the daemon (a backup copied over it), said with what to
        do, for `daemon status` and `ls` (daemon.log alone had it): one stat; two where it
        was, to tell a home moved or removed, whose herd.db is gone with it (that said "a
        backup put in its place?", and advised putting one there)."""
        if not self.store.replaced():
            return None
        if self.home_id is not None and identity(self.home) != self.home_id:
            return home_moved(self.home)
        return replaced_while_running(self.store.path, running=True)


def gpu_index(index: int) -> int:
    """`index` if it can name a GPU, the same for every verb on one (add, remove, drain,
    enable), before the GPU is looked for: a number past 64 bits as the API refuses any
    (OutOfRange: `index N is too large (at most 2**63 - 1)`), one outside 0 to MAX_GPU_INDEX
    as no GPU index, as the CLI takes them (a typo, else). Both 422: a removal looked first,
    and answered 404 "GPU -1 is not configured" where an add said 422."""
    if not 0 <= fits("index", index) <= MAX_GPU_INDEX:
        raise InvalidValue(f"GPU {index} is not a GPU index: use 0 to {MAX_GPU_INDEX}")
    return index
