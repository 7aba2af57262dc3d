"""How the reasons name GPUs, jobs and `--only-gpus` (pure): "GPU 1", "GPUs 1, 3 are",
"GPUs 4-900" (a wide --only-gpus), "jobs 2, 5", "--only-gpus 0,2"."""

from __future__ import annotations

from collections.abc import Sequence

from gpuherd.core.idspec import number_runs


def gpus_named(indices: Sequence[int]) -> str:
    """ "GPU 1", "GPUs 1, 3", or as ranges past a few: "GPUs 4-900" (a wide --only-gpus)."""
    if len(indices) == 1:
        return f"GPU {indices[0]}"
    return "GPUs " + listed(indices, ", ")


def gpu_names(indices: list[int], verbs: tuple[str, str]) -> str:
    """ "GPU 1 is" or "GPUs 1, 3 are" (with the verbs given)."""
    return f"{gpus_named(indices)} {verbs[0] if len(indices) == 1 else verbs[1]}"


def only_flag(indices: Sequence[int]) -> str:
    return "--only-gpus " + listed(indices, ",")


def listed(indices: Sequence[int], sep: str) -> str:
    """Indices with runs of three or more as ranges: "0, 2", "0, 4-900" (a wide --only-gpus
    would otherwise print thousands of numbers)."""
    parts: list[str] = []
    for first, last in number_runs(indices):
        if last - first >= 2:
            parts.append(f"{first}-{last}")
        else:  # one, or a pair: "1, 2", not "1-2"
            parts += map(str, range(first, last + 1))
    return sep.join(parts)


def jobs_named(ids: Sequence[int]) -> str:
    return f"job {ids[0]}" if len(ids) == 1 else "jobs " + listed(ids, ", ")
