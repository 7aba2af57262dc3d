"""Every error the Python API raises survives pickling (a ProcessPoolExecutor's worker sends
what it raised to the parent so): its class, message and attributes, JobFailed's job handle
and state too. JobFailed took (job, state) and asked the daemon in its constructor, so its
unpickling raised TypeError, and the pool broke ("terminated abruptly"), the error lost.

The classes are found, not listed: every HerdError of the API's modules (errors, pyapi*,
tasks*), so a new one is pinned too; one whose constructor takes more than a message must be
given its arguments in MADE, or its test fails saying so."""

from __future__ import annotations

import functools
import importlib
import pickle
import pkgutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import gpuherd
from gpuherd.client import Client
from gpuherd.daemon_presence import AlreadyUp
from gpuherd.errors import HerdError
from gpuherd.pyapi import Herd, Job
from gpuherd.pyapi_checks import still_unfinished
from gpuherd.pyapi_failed import JobFailed
from gpuherd.pyapi_notebook import wait_interrupted
from gpuherd.saved_settings import DamagedSetting

HOME = Path("/tmp/gpuherd-pickled-home")  # (only named: no daemon is asked)

MADE: dict[str, Callable[[Any], BaseException]] = {
    "JobFailed": lambda kind: kind(
        Job(Herd(Client(HOME)), 7), "failed", "job 7 (train) failed (exit 3): ValueError: x"
    ),
    "JobRemoved": lambda kind: kind(Job(Herd(Client(HOME)), 7)),
    "AlreadyUp": lambda kind: kind("a daemon is already running (pid 41)", 41),
    "DamagedSetting": lambda kind: kind("probe", "{", "not JSON"),
}
"""How each error whose constructor takes more than its message is made (given its class,
by its name), as it is raised."""


def _api_errors() -> list[type[HerdError]]:
    """Every HerdError class of the API's modules, in a stable order."""
    for found in pkgutil.iter_modules(gpuherd.__path__):
        if found.name == "errors" or found.name.startswith(("pyapi", "tasks")):
            importlib.import_module(f"gpuherd.{found.name}")
    kinds, todo = set(), [HerdError]
    while todo:
        kind = todo.pop()
        kinds.add(kind)
        todo += kind.__subclasses__()
    ours = ("gpuherd.errors", "gpuherd.pyapi", "gpuherd.tasks")
    api = [kind for kind in kinds if kind.__module__.startswith(ours)]
    return sorted([*api, AlreadyUp, DamagedSetting], key=lambda k: (k.__module__, k.__name__))


def _made(kind: type[BaseException]) -> BaseException:
    if kind.__name__ in MADE:
        return MADE[kind.__name__](kind)
    own_init = [c for c in kind.__mro__ if "__init__" in vars(c) and c.__module__ != "builtins"]
    assert not own_init, f"give {kind.__name__}'s arguments in MADE"
    return kind(f"{kind.__name__}: what is wrong; what to do")


RAISED = [
    *(pytest.param(functools.partial(_made, kind), id=kind.__name__) for kind in _api_errors()),
    # (Python's own, raised by every wait: pickled as Python pickles them)
    pytest.param(functools.partial(wait_interrupted, [7, 8]), id="KeyboardInterrupt-of-a-wait"),
    pytest.param(functools.partial(still_unfinished, 60, [8], 2), id="TimeoutError-of-a-wait"),
]


@pytest.mark.parametrize("made", RAISED)
def test_it_comes_back_from_a_pickle_as_it_was(made: Callable[[], BaseException]) -> None:
    error = made()
    back = pickle.loads(pickle.dumps(error))
    assert type(back) is type(error)
    assert back.args == error.args and str(back) == str(error)
    assert vars(back).keys() == vars(error).keys()
    for name, value in vars(error).items():  # (a bound hook, IPython's, is another object)
        assert callable(value) or getattr(back, name) == value, name


def test_a_job_failed_keeps_its_job_handle_of_its_home() -> None:
    back = pickle.loads(pickle.dumps(_made(JobFailed)))
    assert isinstance(back, JobFailed) and back.state == "failed"
    assert (back.job.id, back.job.herd.client.home) == (7, HOME)
    assert str(back) == "job 7 (train) failed (exit 3): ValueError: x"
