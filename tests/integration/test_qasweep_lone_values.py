"""`-p NAME VALUE` whose one value lists several, as other tools write them (Hydra's
`0.1,0.01`, Slurm's `0-99%4`, numbers quoted into one word): one point, run with that text
as its value. The sweep says so, and what to type, without refusing it (a value may hold a
comma)."""

from __future__ import annotations

import json

from conftest import Herd

TEMPLATE = "echo {lr}"


def warnings_of(herd: Herd, *args: str) -> list[str]:
    """The `gpuherd: warning:` lines of a dry run (it needs no daemon)."""
    done = herd.cli("sweep", TEMPLATE, *args, "--name", "lone", "--dry-run")
    prefix = "gpuherd: warning: "
    return [line.removeprefix(prefix) for line in done.stderr.splitlines() if prefix in line]


def test_a_lone_value_that_lists_several_is_warned_of(herd: Herd) -> None:
    hydra = herd.cli("sweep", TEMPLATE, "-p", "lr", "0.1,0.01", "--name", "lone", "--dry-run")
    assert hydra.stdout == "echo 0.1,0.01\n"  # run as typed: one point
    assert (
        "gpuherd: warning: -p lr 0.1,0.01 is one value, so one point: for a point per value"
        " give them as separate words: -p lr 0.1 0.01\n"
    ) in hydra.stderr
    assert warnings_of(herd, "-p", "lr", "0.1 0.01") == [
        "-p lr '0.1 0.01' is one value, so one point: for a point per value give them as"
        " separate words: -p lr 0.1 0.01"
    ]
    assert warnings_of(herd, "-p", "lr", "0-99%4") == [
        "-p lr 0-99%4 is one value, so one point: for a point per value give them as"
        " separate words: -p lr $(seq 0 99) --max-parallel 4"
    ]
    assert warnings_of(herd, "-p", "lr", "[1, 2]")[0].endswith(": -p lr 1 2")
    assert warnings_of(herd, "-p", "lr", "0.1, 0.01")[0].endswith(": -p lr 0.1 0.01")


def test_values_that_are_one_are_not_warned_of(herd: Herd) -> None:
    one = (["0.1", "0.01"], ["64,64"], ["64,64", "128,128"], ["hello world"], ["Hello, world"])
    for values in (*one, ["2026-11"]):
        assert warnings_of(herd, "-p", "lr", *values) == [], values


def test_a_submission_says_it_too(shared_daemon: Herd) -> None:
    work = shared_daemon.home.parent / "lone-work"
    work.mkdir(exist_ok=True)
    args = ("sweep", TEMPLATE, "-p", "lr", "0.1,0.01", "--name", "lone-sub", "--hold")
    answer = json.loads(shared_daemon.cli(*args, "--json", cwd=work).stdout)
    assert answer["points"] == 1
    assert answer["warnings"][0].startswith("-p lr 0.1,0.01 is one value, so one point")
    shared_daemon.cli("sweep", "rm", "lone-sub")
