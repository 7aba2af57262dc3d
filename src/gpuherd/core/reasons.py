"""Why a queued job is not running yet (pure: no I/O); why a job could never run here is
core/reasons_never.py's (its never_fits and Refusal are here too, for those who import them).

The words `ls`, `show` and the dashboard print, and submit's refusals; the GPUs named in a
reason's parentheses are core/reasons_gpus.py's; what placement itself decides is in
core/placement.py, what a GPU can take in core/capacity.py.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from gpuherd.core.capacity import (
    EXCLUSIVE,
    SHARING,
    Gpu,
    Kind,
    load,
    most_on_a_node,
)
from gpuherd.core.model import Device, DeviceState, Job, Policy, Reservation
from gpuherd.core.naming import gpu_names, gpus_named, listed, only_flag
from gpuherd.core.placement import Hold, cpu_slots_left, project_room
from gpuherd.core.reasons_gpus import gpu_details
from gpuherd.core.reasons_never import Refusal, cannot_fit, never_fits
from gpuherd.core.units import format_size, plural
from gpuherd.core.waiting import Fits, Shape, shape_of, worded

_DEFAULT_POLICY = Policy()


def _ram_reason(
    ram: int | None, host_free: int | None, policy: Policy, held: int = 0
) -> str | None:
    """`host_free`: what placement may give out (less `held`, what running jobs' --ram
    holds: core/host_ram.py)."""
    if host_free is None:
        return None
    keep = policy.keep_ram
    left = host_free - keep
    by_running = f", with {format_size(held)} held for running jobs' --ram" if held else ""
    if ram and ram > left:
        beyond = f" beyond the {format_size(keep)} kept free" if keep else ""
        return (
            f"waiting for {format_size(ram)} of host memory "
            f"({format_size(max(left, 0))} available{beyond}{by_running})"
        )
    if left < 0:
        return (
            f"waiting for host memory ({format_size(max(host_free, 0))} available, "
            f"{format_size(keep)} must stay free{by_running})"
        )
    return None


def _running(count: int, cap: int) -> str:
    """ "4 running", or "5 running, at most 4" after the cap was lowered below the count."""
    return f"{count} running" + (f", at most {cap}" if count != cap else "")


def _waiting_for(kind: Kind, n: int, mem: int | None, gpus: list[Gpu]) -> str:
    """What the job waits for: free GPUs, empty ones, memory, or a slot (--mem jobs whose
    GPUs have the memory, but a job limit or a job without --mem holds the slot), or GPUs
    without other users' processes (--mem jobs whose GPUs have the memory and the slot, but
    `foreign exclusive` keeps them off: they do not wait for memory)."""
    if kind is SHARING and any(g.cap is not None for g in gpus):
        need = mem or 0
        roomy = [g for g in gpus if g.free_mem is None or g.free_mem >= need]
        # (A GPU running an exclusive job has no slot to give, however many it has free:
        # "waiting for a free slot" was said of one.)
        shared = [g for g in roomy if not g.exclusive]
        if most_on_a_node(g for g in shared if g.share_ok) >= n:
            return f"waiting for a free slot on {plural(n, 'GPU')}"
        if most_on_a_node(shared) >= n:
            wanted = "a GPU" if n == 1 else f"{n} GPUs"
            return f"waiting for {wanted} without other users' processes"
        if most_on_a_node(roomy) < n:
            return f"waiting for {format_size(need)} free on {plural(n, 'GPU')}"
    elif kind is EXCLUSIVE:
        return "waiting for an empty GPU" if n == 1 else f"waiting for {n} empty GPUs"
    return "waiting for a free GPU" if n == 1 else f"waiting for {n} free GPUs"


def why_waiting(
    job: Job,
    devices: Sequence[Device],
    reservations: Sequence[Reservation],
    policy: Policy = _DEFAULT_POLICY,
    host_free: int | None = None,
    ahead: Callable[[int], int | None] | None = None,
    missing: Sequence[Device] = (),
    hold: Hold | None = None,
) -> str:
    """A short reason why a queued job (dependencies met) is not running, given current load.

    "waiting for a free GPU", "waiting for 2 free GPUs", "waiting for 20.0 GiB free on 1
    GPU" (--mem), "waiting for an empty GPU" (exclusive), "waiting for 8.0 GiB of host
    memory", with the GPUs that draining, other users' processes, an exclusive job, a job
    without --mem or a job limit keep from it in parentheses, and beside them those full of
    gpuherd's jobs ("GPU 0 is busy with other users' processes; GPUs 1-7 are full of gpuherd
    jobs"). A job for several GPUs on
    GPUs of several nodes waits for them "on one node". A job limited to some GPUs
    (`--only-gpus`) waits for a free GPU "of --only-gpus 0,2": only those GPUs are looked at.
    A job of a project at its limit waits for "a run slot of project NAME".

    Placement reads only the front of a long queue in a pass: `ahead(most)` says how many
    queued jobs (counted up to `most`) stand before a job it did not read, None for one it
    read. When nothing else holds such a job back, it waits for those jobs: "waiting: 2,100
    jobs ahead in the queue", not "starting" (it is not about to start).

    `missing`: GPUs configured but not seen by the probe now (lost, fallen off the bus). A
    job only they could run waits for them: "waiting for GPU 1, configured but not seen now".

    `hold`: the GPUs the last placement pass kept for a starving job. A job that fits only
    with them waits for its turn, and is told for which job: "waiting for its turn: GPUs 0, 1
    are held for job 12, which waits longer".
    """
    waits = shape_waits(shape_of(job.spec), devices, reservations, policy, host_free, missing, hold)
    return worded(waits, job.id, ahead)


def shape_waits(
    shape: Shape,
    devices: Sequence[Device],
    reservations: Sequence[Reservation],
    policy: Policy,
    host_free: int | None,
    missing: Sequence[Device],
    hold: Hold | None,
    ram_held: int = 0,
) -> str | Fits:
    """why_waiting's reason for every queued job of `shape`, or, when such a job would fit
    now, the Fits that words each one's own: a listing asks once per shape. `host_free`:
    available host memory less `ram_held`, what running jobs' --ram holds of it."""
    n, mem, only, kind = shape.gpus, shape.mem, shape.only, shape.kind
    ram_reason = _ram_reason(shape.ram, host_free, policy, ram_held)
    cap = policy.max_running
    if cap is not None and len(reservations) >= cap:
        return f"waiting for a run slot ({_running(len(reservations), cap)}: config max-running)"
    project = shape.project
    if project is not None and project_room(reservations, policy).get(project, 1) <= 0:
        limit = dict(policy.project_limits)[project]
        running = sum(1 for r in reservations if r.project == project)
        return (
            f"waiting for a run slot of project {project} "
            f"({_running(running, limit)}: config project-limits)"
        )
    if n <= 0:
        if cpu_slots_left(reservations, policy) == 0:
            return f"waiting for a CPU slot ({policy.cpu_jobs} running: config cpu-jobs)"
        # Nothing else holds a CPU-only job back.
        return ram_reason or Fits("starting")
    if lost := _waits_for_lost(shape, devices, missing, policy):
        return lost
    absent = sorted(set(only) - {d.index for d in devices})
    if only:
        devices = [d for d in devices if d.index in only]
    gpus = load(devices, reservations, policy)
    if most_on_a_node(g for g in gpus if g.fits(kind, mem)) >= n:
        return ram_reason or _turn(kind, n, mem, gpus, hold)
    head = _waiting_for(kind, n, mem, gpus)
    if n > 1 and len({d.node for d in devices}) > 1:
        head += " on one node"
    if only:
        head += f" of {only_flag(only)}"
    unseen = {d.index for d in missing}
    gone = [
        f"{gpu_names(ix, ('is', 'are'))} {what}"
        for ix, what in (
            ([i for i in absent if i in unseen], "configured but not seen now"),
            ([i for i in absent if i not in unseen], "not there now"),
        )
        if ix
    ]
    # Only draining GPUs (seen, or lost) could ever take it: said with their `gpus enable`.
    enabled = [d for d in [*devices, *missing] if d.state is not DeviceState.DRAINING]
    enable = cannot_fit(n, mem, enabled, policy, kind is EXCLUSIVE, only) is not None
    details = gpu_details(
        kind, mem, devices, gpus, policy, reservations, beside=bool(gone), enable=enable
    )
    if gone:
        drained = _drained([d for d in missing if d.index in absent])
        details.append("; ".join(gone) + ": `gpuherd gpus`" + drained)
    return head + (f" ({'; '.join(details)})" if details else "")


def _turn(kind: Kind, n: int, mem: int | None, gpus: list[Gpu], hold: Hold | None) -> Fits:
    """Why a job that fits waits: the GPUs it needs are held for an older job, named when
    the last pass held them (without them the job would not fit), to every job but that one."""
    turn = "waiting for its turn (its GPUs are held for an older job that waits longer)"
    if hold is not None:
        rest = (g for g in gpus if g.index not in hold.gpus and g.fits(kind, mem))
        if most_on_a_node(rest) < n:
            held = gpu_names(sorted(hold.gpus), ("is", "are"))
            named = f"waiting for its turn: {held} held for job {hold.job_id}, which waits longer"
            return Fits(turn, named, hold.job_id)
    return Fits(turn)


def _waits_for_lost(
    shape: Shape, devices: Sequence[Device], missing: Sequence[Device], policy: Policy
) -> str | None:
    """The reason of a job that the GPUs seen now could never run, but the configured ones
    not seen now (`missing`) could: it waits for them to come back."""
    only = shape.only
    lost = [d.index for d in missing if not only or d.index in only]
    if not lost:
        return None
    judged = shape.gpus, shape.mem, devices, policy, shape.kind is EXCLUSIVE, only
    if cannot_fit(*judged) is None:
        return None  # it can run without them
    drained = _drained([d for d in missing if d.index in lost])
    return f"waiting for {gpus_named(lost)}, configured but not seen now: `gpuherd gpus`{drained}"


def _drained(lost: Sequence[Device]) -> str:
    """What to do of the lost GPUs a job waits for that are drained too (`gpus drain` of a
    lost GPU): back, they take nothing new, and the job would wait on for no reason said."""
    drained = sorted(d.index for d in lost if d.state is DeviceState.DRAINING)
    if not drained:
        return ""
    they = ("it takes", "it comes") if len(drained) == 1 else ("they take", "they come")
    return (
        f"; {gpu_names(drained, ('is', 'are'))} draining too: {they[0]} no new job when "
        f"{they[1]} back, until `gpuherd gpus enable {listed(drained, ',')}`"
    )


__all__ = ["Refusal", "never_fits", "shape_waits", "why_waiting"]
