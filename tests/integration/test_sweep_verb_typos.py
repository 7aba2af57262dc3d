"""A mistyped verb of `gpuherd sweep` (`sweep stauts s1`) was taken as a sweep's template,
and refused as one: "'s1' is one argument too many: gpuherd sweep [OPTIONS] SOURCE". It is
said as a mistyped verb, with the command meant; a real template or file still sweeps."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import Herd


@pytest.mark.parametrize(
    ("typed", "meant"),
    [
        (["stauts", "s1"], "status s1"),
        (["wiat", "s1"], "wait s1"),
        (["rmm", "a", "b c"], "rm a 'b c'"),
        (["sttaus"], "status"),  # (was: a one-word template, refused as one)
        (["lss"], "ls"),
    ],
)
def test_a_mistyped_verb_is_told_the_command_meant(
    herd: Herd, typed: list[str], meant: str
) -> None:
    said = herd.usage_error("sweep", *typed)
    assert said == (
        f"gpuherd: error: no sweep command {typed[0]!r}: did you mean gpuherd sweep {meant}? "
        "(see gpuherd sweep --help)\n"
    )


def test_only_a_word_no_sweep_could_run_is_taken_for_a_verb(herd: Herd, tmp_path: Path) -> None:
    """Alone, `stat` is no template (it has nothing to sweep over); given parameters, it is
    one (as `sweep list -p x 1`), and a file named near a verb is a sweep file."""
    assert "did you mean gpuherd sweep status?" in herd.usage_error("sweep", "stat")
    dry = herd.cli("sweep", "stat", "-p", "x", "1", "--dry-run", cwd=tmp_path)
    assert dry.stdout == "stat\n"
    (tmp_path / "stats.yaml").write_text("command: echo {x}\ngrid: {x: [1, 2]}\n")
    dry = herd.cli("sweep", "stats.yaml", "--dry-run", cwd=tmp_path)
    assert dry.stdout == "echo 1\necho 2\n"
