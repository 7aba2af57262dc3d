"""program_hints for the Python API, a sweep and the dashboard's form: each fix in the words of
where the command was given; Python's and a sweep's name the command up to its program (the
rest as written, `...`), so that nothing of the command's own is respelt as a Python keyword,
and a sweep's hint is read once from its template, for all its points."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuherd.program_hints import program_hints, sweep_program_hints
from gpuherd.pyapi_values import python_spelling

ENV = {"PATH": "/usr/bin:/bin"}


@pytest.fixture
def work(tmp_path: Path) -> Path:
    (tmp_path / "job.sh").write_text("echo hi\n")
    (tmp_path / "job.sh").chmod(0o755)
    return tmp_path


def fix_of(hints: list[str]) -> str:
    (hint,) = hints
    return hint.partition('"not found"; ')[2]


@pytest.mark.parametrize(
    ("command", "fix"),
    [
        ("job.sh", "herd.submit('./job.sh') (or sh job.sh)"),
        ("job.sh --lr 0.1 > out.txt", "herd.submit('./job.sh ...') (or sh job.sh)"),
        ("  X=1 'job.sh' --lr 0.1", "herd.submit('X=1 ./job.sh ...') (or sh job.sh)"),
    ],
)
def test_pythons_fix_is_its_call_up_to_the_program(work: Path, command: str, fix: str) -> None:
    assert fix_of(program_hints(command, str(work), ENV, "python")) == fix


def test_the_commands_own_options_are_not_respelt_as_keywords(work: Path) -> None:
    # (Python's warnings say `--name`, `--cwd` as `name=`, `cwd=`: of the CLI's options only)
    hints = program_hints("job.sh --name a --cwd b --force", str(work), ENV, "python")
    assert [python_spelling(hint) for hint in hints] == hints
    assert "--name" not in hints[0]


def test_a_forms_lines_alike_share_one_warning(work: Path) -> None:
    first = program_hints("job.sh 1", str(work), ENV, "dashboard")
    assert first == program_hints("X=2 job.sh 2 > x", str(work), ENV, "dashboard")
    assert fix_of(first) == "write ./job.sh in 'commands' (or sh job.sh)"


def test_a_sweep_is_judged_by_its_template_for_its_points(work: Path) -> None:
    (hint,) = sweep_program_hints("job.sh --lr {lr}", str(work), ENV, 10_000)
    assert hint == (
        f'job.sh is a file in {work} but not on PATH: every point will fail with "not found";'
        " write the sweep's command as './job.sh ...' (or sh job.sh)"
    )
    (one,) = sweep_program_hints("'job.sh' {lr}", str(work), ENV, 1)
    assert " the point will fail " in one


@pytest.mark.parametrize(
    ("template", "points"),
    [
        ("job.sh --lr {lr}", 0),  # nothing submitted (done, or queued already)
        (None, 5),  # a task's sweep
        ("{script} --lr {lr}", 5),  # each point's own program: unsure
        ("PATH=.:$PATH job.sh {lr}", 5),  # PATH set on the line itself
        ("./job.sh {lr}", 5),
    ],
)
def test_a_sweep_with_nothing_to_say(work: Path, template: str | None, points: int) -> None:
    (work / "{script}").write_text("")  # (a file of that very name: not what a point runs)
    assert sweep_program_hints(template, str(work), ENV, points) == []
