"""Why a job could never run here, and the way out (pure: no I/O): submit's and edit's
refusals, and what `ls` says of a queued job that a removed GPU left with nowhere to run
(service_reasons.py). Why a job that can run waits is core/reasons.py's."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from gpuherd.core.capacity import margin
from gpuherd.core.model import Device, DeviceState, Policy
from gpuherd.core.naming import gpus_named, listed, only_flag
from gpuherd.core.units import BARE_LEAST, format_size, format_size_down, plural

_DEFAULT_POLICY = Policy()
GPUS_FLAG = "--gpus"
"""The option that gives a job's GPU count, as a refusal names it: `submit`'s and `edit`'s
(`gpuherd run`'s is --gpus-per-job: its --gpus names the GPUs to use)."""


def _cpu_only(flag: str) -> str:
    """The way out when gpuherd has no GPU at all (every one removed, or none seen): the job
    runs on the CPU, or waits for a GPU `gpuherd gpus add` gives it."""
    return f"give gpus 0 ({flag} 0) for a CPU-only job"


class Refusal(str):
    """Why a job could never run here, as one line (`what`, then `: way` where there is a way
    out), with its parts: `way` its own way out, `edit` what `gpuherd edit` of a queued job
    takes to fit (service_reasons.py), `add` the GPUs the probe sees and gpuherd does not use
    whose `gpuherd gpus add` lets it run (said first: the job runs as asked), `seen` all such
    GPUs it could use, `where` what it could never run on (`on these GPUs`; a job's --ram, `on
    this machine`). A str: callers that only say it need not know it has parts."""

    what: str
    way: str
    edit: str
    add: tuple[int, ...]
    where: str

    def __new__(
        cls,
        what: str,
        way: str = "",
        edit: str = "",
        add: Sequence[int] = (),
        seen: Sequence[int] = (),
        where: str = "on these GPUs",
    ) -> Refusal:
        ways = [w for w in (adding(add, seen), way) if w]
        said = super().__new__(cls, f"{what}: {', or '.join(ways)}" if ways else what)
        said.what, said.way, said.edit, said.add = what, way, edit, tuple(add)
        said.where = where
        return said


def adding(add: Sequence[int], seen: Sequence[int] = ()) -> str:
    """`gpuherd gpus add 0` adds one (GPUs 0-3 are seen but not used)`: the commands that
    give the job the GPUs it lacks (`add` takes one GPU), naming those the probe sees that
    gpuherd does not use as `gpuherd gpus`'s probe line does; '' for none."""
    if not add:
        return ""
    seen = sorted({*seen, *add})
    commands = [f"`gpuherd gpus add {index}`" for index in add]
    said = commands[0] if len(add) == 1 else ", ".join(commands[:-1]) + " and " + commands[-1]
    if len(add) == 1:
        said += " adds it" if len(seen) == 1 else " adds one"
    else:
        said += " add them" if len(add) == len(seen) else f" add the {len(add)} it needs"
    are = "is" if len(seen) == 1 else "are"
    return f"{said} ({gpus_named(seen, 6)} {are} seen but not used)"


def never_fits(
    job_gpus: int,
    job_mem: int | None,
    devices: Sequence[Device],
    policy: Policy = _DEFAULT_POLICY,
    exclusive: bool = False,
    only: tuple[int, ...] = (),
    unused: Sequence[Device] = (),
    gpus_flag: str = GPUS_FLAG,
) -> Refusal | None:
    """Why no arrangement of `devices` could ever run such a job, or None if one could; with
    the way out: the GPUs of `unused` (seen by the probe, not used by gpuherd) whose `gpuherd
    gpus add` lets it run, fewer GPUs (the most that would fit), a smaller --mem, other
    --only-gpus, or none at all (a CPU-only job) where gpuherd has none.

    Load is ignored; enabled and draining GPUs count (draining is temporary), GPUs with
    other users' processes count too, with all their memory (those processes may go away);
    callers add the configured GPUs the probe does not see now (they may come back).
    The margin `policy.keep_free` is never handed out: a 24 GiB GPU with 10% kept free
    cannot take a 23 GiB job. A job's GPUs must all be on one node (`Device.node`). An
    exclusive job needs the same GPUs as another job with that --mem (it is an empty GPU
    it waits for); `exclusive` only words the reason. `only`: the job may use these GPUs
    alone (`--only-gpus`; () = any). `gpus_flag`: the option the way out names for the job's
    GPU count (`gpuherd run`'s --gpus-per-job).
    """

    def fits(gpus: int, mem: int | None, more: Sequence[Device] = ()) -> bool:
        return cannot_fit(gpus, mem, [*devices, *more], policy, exclusive, only) is None

    what = cannot_fit(job_gpus, job_mem, devices, policy, exclusive, only)
    if what is None:
        return None
    # The fewest of the unused GPUs (in order) that let it run as asked: `gpus add` of each.
    # (one too small for its --mem, or not of its --only-gpus, is no use: not named)
    usable = [d for d in unused if cannot_fit(1, job_mem, [d], policy, exclusive, only) is None]
    some = (usable[:n] for n in range(1, len(usable) + 1))
    add = next((more for more in some if fits(job_gpus, job_mem, more)), [])
    added = [d.index for d in add], [d.index for d in usable] if add else []
    if isinstance(what, Refusal):
        return Refusal(what.what, what.way, what.edit, *added)
    # The most GPUs that would fit, all else as asked: with them the job runs.
    fewer = next((n for n in range(min(job_gpus - 1, len(devices)), 0, -1) if fits(n, job_mem)), 0)
    if not fewer:
        return Refusal(what, *_nothing_fits_way(devices, only, gpus_flag), *added)
    way = f"give fewer gpus ({gpus_flag}), at most {fewer}"
    if only:  # or the GPUs it may use: more of them, or others than the absent ones
        more = "name more in" if job_gpus > len(only) else "other"
        way += f", or {more} only_gpus (--only-gpus)"
    elif job_mem is not None and fits(job_gpus, None):
        way += ", or a smaller mem (--mem)"
    return Refusal(what, way, f"--gpus {fewer}", *added)


def _nothing_fits_way(
    devices: Sequence[Device], only: tuple[int, ...], gpus_flag: str
) -> tuple[str, str]:
    """The way out of a job that no number of the GPUs gpuherd has could run, as asked, and
    its `gpuherd edit`: where it has none, a CPU-only job; where --only-gpus names none of
    them, the ones it has (the user picks: no edit)."""
    have = sorted(d.index for d in _usable(devices))
    if not have:
        if only:  # (--gpus 0 with --only-gpus is refused: a CPU-only job gets no GPU)
            way = f"{_cpu_only(gpus_flag)}, without only_gpus (--only-gpus)"
            return way, "--gpus 0 --clear only_gpus"
        return _cpu_only(gpus_flag), "--gpus 0"
    if only and not set(only) & set(have):
        return f"name GPUs gpuherd has in only_gpus (--only-gpus): {listed(have, ',', 6)}", ""
    return "", ""


def _usable(devices: Sequence[Device]) -> list[Device]:
    """The GPUs that may ever take a job: enabled or draining (draining is temporary), with a
    slot, and a job limit above 0."""
    return [
        d
        for d in devices
        if d.state in (DeviceState.ENABLED, DeviceState.DRAINING)
        and d.slots > 0
        and (d.max_jobs is None or d.max_jobs > 0)
    ]


def cannot_fit(
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
    configured = _usable(devices)
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
    kept = f" once {keep * 100:g}% is kept free" if keep > 0 else ""
    of = f" of {only_flag(only)}" if only else ""  # the GPUs it may use, not all of them
    if not big:
        return _no_gpu_big_enough(job_mem, configured, caps, kept, of)
    asks = f"asks for {job_gpus} {word}s with {format_size(job_mem)} each"
    if len(big) >= job_gpus:
        return f"{asks} on one node, but no node has more than {plural(most, 'such GPU')}{kept}"
    gpus, have = ("GPU", "has") if len(big) == 1 else ("GPUs", "have")
    return f"{asks} but only {len(big)} {gpus}{of} {have} that much{kept}"


def most_mem(
    job_gpus: int,
    devices: Sequence[Device],
    policy: Policy = _DEFAULT_POLICY,
    only: tuple[int, ...] = (),
) -> int | None:
    """The largest --mem a job of `job_gpus` GPUs, limited to `only` (`--only-gpus`; () = any),
    could ask for and still run here, as cannot_fit judges it: what the `job_gpus`-th largest
    of the GPUs it may use on one node hands out once `policy.keep_free` is kept. None where
    no size bounds it: GPUs of unknown size would take any, or no --mem lets it run."""
    if job_gpus <= 0 or cannot_fit(job_gpus, None, devices, policy, False, only) is not None:
        return None
    totals = {d.memory_total for d in devices if d.memory_total is not None}
    caps = sorted((t - margin(t, policy.keep_free) for t in totals), reverse=True)
    if not caps or cannot_fit(job_gpus, caps[0] + 1, devices, policy, False, only) is None:
        return None
    return next(c for c in caps if cannot_fit(job_gpus, c, devices, policy, False, only) is None)


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
