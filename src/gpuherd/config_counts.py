"""The count settings of `gpuherd config` (a part of config.py): `retries`, `max-running`,
`cpu-jobs` and `project-limits`, read as `submit --retries` reads a count.

A count was Python's int() of the text: `1_000`, `٣` (Arabic-Indic) and `١٠` were taken as
1000, 3 and 10, which `submit --retries` refuses (`'1_000' is not a whole number`). It is now
core/int64.WHOLE_TEXT's, as the CLI's counts are. A value saved before (`saved`) is read as
it was taken: refused at the load, the user's setting were dropped for the default.
"""

from __future__ import annotations

from gpuherd.core.int64 import LARGEST, LARGEST_SAID, WHOLE_TEXT, whole

AUTO = "auto"
"""A value that means the setting's default where the daemon runs (`cpu-jobs auto`)."""


def _number(text: str, saved: bool) -> int | None:
    """The whole number `text` says (blanks around it aside), None if it says none."""
    stripped = text.strip()
    try:
        if saved:
            return int(stripped)
        return whole(stripped) if WHOLE_TEXT.fullmatch(stripped) else None
    except ValueError:  # (more than 4,300 digits, saved)
        return None


def whole_count(text: str, least: int, or_else: str = "", saved: bool = False) -> int:
    """A whole number from `least` up to what the store holds: a larger one, saved, made
    every job that took it fail to submit ("a number in the request is too large")."""
    value = _number(text, saved)
    if value is None or not least <= value <= LARGEST:
        raise ValueError(
            f"invalid count '{text}': use a number from {least} to {LARGEST_SAID}{or_else}"
        )
    return value


def count(text: str, words: str = "or none (no cap)", saved: bool = False) -> int | None:
    """A count from 1, or none; a refusal names the `words` taken beside a number."""
    if text.strip().lower() in ("none", "unlimited"):
        return None
    # From 1: 0 meant "no cap", the opposite of what it says.
    return whole_count(text, 1, f", {words}", saved)


def retries(text: str, saved: bool = False) -> int:
    return whole_count(text, 0, saved=saved)


def cpu_jobs(text: str, saved: bool = False) -> int | str | None:
    if text.strip().lower() == AUTO:
        return AUTO
    return count(text, "auto (one per core of this machine) or none (no cap)", saved)


def project_limits(text: str, saved: bool = False) -> tuple[tuple[str, int], ...]:
    """`lr-sweep=2,eval=1` (none = no limits): at most N jobs of each project at once. A
    project given twice is refused, and a name with `=` in it (`a=1=2`, a typo, was taken as
    project `a=1`) or a NUL byte (taken, and matched by no project: a job's cannot hold
    one), unless `saved`: a value saved before those refusals is read as it was taken (a
    project at its last count; the last `=` splits)."""
    if text.strip().lower() in ("", "none"):
        return ()
    limits: dict[str, int] = {}
    for item in text.split(","):
        name, sep, number_text = item.strip().rpartition("=")
        name = name.strip()
        # (isdecimal() and int() before: `p=٣` was taken as 3, which `submit` refuses)
        number = _number(number_text, saved)
        if not sep or not name or number is None or not 1 <= number <= LARGEST:
            raise ValueError(
                f"invalid limit '{item.strip()}': use PROJECT=N with N from 1 to {LARGEST_SAID}, "
                "comma-separated (lr-sweep=2,eval=1), or none"
            )
        if not saved:
            _check_limit(item, name, number, limits)
        limits[name] = number
    return tuple(sorted(limits.items()))


def _check_limit(item: str, name: str, number: int, limits: dict[str, int]) -> None:
    """ValueError for a limit given now that no project can match, or given twice."""
    words = item.split()
    if len(words) > 1 and all("=" in word for word in words):
        # (`'g=1 h=2'`: not a project `g=1 h` with an `=` in it, as it was said to be)
        raise ValueError(
            f"invalid limit '{item.strip()}': separate limits with commas, not spaces: "
            f"{','.join(words)}"
        )
    if "=" in name:
        raise ValueError(
            f"invalid limit '{item.strip()}': a project name cannot contain '=': use "
            "PROJECT=N, comma-separated (lr-sweep=2,eval=1)"
        )
    if "\0" in name:  # (said without the name: a terminal shows no NUL)
        raise ValueError(
            "invalid limit: a NUL byte in a project name: remove it (no job's project can hold one)"
        )
    if name in limits:  # (a typo, most likely)
        twice = f"{name}={limits[name]}, {name}={number}"
        raise ValueError(f"project '{name}' is given twice ({twice}): keep one")


def show_limits(limits: tuple[tuple[str, int], ...]) -> str:
    return ",".join(f"{name}={number}" for name, number in limits) or "none"
