"""A sweep file's mistakes, each one line naming the file and its line, as its other errors
are: a TOML syntax error (it read `sw4.toml: invalid TOML: … (at line 2, column 6)`), an
empty `name: ""` (it said `name: must not be empty`, not what to do), and an `output:` whose
folder does not exist (it was named as the flag `--output`, never typed). `sweep --dry-run`
needs no daemon: none is started."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import Herd
from gpuherd.sweepfile import SweepFileError, parse_sweep


def refused(herd: Herd, work: Path, *args: str) -> tuple[int, str]:
    done = herd.cli("sweep", *args, "--dry-run", check=False, cwd=work)
    assert done.stdout == ""
    return done.returncode, done.stderr


def test_a_toml_syntax_error_names_its_line(herd: Herd, tmp_path: Path) -> None:
    (tmp_path / "sw4.toml").write_text('command = "echo {x}"\nname = ab cd\n[grid]\nx = [1]\n')
    assert refused(herd, tmp_path, "sw4.toml") == (
        1,
        "gpuherd: error: sw4.toml:2: invalid TOML: Invalid value (column 8)\n",
    )
    with pytest.raises(SweepFileError, match=r"^s\.toml: invalid TOML: .*at end of document"):
        parse_sweep("x = [1,\n", "s.toml")  # no line to name: as before


def test_an_empty_name_says_what_to_do_and_which_name_leaving_it_out_gives(
    herd: Herd, tmp_path: Path
) -> None:
    (tmp_path / "o16.yaml").write_text('command: echo {x}\ngrid: {x: [1]}\nname: ""\n')
    assert refused(herd, tmp_path, "o16.yaml") == (
        1,
        "gpuherd: error: o16.yaml:3: name: empty; give the sweep a name, or leave it out for"
        " the default one (the file's name without its suffix, o16)\n",
    )
    named = herd.cli("sweep", "o16.yaml", "--dry-run", cwd=tmp_path, check=False)
    assert named.returncode == 1  # (refused as the file is read, whatever --name says)
    (tmp_path / "o16.yaml").write_text("command: echo {x}\ngrid: {x: [1]}\n")
    assert herd.cli("sweep", "o16.yaml", "--dry-run", cwd=tmp_path).stderr.endswith(
        "1 command of sweep o16 (dry run: nothing submitted)\n"
    )


def test_an_output_folder_missing_is_named_where_it_was_given(herd: Herd, tmp_path: Path) -> None:
    (tmp_path / "o.yaml").write_text(
        "command: echo {x}\ngrid: {x: [1]}\ngpus: 0\noutput: nodir/%x.log\n"
    )
    missing = "the folder {} does not exist: create it (mkdir -p {}) first"
    assert refused(herd, tmp_path, "o.yaml") == (
        1,
        "gpuherd: error: o.yaml:4: output: nodir/%x.log: "
        + missing.format(tmp_path / "nodir", tmp_path / "nodir")
        + "\n",
    )
    (tmp_path / "e.toml").write_text(
        'command = "echo {x}"\nerror = "nodir/%x.err"\n[grid]\nx = [1]\n'
    )
    assert refused(herd, tmp_path, "e.toml") == (
        1,
        "gpuherd: error: e.toml: error: nodir/%x.err: "
        + missing.format(tmp_path / "nodir", tmp_path / "nodir")
        + "\n",
    )
    # A flag's value is the flag's, over the file's too: a mistake of the command line.
    assert refused(herd, tmp_path, "o.yaml", "-o", "gone/%x.log") == (
        2,
        "gpuherd: error: --output gone/%x.log: "
        + missing.format(tmp_path / "gone", tmp_path / "gone")
        + " (see gpuherd sweep --help)\n",
    )
    (tmp_path / "nodir").mkdir()
    assert "1 command of sweep o" in herd.cli("sweep", "o.yaml", "--dry-run", cwd=tmp_path).stderr
