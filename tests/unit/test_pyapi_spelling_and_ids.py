"""The Python API's words for the CLI's: a warning's options respelt as keywords, but never
inside what it quotes (the command its fix gives: `'./job.sh --name x'` became `'./job.sh
name= x'`, which runs something else); and a job id past 64 bits said too large (it was told
"a whole number from 1 up", which 10**30 is). None of these asks a daemon."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from gpuherd.client import Client
from gpuherd.pyapi import Herd
from gpuherd.pyapi_types import WrongValue
from gpuherd.pyapi_values import python_spelling


def test_the_warnings_own_options_are_respelt_as_keywords() -> None:
    said = "use another --name to keep both; --force runs them again (or pass --cwd)"
    assert python_spelling(said) == (
        "use another name= to keep both; force=True runs them again (or pass cwd=)"
    )


@pytest.mark.parametrize(
    "quoted",
    [
        shlex.quote("./job.sh --name x --cwd /data --force"),  # an edit's fix, a sweep's
        shlex.quote("./it's --name x"),  # a shell word holding a quote: '"'"'
        repr("./job.sh --name x"),  # Python's herd.submit('...'), a program's name
        repr('it\'s "--name" --cwd'),  # a repr holding both quotes: \'
    ],
)
def test_a_quoted_command_in_a_warning_stays_as_written(quoted: str) -> None:
    said = f"job 3: the sweep's fix is {quoted} (or give another --name)"
    assert python_spelling(said) == f"job 3: the sweep's fix is {quoted} (or give another name=)"


@pytest.mark.parametrize("job_id", [10**30, "1" + "0" * 30, 2**63])
def test_a_job_id_past_64_bits_is_said_too_large(tmp_path: Path, job_id: int | str) -> None:
    herd = Herd(Client(tmp_path / "home"))
    with pytest.raises(WrongValue) as refused:
        herd.job(job_id)
    assert str(refused.value) == f"job id {int(job_id)} is too large (at most 2**63 - 1)"
    assert herd.job(2**63 - 1).id == 2**63 - 1  # (the largest is a job id)
    with pytest.raises(WrongValue, match="from 1 up"):
        herd.job(0)  # (under the least: as it was)


def test_a_move_before_a_job_id_past_64_bits_is_said_too_large(tmp_path: Path) -> None:
    job = Herd(Client(tmp_path / "home")).job(3)
    with pytest.raises(WrongValue) as refused:
        job.move(before=10**30)  # (refused before any daemon is asked)
    assert str(refused.value) == f"before {10**30} is too large (at most 2**63 - 1)"
    with pytest.raises(WrongValue, match="from 1 up"):
        job.move(swap=-1)
