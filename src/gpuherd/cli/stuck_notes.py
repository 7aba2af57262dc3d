"""What a wait says, on stderr, of the jobs it waits for that will not end by themselves: a
paused one (until resumed), one that waits for a held or paused job (the daemon's reason names
the verb that lets it run), and any, with the queue paused. `wait 8`, `wait` of every job and
`submit --wait --after 7` (7 held) waited in silence, as though hung, where `ls` said why.
The facts and their words are stuck_jobs.py's, shared with the Python API's waits."""

from __future__ import annotations

from collections.abc import Sequence

from gpuherd.cli.main import prefixed
from gpuherd.client import Client
from gpuherd.stuck_jobs import why_stuck


def stuck_notes(client: Client, ids: Sequence[int]) -> list[str]:
    """The lines, each `gpuherd: ...`, for the jobs among `ids` that wait for a resume or a
    release (stuck_jobs.why_stuck: of more than 20 jobs, only paused ones and the queue)."""
    return [prefixed(note) for note in why_stuck(client, ids)]
