"""Host memory held for running jobs' --ram (pure: the caller measures; host_room.py).

A job's --ram is held for it while it runs, as a GPU job's --mem is on its GPUs: a job that
starts must not take memory a running job asked for and has not used yet. The host's
available memory (MemAvailable) already leaves out what a running job uses, so a run holds
only the part of its --ram it does not use yet: its --ram less the resident memory of its
processes as measured with that reading; a run that has grown into its request holds
nothing more. A run started since the reading (not measured with it) holds its whole --ram.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

RunKey = tuple[int, int]
"""(job id, attempt number)."""


def ram_held(asked: Iterable[tuple[RunKey, int]], used: Mapping[RunKey, int]) -> int:
    """The bytes of host memory the running jobs' --ram holds beyond what the reading saw
    them use. `asked`: each running run with --ram and its --ram; `used`: the bytes each run
    measured with the reading used (a run missing there started since: nothing is counted
    yet of what it will use)."""
    return sum(max(0, ram - used.get(key, 0)) for key, ram in asked)
