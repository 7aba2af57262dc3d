"""Sweeps learn memory: a finished point's measured peak, plus LEARNED_MEM_MARGIN, becomes the
--mem of the sweep's waiting points that declared none, so they can share GPUs.

A learned request is never more than the GPUs a point may use give (reasons_never.most_mem,
the bound an --oom-retry's growth keeps to as well): learning only says what a point needs,
and a point that ran fine alone must stay runnable. Before, a point that used 22.5 GiB of a
24 GiB GPU taught its siblings 24.8 GiB, which no GPU has, and the rest of its sweep waited for
ever ("can never run on these GPUs"). Requests an older daemon learned so are lowered to that
bound as the daemon starts (engine_recovery.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpuherd.core.model import Device
from gpuherd.core.reasons_never import most_mem

if TYPE_CHECKING:
    from gpuherd.engine import Engine

LEARNED_MEM_MARGIN = 1.1
"""Headroom over a sweep point's measured peak when its siblings learn their request."""


def learn_from_point(engine: Engine, sweep: str, peak: int, now: float) -> None:
    """A point of `sweep` succeeded after using at most `peak` bytes of GPU memory: its
    waiting siblings that declared no --mem learn that, with headroom, within their GPUs."""
    gpus = may_run_on(engine)
    engine.store.learn_sweep_mem(
        sweep,
        int(peak * LEARNED_MEM_MARGIN),
        now,
        lambda count, only: most_mem(count, gpus, engine.policy, only),
    )


def lower_learned_mem(engine: Engine, now: float) -> None:
    """Lower the learned requests no GPU can give (an older daemon's) to what they give."""
    gpus = may_run_on(engine)
    engine.store.lower_learned_mem(
        now, lambda count, only: most_mem(count, gpus, engine.policy, only)
    )


def may_run_on(engine: Engine) -> list[Device]:
    """The GPUs a job may be placed on, configured ones not seen now too (as they may come
    back: never_runs counts them so), as what bounds a request is judged against."""
    return [*engine.device_listing(), *engine.devices.missing()]
