"""How large a request body the daemon takes: the caps and the line a refusal says.

Shared by the client, which checks a request before it sends one, and api/limits.py, which
checks it in the daemon; standard library only (the CLI imports it at every start).
"""

from __future__ import annotations

MAX_BODY_BYTES = 128 * 1024 * 1024
"""The largest request body under /api. Measured here: 10,000 jobs that each carry a whole
environment (benchmark W5, a 2 KB environment) are 20 MB, a 9 KB environment makes it 90 MB;
`submit --file` sends its environment once, so 100,000 commands are 32 MB."""
MAX_FORM_BYTES = 1024 * 1024
"""The largest dashboard form (every other POST): a form is a few fields and a job list."""


def body_limit(path: str) -> int:
    return MAX_BODY_BYTES if path.startswith("/api/") else MAX_FORM_BYTES


def too_large(path: str, size: int | None) -> str:
    """The one line a refused body gets; `size` None: a body without a length, cut off."""
    from gpuherd.core.units import format_size  # deferred: only a refusal needs it

    limit = format_size(body_limit(path)).replace(".0 ", " ")
    what = "the form" if not path.startswith("/api/") else "the request body"
    measured = f"is {format_size(size)}, over" if size is not None else "is over"
    advice = "submit the jobs in smaller batches" if path.endswith("/jobs") else "send less at once"
    return f"{what} {measured} the daemon's limit of {limit}: {advice}"
