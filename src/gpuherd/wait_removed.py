"""A job removed (`gpuherd rm`, `clean`) that a wait asks about, in the words the daemon's
answer (api/job_wait.py) and its readers (`gpuherd wait`, `submit --wait`, the Python API)
share.

A wait asks the daemon again every 30 s, and again after a daemon's restart. A job removed
while it waited was refused on the next ask (`no job 7`), and the whole wait failed with that
line, the states of the other jobs lost; a queued or held one removed during an ask was said
`cancelled`, as its removal cancels it first. Now such a job's wait is over: the daemon answers
it `removed`, a state no job has (its record is gone), and it has not succeeded. An id no job
ever had is still refused at once, `no job 99` (a typo).

Light to import (the CLI's `wait` reads it): core/states.py alone."""

from __future__ import annotations

from gpuherd.core.states import FINISHED_STATES

REMOVED = "removed"
"""A wait's state for a job removed: not a JobState, as no job is in it."""

REMOVED_MESSAGE = "removed (gpuherd rm or clean)"
"""How the daemon says it in the wait's `endings`: `job 7: removed (gpuherd rm or clean)`,
as `submit --wait` and `wait` print an ending (an older client too: the message is the line
it prints of an ending without an outcome)."""

WAIT_OVER = frozenset({*(state.value for state in FINISHED_STATES), REMOVED})
"""The states a wait's answer gives a job whose wait is over: its end, or its removal."""
