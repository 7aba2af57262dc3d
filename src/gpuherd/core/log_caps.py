"""`--max-log-size`: which of a running job's logs grew past its cap, and how its end says so
(pure: the sizes are read by log_cap_watch.py).

Each log has the cap, stdout's and stderr's apart: the cap is what `ls -l` shows of one file,
and the reason can name the file that grew. A job's logs take at most twice the cap, plus
what it writes until its check comes and in its grace. The cap counts what an attempt writes:
a retry adding to the file its job's earlier attempts wrote counts from the file's size as it
began.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from gpuherd.core.int64 import LARGEST, TOO_LARGE
from gpuherd.core.units import format_size, parse_memory

LogSize = tuple[str, int]
"""A log's name as the reason says it (stdout, stderr; output for one file holding both), and
its bytes."""
LogBases = Mapping[str, int]
"""By a log's name, the bytes it held as its attempt began (a retry adding to the job's
`--output` file): the cap counts what the attempt wrote. A log not named began empty."""
NO_BASES: LogBases = {}


def parse_log_cap(text: str) -> int | None:
    """A cap as `--max-log-size` and `config set max-log-size` take it: a size (10G, 500MiB;
    a bare number under 1 MiB is refused as a forgotten unit, as --mem's), or none (no cap)."""
    if text.strip().lower() == "none":
        return None
    try:
        cap = parse_memory(text)
    except ValueError as exc:
        raise ValueError(f"{exc}; or none (no cap)") from None
    if cap > LARGEST:  # (no job could store it)
        raise ValueError(f"invalid size {text!r}: {TOO_LARGE} bytes; or none (no cap)")
    return cap


def sent_log_cap(text: str) -> int:
    """A cap as a request carries it: bytes, or 0 for `none` said (no cap, whatever the
    daemon's setting: a request's None, or no value, is the daemon's `config max-log-size`)."""
    return parse_log_cap(text) or 0


def show_log_cap(cap: int | None) -> str:
    return "none" if cap is None else cap_said(cap)


def over_cap(sizes: Sequence[LogSize], cap: int, bases: LogBases = NO_BASES) -> list[LogSize]:
    """The logs of `sizes` that grew past `cap` bytes (reaching it is allowed) since their
    attempt began (`bases`)."""
    return [(name, size) for name, size in sizes if size - bases.get(name, 0) > cap]


def cap_said(cap: int) -> str:
    """A cap as a person gives it: `10 GiB`, `1.5 GiB`, `2 MiB` (format_size, without `.0`)."""
    return format_size(cap).replace(".0 ", " ")


def log_too_large(over: Sequence[LogSize], cap: int, bases: LogBases = NO_BASES) -> str:
    """Why a job stopped for its --max-log-size ended: `its stdout log reached 10.0 GiB, over
    --max-log-size 10 GiB (stopped)`; `over`: its logs over the cap as it ended (none: they
    were moved or emptied since the stop, or cannot be read). A log that held earlier
    attempts' output (`bases`) says what this attempt wrote, and the file's size: `its output
    log grew 10.0 GiB in this attempt (to 25.0 GiB)`."""
    said = f"over --max-log-size {cap_said(cap)} (stopped)"
    if not over:
        return f"a log grew {said}"
    sizes: list[str] = []
    for name, size in over:
        if base := bases.get(name, 0):
            grew = f"grew {format_size(size - base)} in this attempt (to {format_size(size)})"
        else:
            grew = f"{'' if sizes else 'reached '}{format_size(size)}"
        sizes.append(f"its {name} log {grew}")
    return f"{' and '.join(sizes)}, {said}"
