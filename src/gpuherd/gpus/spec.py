"""The `--gpus` and `--fake-gpus` options, parsed without touching any GPU."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from gpuherd.core.idspec import parse_gpu_range, split_items, within
from gpuherd.core.units import parse_size
from gpuherd.gpus.fake import DEFAULT_FAKE_MEMORY, FakeGpu

MAX_FAKE_GPUS = 1024

_GPU_HELP = (
    "use GPU indices like 0,1,2, 1-3 or 0 1 2 (nvidia-smi numbering; repeat one for 2 slots)"
)
"""Said by each option this parser reads (`run --gpus`, `daemon start --gpus`, connect()'s
`gpus`), all of which take ranges."""
_FAKE_HELP = "use a count (4), sizes (2x24GiB,1x80GiB) or a .json state file"


def parse_gpu_spec(tokens: str | Sequence[str]) -> dict[int, int]:
    """GPU index -> slots, in index order: "0,0,1" -> {0: 2, 1: 1} (a repeat is one more slot).

    Takes one string or argv words (simple_gpu_scheduler's `--gpus 0 1 2`), or both mixed. A
    range stands for its indices written out, as --only-gpus takes it: "0-2" is "0,1,2", so
    "0-1,0" gives GPU 0 two slots, as "0,1,0" does.
    """
    shown = tokens if isinstance(tokens, str) else " ".join(tokens)
    items = split_items(tokens)
    if not any(items):
        raise ValueError(f"no GPUs given: {_GPU_HELP}")
    slots: dict[int, int] = {}
    for item in items:
        for index in parse_gpu_range(item, shown, _GPU_HELP):
            slots[index] = slots.get(index, 0) + 1
    return dict(sorted(slots.items()))


def parse_fake_spec(text: str, name: str = "--fake-gpus") -> list[FakeGpu] | Path:
    """`--fake-gpus`: "4" -> four 24 GiB GPUs; "2x24GiB,1x80GiB"; "80GiB" (one GPU); a .json file.

    A .json path comes back as an absolute Path (the probe reads it, maybe after a chdir).
    `name` is where the text came from, as a mistake names it (GPUHERD_FAKE_GPUS).
    """
    stripped = text.strip()
    if stripped.lower().endswith(".json"):
        path = Path(stripped).expanduser()
        if not path.is_file():
            raise ValueError(f"fake GPU state file not found: {path}: create it, or {_FAKE_HELP}")
        return path.resolve()
    items = split_items(stripped)
    if not any(items):
        raise ValueError(f"no fake GPUs given: {_FAKE_HELP}")
    if len(items) > 1 and all(_is_digits(item) for item in items):
        # `1,2` read as 1 + 2 GPUs, in silence: one used to `--gpus 1,2` meant GPUs 1 and 2.
        last = max(int(item) for item in items)
        raise ValueError(
            f"{name}: {text.strip()!r} is a list of counts, not GPU indices: give one count "
            f"({last + 1} makes GPUs 0 to {last}), or sizes (2x24GiB,1x80GiB)"
        )
    gpus: list[FakeGpu] = []
    for item in items:
        count, size = _parse_fake_item(item, text, name)
        if len(gpus) + count > MAX_FAKE_GPUS:
            raise ValueError(f"too many fake GPUs in {text!r}: at most {MAX_FAKE_GPUS}")
        gpus.extend([FakeGpu(memory_total=size)] * count)
    return gpus


def _parse_fake_item(item: str, text: str, name: str) -> tuple[int, int]:
    """(count, bytes each); a bare number is a count of 24 GiB GPUs, never a size in bytes."""
    bad = f"{name}: invalid item {item!r}{within(item, text)}"  # option first, as click's are
    if not item:
        raise ValueError(f"{name}: empty item in {text!r}: {_FAKE_HELP}")
    if _is_digits(item):
        return _checked_count(int(item), bad), DEFAULT_FAKE_MEMORY
    head, times, tail = item.lower().partition("x")
    if times and not _is_digits(head):
        raise ValueError(f"{bad}: the count before 'x' must be a number; {_FAKE_HELP}")
    count, size_text = (int(head), tail.strip()) if times else (1, item)
    if _is_digits(size_text):
        # "2x24" is surely 24 GiB, not 24 bytes: make the user say which.
        raise ValueError(f"{bad}: give the size a unit, like 2x24GiB")
    try:
        size = parse_size(size_text)
    except ValueError:
        raise ValueError(f"{bad}: {_FAKE_HELP}") from None
    return _checked_count(count, bad), size


def _checked_count(count: int, bad: str) -> int:
    if count == 0:
        raise ValueError(f"{bad}: a count must be 1 or more")
    return count


def _is_digits(text: str) -> bool:
    # str.isdigit() alone accepts "²" and other digits int() rejects.
    return text.isascii() and text.isdigit()
