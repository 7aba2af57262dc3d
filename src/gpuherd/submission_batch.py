"""A submission of several jobs: how its refusals name them, and the options they share."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields, replace
from operator import attrgetter

from gpuherd.wire import SubmitItem

OWN_TO_EACH_JOB = frozenset({"command"})
"""What `submit --file` (its lines) and the dashboard's form (its command lines) give each job
of a batch its own; every other field (`--gpus`, `--cwd`, `--name`, the environment) they give
every job alike."""
_OPTIONS = attrgetter(*(f.name for f in fields(SubmitItem) if f.name not in OWN_TO_EACH_JOB))


def shared_options(items: Sequence[SubmitItem]) -> SubmitItem | None:
    """A job of the options all of `items` give alike (its command `true`), to check once,
    before the items; None for one item, or items that differ (a hand-made HTTP batch)."""
    if len(items) < 2:
        return None
    # As tuples: a field that is one object in every item (the batch's environment, sent
    # once) compares by identity, not key by key; 10,000 items cost ~10 ms.
    first = _OPTIONS(items[0])
    if any(_OPTIONS(item) != first for item in items):
        return None
    return replace(items[0], command="true")


@dataclass(frozen=True)
class Batch:
    """How a refusal names the items of one submission: by number (`job 3 of the
    submission`: the lines of `submit --file`, which the user numbered), or a sweep's by its
    points (`point x=1 of sweep 'lr'`: the user gave values, not numbered jobs); the options
    every item shares as the batch's (`the 3 jobs' options`), no item blamed for them all."""

    size: int
    sweep: str | None = None
    points: Sequence[str] = ()
    """A sweep's points, as `sweep status` names them (their folders), in the items' order."""

    def where(self, n: int) -> str:
        """Item `n` (from 1) as a message's beginning; '' for a submission of one job."""
        if self.sweep is not None:
            return f"point {self.points[n - 1]} of sweep {self.sweep!r}: "
        return f"job {n} of the submission: " if self.size > 1 else ""

    def shared(self) -> str:
        """The options every item gives alike (shared_options) as a message's beginning."""
        return f"the {self.size:,} jobs' options: "

    def two(self, first: int, second: int) -> str:
        """Items `first` and `second` (from 1): `jobs 1 and 2 of the submission`."""
        if self.sweep is not None:
            a, b = self.points[first - 1], self.points[second - 1]
            return f"points {a} and {b} of sweep {self.sweep!r}"
        return f"jobs {first} and {second} of the submission"

    def never_runs(self, n: int | None, reason: str) -> str:
        """Item `n` can never run here, for `reason` (never_runs()); every item, for the
        options they share (`n` None). A sweep's points all ask for its options: the sweep
        is refused, no point blamed for them all."""
        if self.sweep is not None:
            return f"sweep {self.sweep!r} can never run: each of its points {reason}"
        if n is None:
            return f"this submission can never run: each of its {self.size:,} jobs {reason}"
        return f"{self.where(n)}this job can never run: {reason}"
