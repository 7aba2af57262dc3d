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


def test_a_sweep_named_near_a_verb_is_no_typo(daemon: Herd, tmp_path: Path) -> None:
    """A sweep really named `lss` (or `stauts`): `gpuherd sweep lss` said "did you mean
    gpuherd sweep ls?", as though no such sweep were there. It is refused as any sweep's
    name is, with how to see that sweep; a word near a verb that names no sweep is a typo."""
    for name in ("lss", "stauts"):
        daemon.cli("sweep", "echo {x}", "-p", "x", "1", "--name", name, "-q", cwd=tmp_path)
    needs = (
        "give a command template with {placeholders} and -p NAME VALUES... "
        '("python train.py --lr {lr}" -p lr 0.1 0.01), or a sweep file'
    )
    for typed in (["lss"], ["lss", "--json"], ["stauts"], ["stauts", "lss"]):
        name = typed[0]
        assert daemon.usage_error("sweep", *typed) == (
            f"gpuherd: error: sweep {name}: {needs}; to see the existing sweep {name}: "
            f"gpuherd sweep status {name} (see gpuherd sweep --help)\n"
        )
    (row,) = daemon.json("sweep", "status", "lss")["rows"]  # (the verb typed right)
    assert row["folder"] == "x=1"
    assert "did you mean gpuherd sweep ls?" in daemon.usage_error("sweep", "lsss")
    assert "did you mean gpuherd sweep status lss?" in daemon.usage_error("sweep", "sttaus", "lss")


def test_a_sweep_name_near_an_existing_one_is_told_the_sweep_meant(
    daemon: Herd, tmp_path: Path
) -> None:
    # Before: `no sweep named 'lsss': gpuherd sweep ls lists the sweeps`, no word of `lss`.
    daemon.cli("sweep", "echo {x}", "-p", "x", "1", "--name", "lss", "-q", cwd=tmp_path)
    meant = "no sweep named 'lsss' (did you mean 'lss'?): `gpuherd sweep ls` lists the sweeps\n"
    for verb in ("status", "rm", "wait"):
        said = daemon.cli("sweep", verb, "lsss", check=False)
        assert (said.returncode, said.stderr) == (1, f"gpuherd: error: {meant}"), verb
    far = daemon.cli("sweep", "status", "other", check=False)
    assert far.stderr == (
        "gpuherd: error: no sweep named 'other': `gpuherd sweep ls` lists the sweeps\n"
    )
    assert len(daemon.json("sweep", "status", "lss")["rows"]) == 1  # (rm lsss left it)
