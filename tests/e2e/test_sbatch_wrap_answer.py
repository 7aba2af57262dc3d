"""Another tool's submit typed with its options is answered with the command it queues:
`gpuherd sbatch --wrap "python t.py"` was answered `gpuherd submit -- ./job.sh queues a
script`, the command dropped, and `gpuherd pueue add --label x -- CMD` with the generic
`gpuherd submit -- CMD queues a command`."""

from __future__ import annotations

import pytest

from conftest import Herd

WRAPPED = [
    (["sbatch", "--wrap", "python t.py"], "gpuherd submit -- python t.py queues it"),
    (["sbatch", "--wrap=python t.py"], "gpuherd submit -- python t.py queues it"),
    # sh runs one argument as written, as sbatch runs what --wrap gives it
    (["sbatch", "--wrap", "python t.py > out"], "gpuherd submit -- 'python t.py > out'"),
    (["sbatch", "-J", "r1", "--wrap", "hostname"], "gpuherd submit -- hostname queues it"),
]


def test_sbatch_wrap_is_answered_with_its_command(herd: Herd) -> None:
    for typed, answer in WRAPPED:
        said = herd.usage_error(*typed)
        assert said.startswith(f"gpuherd: error: No such command 'sbatch': {answer}"), said
        assert "(Slurm's sbatch --wrap)" in said
        assert "job.sh" not in said
    # a script is answered as before
    said = herd.usage_error("sbatch", "train.sh")
    assert "gpuherd submit -- ./job.sh queues a script (Slurm's sbatch)" in said


@pytest.mark.parametrize(
    ("typed", "answer"),
    [
        (["--label", "x", "--", "python", "t.py"], "gpuherd submit --name x -- python t.py"),
        (["-l", "x", "--after", "3", "python", "t.py"], "gpuherd submit --name x --after 3 --"),
        (["--group", "g", "--", "python", "t.py"], "gpuherd submit --project g -- python t.py"),
    ],
)
def test_pueue_add_with_options_is_answered_with_them(
    herd: Herd, typed: list[str], answer: str
) -> None:
    said = herd.usage_error("pueue", "add", *typed)
    assert f"No such command 'pueue': {answer}" in said, said
    assert said.endswith(" queues it (pueue add) (see gpuherd --help)\n"), said
