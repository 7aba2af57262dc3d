"""A sweep's template, -p and --name are typed: a value they cannot take is a mistake of the
command line, exit 2 with the help's name, as an option's bad value is (docs/sweeps.md). A
bad `--name` (`a/b`, '') and a placeholder no -p gives exited 1, as the daemon's refusal of a
job it cannot take, where `--results-dir ''` exited 2. A sweep file's own values stay a
refusal of the file, exit 1."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import Herd

HELP = " (see gpuherd sweep --help)"


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (
            ["echo {x}", "-p", "x", "1", "--name", "a/b"],
            "invalid sweep: name: 'a/b' must not be . or .., nor hold '/', control characters"
            " or outer spaces: name it with '-' or '_' in their place (lr-sweep)",
        ),
        (["echo {x}", "-p", "x", "1", "--name", ""], "invalid sweep: name: empty; give the"),
        (["echo {y}", "-p", "x", "1"], "invalid sweep: command: placeholder {y} is not a"),
    ],
    ids=["name-slash", "name-empty", "placeholder"],
)
def test_a_typed_value_a_sweep_cannot_take_exits_2(
    herd: Herd, tmp_path: Path, args: list[str], said: str
) -> None:
    done = herd.cli("sweep", *args, "--dry-run", check=False, cwd=tmp_path)
    assert done.returncode == 2, done
    assert done.stderr.startswith(f"gpuherd: error: {said}") and done.stderr.endswith(HELP + "\n")


def test_a_sweep_files_own_value_is_still_the_files_refusal(herd: Herd, tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text("name: a/b\ncommand: echo {x}\ngrid:\n  x: [1]\n")
    done = herd.cli("sweep", "s.yaml", "--dry-run", check=False, cwd=tmp_path)
    assert done.returncode == 1 and done.stderr.startswith("gpuherd: error: s.yaml:1: "), done
