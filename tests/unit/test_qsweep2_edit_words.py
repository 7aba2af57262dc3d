"""What a sweep's waiting point has and a new submission asks for, and the `gpuherd edit`
options that give it the new ones (core/waiting_options.py)."""

from __future__ import annotations

from dataclasses import replace

from gpuherd.core.model import JobSpec
from gpuherd.core.waiting_options import differences, edit_words

OLD = JobSpec(command="true", cwd="/w", mem=3 * 2**30, retries=2, env_overrides={"A": "1"})


def test_differences_name_each_option_and_skip_what_the_daemon_chooses() -> None:
    new = replace(OLD, gpus=2, mem=None, retries=0, exclusive=True, after=(4, 5, 6))
    found = differences(OLD, 0, new, 3, not_given=["mem", "retries"])
    assert list(found.values()) == [
        "--gpus 1 -> 2",
        "--exclusive no -> yes",
        "--after none -> 4-6",
        "--priority 0 -> 3",
    ]
    grown = replace(OLD, oom_retry=True, exclusive=True)  # an out-of-memory retry's doing
    assert differences(grown, 0, replace(grown, mem=2**30, exclusive=False), 0) == {}


def test_the_edit_gives_each_value_as_typed_or_clears_it() -> None:
    new = replace(OLD, mem=1536 * 2**20, ram=None, timeout=5400.0, only_gpus=(), after=(4, 5, 6))
    fields = ["mem", "ram", "timeout", "only_gpus", "after", "env_overrides"]
    assert edit_words(new, fields, ["A"]) == [
        *("--mem", "1536MiB", "--clear", "ram", "--timeout", "1h30m"),
        *("--clear", "only_gpus", "--after", "4-6", "--env", "A=1"),
    ]
    # No edit drops one variable and keeps another, nor changes a priority.
    assert edit_words(replace(OLD, env_overrides={"B": "2"}), ["env_overrides"], ["A"]) is None
    assert edit_words(replace(OLD, env_overrides={}), ["env_overrides"], ["A"]) == [
        "--clear",
        "env",
    ]
    assert edit_words(OLD, ["gpus", "priority"], []) is None
