"""A sweep file over the size limit is refused whatever its text: the limit was checked on
the characters of what was read, the first MAX_FILE_BYTES + 1 bytes. With a byte order mark
(now dropped) or non-ASCII text those are fewer than the bytes, so a larger file was cut at
the limit and its first part read as the whole file: a grid silently cut short."""

from __future__ import annotations

import codecs
from pathlib import Path

import pytest

from gpuherd.sweepfile import MAX_FILE_BYTES, SweepFileError, load_sweep


def _long_grid(values: int) -> str:
    return "command: echo {x}\ngrid:\n  x:\n" + "".join(f"  - {i}\n" for i in range(values))


@pytest.mark.parametrize(
    ("head", "comment"),
    [(codecs.BOM_UTF8, ""), (b"", "# \u00e9t\u00e9 " * 40_000 + "\n")],
    ids=["byte-order-mark", "non-ascii"],
)
def test_a_file_over_the_limit_is_refused_not_cut(
    tmp_path: Path, head: bytes, comment: str
) -> None:
    path = tmp_path / "big.yaml"
    path.write_bytes(head + (comment + _long_grid(200_000)).encode())
    assert path.stat().st_size > MAX_FILE_BYTES + 1
    with pytest.raises(SweepFileError, match=r"big\.yaml: larger than 1 MiB: .*narrow it"):
        load_sweep(path)


def test_a_file_at_the_limit_with_a_byte_order_mark_is_read(tmp_path: Path) -> None:
    text = _long_grid(10)
    path = tmp_path / "edge.yaml"
    path.write_bytes(codecs.BOM_UTF8 + text.encode() + b"#" * (MAX_FILE_BYTES - 3 - len(text)))
    assert path.stat().st_size == MAX_FILE_BYTES
    assert load_sweep(path).spec.grids[0]["x"] == tuple(range(10))
