"""A sweep file saved with a UTF-8 byte order mark (Windows PowerShell's `Out-File -Encoding
utf8`, Notepad's "UTF-8 with BOM") reads as the same file without it, in each format: a JSON
or TOML one was refused (`invalid JSON: Unexpected UTF-8 BOM`, `invalid TOML: Invalid
statement`), as `gpuherd run`'s job files drop the mark too."""

from __future__ import annotations

import codecs
from pathlib import Path

import pytest

from gpuherd.core.sweep import expand
from gpuherd.sweepfile import load_sweep

FILES = {
    "s.yaml": 'name: s\r\ncommand: echo {x}\r\ngrid:\r\n  x: [1, "a b"]\r\n',
    "s.toml": 'name = "s"\r\ncommand = "echo {x}"\r\n[grid]\r\nx = [1, "a b"]\r\n',
    "s.json": '{"name": "s", "command": "echo {x}", "grid": {"x": [1, "a b"]}}\r\n',
}


@pytest.mark.parametrize("name", sorted(FILES))
def test_a_byte_order_mark_is_dropped(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_bytes(codecs.BOM_UTF8 + FILES[name].encode())
    loaded = load_sweep(path)
    assert loaded.spec.name == "s"
    assert loaded.spec.command == "echo {x}"
    assert [p.params["x"] for p in expand(loaded.spec)] == [1, "a b"]
