"""Why a queued job is not running yet, and why a job could never run here (pure: no I/O).

The words `ls`, `show` and the dashboard print, and submit's refusals; the GPUs named in a
reason's parentheses are core/reasons_gpus.py's; what placement itself decides is in
core/placement.py, what a GPU can take in core/capacity.py.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

from gpuherd.core.capacity import (
    EXCLUSIVE,
    SHARING,
    Gpu,
    Kind,
    load,
    margin,
    most_on_a_node,
)
from gpuherd.core.model import Device, DeviceState, Job, Policy, Reservation
from gpuherd.core.naming import gpu_names, gpus_named, only_flag
from gpuherd.core.placement import Hold, cpu_slots_left, project_room
from gpuherd.core.reasons_gpus import gpu_details
from gpuherd.core.units import BARE_LEAST, format_size, format_size_down, plural
from gpuherd.core.waiting import Fits, Shape, shape_of, worded

_DEFAULT_POLICY = Policy()


def _percent(fraction: float) -> str:
    return f"{fraction * 100:g}%"


def _ram_reason(ram: int | None, host_free: int | None, policy: Policy) -> str | None:
    if host_free is None:
        return None
    keep = policy.keep_ram
    left = host_free - keep
    if ram and ram > left:
        beyond = f" beyond the {format_size(keep)} kept free" if keep else ""
        return (
            f"waiting for {format_size(ram)} of host memory "
            f"({format_size(max(left, 0))} available{beyond})"
        )
    if left < 0:
        return (
            f"waiting for host memory ({format_size(host_free)} available, "
            f"{format_size(keep)} must stay free)"
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
        if most_on_a_node(g for g in roomy if g.share_ok) >= n:
            return f"waiting for a free slot on {plural(n, 'GPU')}"
        if most_on_a_node(roomy) >= n:
            wanted = "a GPU" if n == 1 else f"{n} GPUs"
            return f"waiting for {wanted} without other users' processes"
        return f"waiting for {format_size(need)} free on {plural(n, 'GPU')}"
    if kind is EXCLUSIVE:
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
) -> str | Fits:
    """why_waiting's reason for every queued job of `shape`, or, when such a job would fit
    now, the Fits that words each one's own: a listing asks once per shape."""
    n, mem, only, kind = shape.gpus, shape.mem, shape.only, shape.kind
    ram_reason = _ram_reason(shape.ram, host_free, policy)
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
    details = gpu_details(kind, mem, devices, gpus, policy, reservations, beside=bool(gone))
    if gone:
        details.append("; ".join(gone) + ": `gpuherd gpus`")
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
    if _never_fits(*judged) is None:
        return None  # it can run without them
    return f"waiting for {gpus_named(lost)}, configured but not seen now: `gpuherd gpus`"


class Refusal(str):
    """Why a job could never run here, as one line (`what`, then `: way` where there is a way
    out), with its parts: `way` as a submit's refusal says it, `edit` what `gpuherd edit` of a
    queued job takes to fit (service_reasons.py). A str: callers that only say it need not
    know it has parts."""

    what: str
    way: str
    edit: str

    def __new__(cls, what: str, way: str = "", edit: str = "") -> Refusal:
        said = super().__new__(cls, f"{what}: {way}" if way else what)
        said.what, said.way, said.edit = what, way, edit
        return said


def never_fits(
    job_gpus: int,
    job_mem: int | None,
    devices: Sequence[Device],
    policy: Policy = _DEFAULT_POLICY,
    exclusive: bool = False,
    only: tuple[int, ...] = (),
) -> Refusal | None:
    """Why no arrangement of `devices` could ever run such a job, or None if one could; with
    the way out: fewer GPUs (the most that would fit), a smaller --mem.

    Load is ignored; enabled and draining GPUs count (draining is temporary), GPUs with
    other users' processes count too, with all their memory (those processes may go away);
    callers add the configured GPUs the probe does not see now (they may come back).
    The margin `policy.keep_free` is never handed out: a 24 GiB GPU with 10% kept free
    cannot take a 23 GiB job. A job's GPUs must all be on one node (`Device.node`). An
    exclusive job needs the same GPUs as another job with that --mem (it is an empty GPU
    it waits for); `exclusive` only words the reason. `only`: the job may use these GPUs
    alone (`--only-gpus`; () = any).
    """

    def fits(gpus: int, mem: int | None) -> bool:
        return _never_fits(gpus, mem, devices, policy, exclusive, only) is None

    what = _never_fits(job_gpus, job_mem, devices, policy, exclusive, only)
    if what is None:
        return None
    if isinstance(what, Refusal):
        return what
    # The most GPUs that would fit, all else as asked: with them the job runs.
    fewer = next((n for n in range(min(job_gpus - 1, len(devices)), 0, -1) if fits(n, job_mem)), 0)
    if not fewer:
        return Refusal(what)
    way = f"give fewer gpus (--gpus), at most {fewer}"
    if only:  # or the GPUs it may use: more of them, or others than the absent ones
        more = "name more in" if job_gpus > len(only) else "other"
        way += f", or {more} only_gpus (--only-gpus)"
    elif job_mem is not None and fits(job_gpus, None):
        way += ", or a smaller mem (--mem)"
    return Refusal(what, way, f"--gpus {fewer}")


def _never_fits(
    job_gpus: int,
    job_mem: int | None,
    devices: Sequence[Device],
    policy: Policy,
    exclusive: bool,
    only: tuple[int, ...],
) -> str | Refusal | None:
    """never_fits()'s reason; a Refusal where it has its own way out (a smaller --mem)."""
    keep = policy.keep_free
    if job_gpus < 0:
        return f"asks for {job_gpus} GPUs; the count must be 0 or more"
    if job_gpus == 0:
        return None
    configured = [
        d
        for d in devices
        if d.state in (DeviceState.ENABLED, DeviceState.DRAINING)
        and d.slots > 0
        and (d.max_jobs is None or d.max_jobs > 0)
    ]
    word = "exclusive GPU" if exclusive else "GPU"
    if only:
        if job_gpus > len(only):
            return f"asks for {plural(job_gpus, word)} but --only-gpus names {len(only)}"
        named = [d for d in configured if d.index in only]
        if len(named) < job_gpus:
            absent = sorted(set(only) - {d.index for d in named})
            return (
                f"asks for {plural(job_gpus, word)} of {only_flag(only)}, "
                f"but gpuherd has no {gpus_named(absent)}"
            )
        configured = named
    # On a cluster a job's GPUs are all on one node: the largest node says what matters, also
    # when all the GPUs together are too few ("gpuherd has only 2" of nodes of 1 GPU each
    # suggested a third node would do).
    cluster = any(d.node is not None for d in configured)
    if job_gpus > len(configured) and not cluster:
        count = len(configured)
        have = "none" if count == 0 else f"only {count}"
        return f"asks for {plural(job_gpus, word)} but gpuherd has {have}"
    largest_node = _most_on_a_node(configured)
    if job_gpus > largest_node:
        return f"asks for {job_gpus} {word}s on one node: the largest node has {largest_node}"
    if job_mem is None:
        return None
    caps = {
        d.index: None if d.memory_total is None else d.memory_total - margin(d.memory_total, keep)
        for d in configured
    }
    big = [d for d in configured if (cap := caps[d.index]) is None or cap >= job_mem]
    most = _most_on_a_node(big)
    if most >= job_gpus:
        return None
    kept = f" once {_percent(keep)} is kept free" if keep > 0 else ""
    of = f" of {only_flag(only)}" if only else ""  # the GPUs it may use, not all of them
    if not big:
        return _no_gpu_big_enough(job_mem, configured, caps, kept, of)
    asks = f"asks for {job_gpus} {word}s with {format_size(job_mem)} each"
    if len(big) >= job_gpus:
        return f"{asks} on one node, but no node has more than {plural(most, 'such GPU')}{kept}"
    gpus, have = ("GPU", "has") if len(big) == 1 else ("GPUs", "have")
    return f"{asks} but only {len(big)} {gpus}{of} {have} that much{kept}"


def _no_gpu_big_enough(
    job_mem: int, configured: Sequence[Device], caps: dict[int, int | None], kept: str, of: str
) -> Refusal:
    """A --mem larger than any GPU has (`caps`: what each can hand out), and the most it may be."""
    largest = max(configured, key=lambda d: caps[d.index] or 0)
    room = caps[largest.index] or 0
    offer = f" ({format_size(room)}{kept})" if kept else ""
    what = (
        f"asks for {format_size(job_mem)} per GPU but the largest GPU{of} has "
        f"{format_size(largest.memory_total or 0)}{offer}"
    )
    # The way out, as --ram's refusal says it (submission.py). `mem (--mem)` as
    # submission_text.field names a field: the Python API reads its keyword, the dashboard's
    # form its box's label (api/form_words.py); `gpuherd edit` takes it too. No size below
    # BARE_LEAST ("at most 0 B").
    if room < BARE_LEAST:
        return Refusal(what, "give a smaller mem (--mem)")
    size = format_size_down(room)
    return Refusal(
        what, f"give a smaller mem (--mem), at most {size}", f"--mem {size.replace(' ', '')}"
    )


def _most_on_a_node(devices: Sequence[Device]) -> int:
    counts = Counter(d.node for d in devices)
    return max(counts.values(), default=0)
