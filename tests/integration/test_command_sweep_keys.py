"""A Python command sweep's values whose dict keys are not text (`{1: "a"}`) are refused before
anything is sent, as a task sweep's are (tasks_params.check_sweep, one check for both): they
travel as JSON to the daemon, which wrote `{1: "a", "2": "b"}` in the command and params.json
as {"1": "a", ...}, and kept one value of `{1: "a", "1": "b"}`, without a word. A sweep file's
keys are checked as it is read (core/sweep_values.py). Real daemon, fake GPUs."""

from __future__ import annotations

from pathlib import Path

import pytest

import gpuherd
from conftest import Herd
from gpuherd.pyapi_types import WrongType

KEYS = "(parameters travel as JSON, whose keys are text): use str keys"


def test_a_command_sweeps_keys_that_json_would_make_text_are_refused(
    shared_daemon: Herd, shared_work: Path
) -> None:
    api = gpuherd.connect(shared_daemon.home, start=False)
    sweeps_before = len(api.sweeps())
    with pytest.raises(WrongType) as refused:  # before: submitted, one of the values lost
        api.sweep("echo {x}", {"x": [{1: "a", "1": "b"}]}, gpus=0, hold=True, cwd=shared_work)
    assert str(refused.value) == f"x[0]: key 1 (int) would reach the command as '1' {KEYS}"
    with pytest.raises(WrongType) as refused:
        api.sweep("echo {x} {t}", {"x": [1]}, fixed={"t": {"a": {None: 1}}}, dry_run=True)
    said = f"fixed['t']['a']: key None (NoneType) would reach the command as 'null' {KEYS}"
    assert str(refused.value) == said
    assert len(api.sweeps()) == sweeps_before  # nothing was submitted
    # Text keys, as the command gets them anyway: taken.
    sweep = api.sweep("echo {x}", {"x": [{"1": "a"}]}, gpus=0, dry_run=True, cwd=shared_work)
    assert sweep.commands == ['echo \'{"1":"a"}\'']
