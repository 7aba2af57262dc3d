"""gflow's `gbatch --param lr=0.001,0.01`, typed to `gpuherd submit` from habit, is answered
with the sweep that runs a job per value, as the README's gflow table says: click guessed
"Did you mean one of: '--name', '--ram'?"."""

from __future__ import annotations

import re
import shlex

from conftest import Herd


def test_gflows_param_is_answered_with_the_sweep_that_runs_a_job_per_value(herd: Herd) -> None:
    said = herd.usage_error("submit", "--param", "lr=0.001,0.01", "python", "train.py")
    assert "Did you mean" not in said
    assert "No such option '--param': gpuherd sweep " in said
    assert "(gflow's --param lr=0.001,0.01)" in said
    named = re.search(r"gpuherd (sweep .*) runs a job per value", said)
    assert named, said
    # The sweep it names is one gpuherd takes: expanded with no daemon, a command per value.
    dry = herd.cli(*shlex.split(named.group(1)), "--dry-run")
    assert dry.stdout.splitlines() == [
        "python train.py --lr 0.001",
        "python train.py --lr 0.01",
    ]
