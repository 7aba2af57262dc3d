"""A parameter named by digits only is refused where it is given, in one line saying to name it:
`-p 0 1 2`, a sweep file's grid key "0", Python's and POST /api/v1/sweeps's (real daemon). It
was taken, and no template could use it (`{0}` is a position: "needs a parameter name", whose
hint offered `{0}`, the text typed, once `-p 0` was given)."""

from __future__ import annotations

from pathlib import Path

import pytest

import gpuherd
from conftest import Herd
from gpuherd.errors import InvalidValue
from gpuherd.pyapi_types import WrongValue

REFUSED = (
    "invalid sweep: grid.0: a name of digits only cannot be a placeholder ({0} is a position,"
    " not a name); name it, e.g. p0"
)


def refused_cli(daemon: Herd, work: Path, *args: str) -> str:
    """The refusal's stderr: of a sweep file, exit 1; of a template and -p typed, a mistake of
    the command line, exit 2, its line ending in the help's name (taken off here)."""
    proc = daemon.cli("sweep", *args, "--gpus", "0", check=False, cwd=work)
    typed = not args[0].endswith(".yaml")
    assert proc.returncode == (2 if typed else 1), proc
    return proc.stderr.replace(" (see gpuherd sweep --help)\n", "\n") if typed else proc.stderr


def test_a_digits_only_name_is_refused_however_the_sweep_is_given(
    shared_daemon: Herd, shared_work: Path
) -> None:
    daemon, work = shared_daemon, shared_work
    before = daemon.json("sweep", "ls")
    for dry in (["--dry-run"], []):
        said = refused_cli(daemon, work, "echo {0}", "-p", "0", "1", "2", "--name", "d", *dry)
        assert said == f"gpuherd: error: {REFUSED}\n"
        said = refused_cli(daemon, work, "echo {a}", "-p", "a", "1", "-p", "0", "1", "2", *dry)
        assert said == f"gpuherd: error: {REFUSED}\n"
    (work / "s.yaml").write_text('command: echo {x}\ngrid:\n  x: [1]\n  "0": [1, 2]\n')
    assert refused_cli(daemon, work, "s.yaml") == f"gpuherd: error: s.yaml:4: {REFUSED[15:]}\n"
    api = gpuherd.connect(daemon.home, start=False)
    with pytest.raises(WrongValue) as wrong:
        api.sweep("echo {a}", {"a": [1], "0": [1, 2]}, gpus=0, cwd=work)
    assert str(wrong.value) == REFUSED
    spec = {"name": "d", "command": "echo {a}", "grids": [{"a": [1], "0": [1, 2]}]}
    with pytest.raises(InvalidValue) as invalid:
        daemon.client.post("/sweeps", {"spec": spec, "cwd": str(work)})
    assert str(invalid.value) == REFUSED
    assert daemon.json("sweep", "ls") == before  # nothing was submitted
    # `{0}` with no such parameter: its hint is the braces doubled, never the text typed.
    said = refused_cli(daemon, work, "echo {0} {a}", "-p", "a", "1", "--dry-run")
    assert said.endswith("needs a parameter name; write {{ and }} for literal braces: {{0}}\n")
