"""`sweep status`'s warning of points still waiting to run with other job options than the
sweep's latest submission gave (sweep_checks.waiting_with_other_options_now), asked first of
the waiting jobs grouped by their options.

That warning read every waiting job whole to compare its options: 40,000 queued points were
a second of every `sweep status`, `--limit 1` too, for a warning most sweeps never give. The
jobs of a sweep ask alike, so they make a group or a few (Store.waiting_alike, one query); a
group's first job speaks for it. Only when one of them differs is the warning worded, by
sweep_checks as before (it names how many differ, and how)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from gpuherd.core.waiting_options import CONFIG_DEFAULTS, differences
from gpuherd.sweep_checks import submitted_options, waiting_with_other_options_now

if TYPE_CHECKING:
    from gpuherd.store import Store
    from gpuherd.sweep_reads import SweepReads


def waiting_options_warning(
    store: Store | SweepReads, name: str, submission: Mapping[str, Any]
) -> list[str]:
    """sweep_checks.waiting_with_other_options_now's answer; [] at the cost of one grouped
    query where no waiting job's options differ from those `submission` gave."""
    alike = store.waiting_alike(name)
    submitted = submitted_options(submission) if alike else None
    if submitted is None:
        return []
    options, wanted = submitted
    not_given = [f for f in CONFIG_DEFAULTS if getattr(options, f) is None]
    not_given += ["mem"] * (options.mem is None)  # (learned from finished points meanwhile)
    if not any(
        differences(job.spec, job.priority, wanted, options.priority, not_given) for job in alike
    ):
        return []
    return waiting_with_other_options_now(store, name, submission)
