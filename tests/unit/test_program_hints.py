"""program_hints: the fix a hint of a program not found gives is the job's command with only its
program changed, the rest as written (an edit's `--command` replaces the whole line: its
redirections and quotes must stay as they were), and submit's words are as they were."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuherd.program_hints import JOB_IDS, not_on_path_hint, spaced_program_hint, with_program

ENV = {"PATH": "/usr/bin:/bin"}


@pytest.mark.parametrize(
    ("command", "meant"),
    [
        ("job.sh", "./job.sh"),
        ("job.sh --lr 0.1 > out.txt 2>&1", "./job.sh --lr 0.1 > out.txt 2>&1"),
        ("'job.sh' 'a b'", "./job.sh 'a b'"),
        ('A=1 B="x y" job.sh  "$HOME"', 'A=1 B="x y" ./job.sh  "$HOME"'),
        ("  job.sh\tx", "  ./job.sh\tx"),
        ("X=1 \\\n  job.sh y", "X=1   ./job.sh y"),  # (the shell joins a continued line)
        ("A=é 'jöb.sh' ü", "A=é ./job.sh ü"),  # (where a word ends: in characters)
        ("X=1", None),
        ("job.sh 'open", None),
    ],
)
def test_the_program_is_replaced_as_written_and_the_rest_kept(
    command: str, meant: str | None
) -> None:
    assert with_program(command, ENV, "./job.sh") == meant


def test_an_edit_names_its_jobs_where_they_will_be_filled_in(tmp_path: Path) -> None:
    (tmp_path / "job.sh").write_text("echo hi\n")
    (tmp_path / "job.sh").chmod(0o755)
    hint = not_on_path_hint("job.sh > out.txt", str(tmp_path), ENV, "edit")
    assert hint is not None
    assert hint.endswith(f"; gpuherd edit {JOB_IDS} --command './job.sh > out.txt' (or sh job.sh)")
    submitted = not_on_path_hint("job.sh > out.txt", str(tmp_path), ENV)
    assert submitted is not None and submitted.endswith("; submit ./job.sh (or sh job.sh)")


def test_a_spaced_program_after_an_assignment_keeps_the_assignment_once(tmp_path: Path) -> None:
    # (it gave `python a.py 'python a.py' --lr 1`: the words after the first, the program too)
    hint = spaced_program_hint("X=1 'python a.py' --lr 1", str(tmp_path), ENV)
    assert hint is not None and hint.endswith("(gpuherd submit -- X=1 python a.py --lr 1)")
    edit = spaced_program_hint("X=1 'python a.py' --lr 1", str(tmp_path), ENV, "edit")
    assert edit is not None
    assert edit.endswith(f"(gpuherd edit {JOB_IDS} --command 'X=1 python a.py --lr 1')")
