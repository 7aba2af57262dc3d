"""Which rows a listing cut by `ls --limit N` keeps: those nearest now (pure).

A user looking at a long listing looks for what just ended (what failed), what runs, and
what starts next; the oldest finished jobs and the far end of the queue are what they can do
without. So a cut listing keeps every running or paused job, the newest finished ones and the
waiting ones next to start, and leaves out the oldest finished ones (listed first, by id) and
the last to start (listed last). It was cut from the top: `ls --all --limit 100` of 10,000
finished jobs showed the 100 oldest, and `ls --state failed` the first failures.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LeftOut:
    """What a listing's limit left out: `earlier` rows at the top (the oldest finished jobs),
    `later` ones at the end (the last of the waiting jobs to start; the oldest jobs of a
    newest-first listing)."""

    earlier: int = 0
    later: int = 0
    unreadable: tuple[tuple[int, str], ...] = ()
    """The jobs left out because their rows cannot be read (herd.db changed by another
    program), each with why and the way out, by id: listed, one such row failed the whole
    listing, for everyone."""

    @property
    def total(self) -> int:
        return self.earlier + self.later


NOTHING = LeftOut()


def shares(room: int, finished: int, waiting: int) -> tuple[int, int]:
    """(finished jobs kept, waiting jobs kept) of `finished` and `waiting` in `room` rows (the
    limit less the running jobs, always shown). Each side has half the room, the finished the
    odd row (what happened is what `--all` and `--state` are mostly asked for; a plain `ls`
    shows the waiting ones); what one side leaves unused goes to the other."""
    room = max(0, room)
    kept_finished = min(finished, max(room - waiting, room - room // 2))
    return kept_finished, min(waiting, room - kept_finished)
