"""A sweep's warning of points waiting with other job options names each by its option, as
the submission gave it (`--oom-retry no -> yes`), not by the field (`oom_retry`)."""

from __future__ import annotations

from dataclasses import replace

from gpuherd.core.model import JobSpec
from gpuherd.core.waiting_options import differences

WAITING = JobSpec(command="true", cwd="/w", env_overrides={"A": "1"})


def test_each_difference_is_named_by_its_option() -> None:
    wanted = replace(
        WAITING,
        only_gpus=(0,),
        oom_retry=True,
        max_log_size=2**20,
        no_output_timeout=60.0,
        kill_on_no_output=True,
        env_overrides={},
        after_any=(3,),
    )
    assert list(differences(WAITING, 0, wanted, 5).values()) == [
        "--only-gpus any -> 0",
        "--oom-retry no -> yes",
        "--max-log-size none -> 1 MiB",
        "--no-output-timeout none -> 1m",
        "--on-no-output flag -> kill",
        "--env A",
        "--after-any none -> 3",
        "--priority 0 -> 5",
    ]
