"""A user's `mypy --strict` over a script of theirs that uses gpuherd (the tests of the types
gpuherd ships, py.typed): the script's errors, one string each."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

import gpuherd


def mypy_strict(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str) -> list[str]:
    mypy_api = pytest.importorskip("mypy.api")
    script = tmp_path / "user_script.py"
    script.write_text(textwrap.dedent(text))
    # The gpuherd under test (PYTHONPATH's, if set) rather than the one installed; its own
    # errors are mypy's run over the project's business (silent): the script's are looked at.
    monkeypatch.setenv("MYPYPATH", str(Path(gpuherd.__file__).resolve().parents[1]))
    cache = str(tmp_path / "cache")
    args = ["--strict", "--follow-imports=silent", "--no-error-summary", "--cache-dir", cache]
    out, err, _ = mypy_api.run([*args, str(script)])
    assert not err, err
    return [line.split(": error: ", 1)[1] for line in out.splitlines() if ": error: " in line]
