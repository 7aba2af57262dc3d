"""The known name closest to one mistyped (`gpu` for `gpus`), as every refusal of an unknown
name says it: a keyword of the Python API (pyapi_checks.py), a sweep file's key
(sweepfile.py)."""

from __future__ import annotations

from collections.abc import Iterable


def did_you_mean(name: str, known: Iterable[str], cutoff: float = 0.6) -> str:
    """` (did you mean 'gpus'?)` for the known name closest to `name`, or "" if none is as
    close as `cutoff` (difflib's ratio; 0.6, difflib's own, as the Python API always had)."""
    import difflib  # (only on error paths: `import gpuherd` stays light)

    close = difflib.get_close_matches(name, list(known), n=1, cutoff=cutoff)
    return f" (did you mean {close[0]!r}?)" if close else ""
