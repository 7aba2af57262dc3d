"""Mistakes that click used to word (`No such option '-1'`, `'high' is not a valid integer.`,
`Invalid value for '--begin': invalid --begin ...`) get gpuherd's one line: what is wrong,
what to do, exit status 2 as for every other usage error, and nothing done."""

from __future__ import annotations

import pytest
from test_cli_errors import BIG, shared

from conftest import Herd

__all__ = ["shared"]  # the module's daemon (job 1 held, job 2 succeeded), by name

EVERY_JOB = "gpuherd ls --all lists every job"
NEGATIVE = f"invalid job id '-1': job ids are positive numbers; {EVERY_JOB}"
BEGIN_FORMS = (
    "use now, +DURATION (+30m, +2h), a time of day (23:30) or a date and time (2026-11-26T02:00)"
)
GPU_FORMS = "use GPU indices like 0, 0-3 or 0,2"
ONLY_GPUS = {
    "9x": f"invalid GPU index '9x' in '9x': {GPU_FORMS}",
    "-1": f"invalid GPU index '-1' in '-1': {GPU_FORMS}",
    BIG: f"GPU {BIG} in '{BIG}' is not a GPU index: at most 4095",
}
ONLY_GPUS_VERBS = {  # what comes before --only-gpus, and after it
    "submit": ([], ["true"]),
    "sweep": (["true {x}", "-p", "x", "1"], []),
    "edit": (["1"], []),
}


WORDING = [
    # A negative job id was taken for an option: "No such option '-1'".
    (["show", "-1"], NEGATIVE, "show"),
    *[([verb, "-1"], NEGATIVE, verb) for verb in ("log", "kill", "rm", "retry", "wait")],
    *[([verb, "-1"], NEGATIVE, verb) for verb in ("hold", "release", "pause", "resume")],
    (["kill", "2", "-1"], NEGATIVE, "kill"),
    (["retry", "--hold", "-1"], NEGATIVE, "retry"),
    (["edit", "-1", "--gpus", "1"], NEGATIVE, "edit"),
    (["move", "-1", "--first"], NEGATIVE, "move"),
    (["move", "2", "--before", "-1"], NEGATIVE, "move"),
    (["priority", "-1", "5"], NEGATIVE, "priority"),
    (
        ["kill", "-3-5"],
        f"invalid job id '-3-5': job ids are positive numbers; {EVERY_JOB}",
        "kill",
    ),
    # After `--`, an id: refused by the id parser, without click's "Invalid value for IDS".
    (["kill", "--", "-1"], "invalid job id '-1' in '-1': use ids like 5, 3-7,9 or 1 2 3", "kill"),
    # A word where a priority goes: "'high' is not a valid integer."
    (
        ["priority", "1", "high"],
        "a priority is a whole number, not 'high': higher runs first (the default is 0), "
        "e.g. gpuherd priority 1 10",
        "priority",
    ),
    (
        ["submit", "-p", "1.5", "--", "true"],
        "--priority takes a whole number, not '1.5': higher runs first (the default is 0), "
        "e.g. -p 10",
        "submit",
    ),
    (
        ["sweep", "true {x}", "-p", "x", "1", "--priority", "high"],
        "--priority takes a whole number, not 'high': higher runs first (the default is 0), "
        "e.g. --priority 10",
        "sweep",
    ),
    # Attempts are numbered from 1: "0 is not in the range x>=1."
    (
        ["log", "--attempt", "0", "2"],
        "--attempt 0: attempts are numbered from 1; job 2's latest is 1 (what `gpuherd log 2` "
        "shows)",
        "log",
    ),
    (
        ["log", "1", "--attempt", "0"],
        "--attempt 0: attempts are numbered from 1; job 1 has not started yet",
        "log",
    ),
    (
        ["log", "2", "--attempt", "x"],
        "--attempt takes a whole number, not 'x': attempts are numbered from 1 (gpuherd show "
        "lists them), e.g. --attempt 2",
        "log",
    ),
    # --begin's own words, without click's "Invalid value for '--begin':" before them.
    (
        ["submit", "--begin", "tomorrow", "true"],
        f"invalid --begin 'tomorrow': {BEGIN_FORMS}",
        "submit",
    ),
    (
        ["sweep", "true {x}", "-p", "x", "1", "--begin", "+5x"],
        f"invalid --begin '+5x': {BEGIN_FORMS}",
        "sweep",
    ),
    (
        ["submit", "--env", "SEED", "true"],
        "invalid --env 'SEED': use NAME=VALUE, e.g. --env SEED=1",
        "submit",
    ),
    # A number too large got the hint for a word too: "..., or last (the job submitted last)".
    (
        ["submit", "--after", BIG, "true"],
        f"--after: job id {BIG} is too large (at most 2**63 - 1)",
        "submit",
    ),
    (
        ["edit", "1", "--after-any", BIG],
        f"--after-any: job id {BIG} is too large (at most 2**63 - 1)",
        "edit",
    ),
    (
        ["submit", "-a", "lats", "true"],
        "--after: invalid job id 'lats' in 'lats': use ids like 5, 3-7,9 or 1 2 3, or last (the "
        "job submitted last)",
        "submit",
    ),
    # --only-gpus's own words, without click's "Invalid value for '--only-gpus':" before them,
    # named as daemon start's `--gpus: invalid GPU index ...`.
    *[
        ([verb, *before, "--only-gpus", given, *after], f"--only-gpus: {said}", verb)
        for verb, (before, after) in ONLY_GPUS_VERBS.items()
        for given, said in ONLY_GPUS.items()
    ],
]


@pytest.mark.parametrize(
    ("args", "said", "command"), WORDING, ids=lambda v: " ".join(v) if isinstance(v, list) else ""
)
def test_mistakes_get_gpuherds_one_line_and_exit_2(
    shared: Herd, args: list[str], said: str, command: str
) -> None:
    before = shared.ls_all()
    proc = shared.cli(*args, check=False)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == f"gpuherd: error: {said} (see gpuherd {command} --help)\n"
    assert shared.ls_all() == before
