"""How the reasons name GPUs, jobs and `--only-gpus` (pure): "GPU 1", "GPUs 1, 3 are",
"GPUs 4-900" (a wide --only-gpus), "jobs 2, 5", "--only-gpus 0,2"."""

from __future__ import annotations

from collections.abc import Sequence

from gpuherd.core.idspec import number_runs


def gpus_named(indices: Sequence[int], most: int | None = None) -> str:
    """ "GPU 1", "GPUs 1, 3", or as ranges past a few: "GPUs 4-900" (a wide --only-gpus);
    with `most`, at most that many numbers or ranges, then how many GPUs more: "GPUs 0, 2,
    4, 6, 8, 10 and 26 more" (`listed`)."""
    if len(indices) == 1:
        return f"GPU {indices[0]}"
    return "GPUs " + listed(indices, ", ", most)


def gpu_names(indices: list[int], verbs: tuple[str, str], most: int | None = None) -> str:
    """ "GPU 1 is" or "GPUs 1, 3 are" (with the verbs given; `most` as for gpus_named)."""
    return f"{gpus_named(indices, most)} {verbs[0] if len(indices) == 1 else verbs[1]}"


def only_flag(indices: Sequence[int]) -> str:
    return "--only-gpus " + listed(indices, ",")


def listed(indices: Sequence[int], sep: str, most: int | None = None) -> str:
    """Indices with runs of three or more as ranges: "0, 2", "0, 4-900" (a wide --only-gpus
    would otherwise print thousands of numbers). With `most`, the first `most` numbers or
    ranges, then " and 26 more" (the indices left out): every other GPU of 64 named in a
    reason made a line of 300 characters per cause."""
    parts: list[tuple[str, int]] = []  # (as said, how many indices)
    for first, last in number_runs(indices):
        if last - first >= 2:
            parts.append((f"{first}-{last}", last - first + 1))
        else:  # one, or a pair: "1, 2", not "1-2"
            parts += ((str(i), 1) for i in range(first, last + 1))
    if most is None or len(parts) <= most:
        return sep.join(said for said, _ in parts)
    rest = sum(n for _, n in parts[most:])
    return sep.join(said for said, _ in parts[:most]) + f" and {rest:,} more"


def jobs_named(ids: Sequence[int]) -> str:
    return f"job {ids[0]}" if len(ids) == 1 else "jobs " + listed(ids, ", ")
