"""The known name closest to one mistyped (`gpu` for `gpus`), as every refusal of an unknown
name says it: a keyword of the Python API (pyapi_checks.py), a sweep file's key
(sweepfile.py)."""

from __future__ import annotations

from collections.abc import Iterable


def did_you_mean(name: str, known: Iterable[str], cutoff: float = 0.6) -> str:
    """` (did you mean 'gpus'?)` for the known name closest to `name`, or "" if none is."""
    guess = closest(name, known, cutoff)
    return f" (did you mean {guess!r}?)" if guess and guess != name else ""


def closest(name: str, known: Iterable[str], cutoff: float = 0.6) -> str | None:
    """The known name closest to `name`, or None if none is as close as `cutoff` (difflib's
    ratio; 0.6, difflib's own, as the Python API always had). Case aside (`GPUS`), and a
    known name the typed one begins with, but for a few letters or a unit (`memory`,
    `mem_gb`: `mem`; `timeout_s`), is the closest: difflib finds those too far. Not for a
    compound (`random_seed` is no `random`, `env_file` no `env`)."""
    import difflib  # (only on error paths: `import gpuherd` stays light)

    by_case = {k.lower(): k for k in known}
    typed = name.lower()
    starts = [
        k
        for k in by_case
        if len(k) >= 3 and typed.startswith(k) and _a_tail(typed[len(k) :].lstrip("_"))
    ]
    close = difflib.get_close_matches(typed, list(by_case), n=1, cutoff=cutoff)
    guess = by_case.get(typed) or (by_case[max(starts, key=len)] if starts else None)
    return guess or (by_case[close[0]] if close else None)


def _a_tail(rest: str) -> bool:
    """What may follow a known name in a mistyped one: a few letters (`memory`) or a unit
    (`_s`, `_gb`, `_seconds`), or `_per_job`."""
    return len(rest) <= 3 or rest in ("secs", "seconds", "per_job")
