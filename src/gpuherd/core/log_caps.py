"""`--max-log-size`: which of a running job's logs grew past its cap, and how its end says so
(pure: the sizes are read by log_cap_watch.py).

Each log has the cap, stdout's and stderr's apart: the cap is what `ls -l` shows of one file,
and the reason can name the file that grew. A job's logs take at most twice the cap, plus
what it writes until its check comes and in its grace.
"""

from __future__ import annotations

from collections.abc import Sequence

from gpuherd.core.int64 import LARGEST, TOO_LARGE
from gpuherd.core.units import format_size, parse_memory

LogSize = tuple[str, int]
"""A log's name as the reason says it (stdout, stderr; output for one file holding both), and
its bytes."""


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


def show_log_cap(cap: int | None) -> str:
    return "none" if cap is None else cap_said(cap)


def over_cap(sizes: Sequence[LogSize], cap: int) -> list[LogSize]:
    """The logs of `sizes` that grew past `cap` bytes (reaching it is allowed)."""
    return [(name, size) for name, size in sizes if size > cap]


def cap_said(cap: int) -> str:
    """A cap as a person gives it: `10 GiB`, `1.5 GiB`, `2 MiB` (format_size, without `.0`)."""
    return format_size(cap).replace(".0 ", " ")


def log_too_large(over: Sequence[LogSize], cap: int) -> str:
    """Why a job stopped for its --max-log-size ended: `its stdout log reached 10.0 GiB, over
    --max-log-size 10 GiB (stopped)`; `over`: its logs over the cap as it ended (none: they
    were moved or emptied since the stop, or cannot be read)."""
    said = f"over --max-log-size {cap_said(cap)} (stopped)"
    if not over:
        return f"a log grew {said}"
    first, *rest = over
    sizes = [f"its {first[0]} log reached {format_size(first[1])}"]
    sizes += [f"its {name} log {format_size(size)}" for name, size in rest]
    return f"{' and '.join(sizes)}, {said}"
