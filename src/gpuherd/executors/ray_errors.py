"""What Ray says when a job's actor cannot be created or dies, as one line a user can act on
(the job's detail, the attempt's stderr and the daemon's log get it), and as its whole text
(for the attempt's stderr and the daemon's log only).

Ray's errors run to many lines, coloured (ANSI escapes), and their first line often says
only where it failed: an argument it could not serialise starts with that argument's whole
value, and the reason is on a later `!!! FAIL` line; an actor that died says so first, and
the exception that killed it comes last."""

from __future__ import annotations

import re

from gpuherd.core.text import clean_lines

_ERROR_LINE = re.compile(r"^[A-Za-z_.]*(Error|Exception): .+")
_FAILED = "!!! FAIL"
"""How Ray's serialisation check marks the part it could not serialise, and why."""
REASON_CHARS = 500
"""Most characters of Ray's reason kept in its one line."""
MISSING_GPUHERD = (
    "gpuherd is not installed on that node: install the same gpuherd version, with its "
    "[ray] extra, on every node of the cluster (docs/cluster.md)"
)


def reason(exc: BaseException) -> str:
    """The line of Ray's error text that says why, without escapes (and what to do, where
    gpuherd knows): a `!!! FAIL` line, else the last `...Error: ...` line, else the first."""
    lines = [line.strip() for line in whole_text(exc).splitlines()]
    failed = [line.removeprefix(_FAILED).strip() for line in lines if line.startswith(_FAILED)]
    errors = [line for line in lines if _ERROR_LINE.match(line)]
    why = failed[0] if failed else errors[-1] if errors else first_line(exc)
    if len(why) > REASON_CHARS:
        why = why[: REASON_CHARS - 1] + "…"
    if "No module named 'gpuherd" in why:
        why += f"; {MISSING_GPUHERD}"
    return why


def whole_text(exc: BaseException) -> str:
    """Ray's whole error text, safe to write to a log read with `cat` (escapes dropped)."""
    return clean_lines(str(exc)).strip()


def said_more(exc: BaseException) -> str:
    """Ray's whole text when it says more than its reason (for a log), else ""."""
    text = whole_text(exc)
    return "" if text == reason(exc) else text


RAYLET_DIED = "the node's raylet died: every process of the job was killed"
"""What the supervisor (ray_supervisor.py) writes to the job's stderr when its raylet died."""
NODE_DIED = re.compile(r"\bnode (has |had |was |is )?(died|dead|terminated|removed)", re.I)
"""How Ray says an actor died with its node (`The actor died because its node has died`)."""


NODE_LEFT = "its Ray node left the cluster"
"""A lost attempt's history words (after `lost: `) when Ray says its node died (lost_why)."""


def node_fence_note(check_every: float, waited: float) -> str:
    """What the stderr of an attempt lost with its node, whose end gpuherd never saw, gets:
    what became of its processes, which may run on (a raylet frozen or cut off: its worker
    lives on), and the window that is left (a node cut off from the GCS cannot know)."""
    return (
        "gpuherd: Ray counts the job's node dead, and gpuherd never saw the job end there. "
        "If its processes still run there (its raylet frozen or stuck, its Ray worker "
        "alive), the node kills them itself once it sees it was counted dead: the job's "
        f"actor asks the cluster's GCS every {check_every:g}s, and gpuherd waited "
        f"{waited:g}s for that before it counted the attempt lost (and a retry could start). "
        "A node cut off from the GCS cannot see it: the job runs on there until the node's "
        "raylet gives up on the GCS and ends, and the job with it "
        "(gcs_rpc_server_reconnect_timeout_s after the cut, 60s by default)\n"
    )


def lost_why(exc: BaseException | None, verdict: str, stderr_tail: str) -> str:
    """Why an attempt whose actor ended without an exit status is lost, in the words its
    history gives after `lost: `, where gpuherd can tell: its node's raylet died (the
    supervisor's note, `stderr_tail`), or Ray says its node died (in its `verdict`,
    ray_verdict.py, or its error); else "" (the generic words of core.lifecycle)."""
    if f"gpuherd: {RAYLET_DIED}" in stderr_tail:
        return "its Ray node died (raylet gone)"
    said = verdict or (whole_text(exc) if exc is not None else "")
    if NODE_DIED.search(said):
        return NODE_LEFT
    return ""


def actor_died_note(exc: BaseException, verdict: str = "") -> str:
    """The line a lost attempt's stderr gets: why its actor died, in Ray's `verdict` when it
    gave one (ray_verdict.py), else its error's reason."""
    why = " ".join(verdict.split())[:REASON_CHARS] if verdict else reason(exc)
    return f"gpuherd: the job's Ray actor ended without an exit status: {why}\n"


def first_line(exc: BaseException) -> str:
    text = clean_lines(str(exc)).strip()
    return text.splitlines()[0] if text else type(exc).__name__
