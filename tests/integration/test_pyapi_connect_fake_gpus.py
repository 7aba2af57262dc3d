"""`gpuherd.connect(fake_gpus=...)` with a value no daemon start takes: refused before any
daemon is started, as an InvalidValue (the API's other bad values are), in the words `gpuherd
daemon start --fake-gpus` refuses it with (the argument named as connect()'s keyword).
"""

from __future__ import annotations

from typing import Any

import pytest

import gpuherd
from conftest import Herd
from gpuherd.errors import DaemonError, InvalidValue

CONNECT = " (arguments of gpuherd.connect(), before the first submit)"


@pytest.mark.parametrize("value", [-1, 0, 100000, "0", "", "abc"])
def test_a_bad_fake_gpus_is_an_invalid_value_in_the_clis_words(herd: Herd, value: Any) -> None:
    # It was a DaemonError alone (`except gpuherd.InvalidValue` missed it), as if a daemon
    # had refused it.
    line = herd.usage_error("daemon", "start", f"--fake-gpus={value}").strip()  # (`=`: "-1")
    front, end = "gpuherd: error: --fake-gpus: ", " (see gpuherd daemon start --help)"
    assert line.startswith(front) and line.endswith(end), line
    cli_reason = line.removeprefix(front).removesuffix(end)
    with pytest.raises(InvalidValue) as refused:
        gpuherd.connect(herd.home, fake_gpus=value)
    assert str(refused.value) == f"fake_gpus: {cli_reason}{CONNECT}"
    assert "\n" not in str(refused.value)
    assert isinstance(refused.value, ValueError)  # (as Python's own for a wrong value)
    assert isinstance(refused.value, DaemonError)  # (as it was: code catching that works on)
    assert not herd.is_up() and not herd.home.exists()  # refused before any daemon started


def test_a_bool_fake_gpus_is_an_invalid_value_too(herd: Herd) -> None:
    # True is an int to Python: a WrongType (TypeError) already, but no InvalidValue as every
    # other refused fake_gpus now is.
    with pytest.raises(InvalidValue) as refused:
        gpuherd.connect(herd.home, fake_gpus=True)
    assert str(refused.value) == (
        "fake_gpus is how many fake GPUs (4), their sizes ('2x24GiB,1x80GiB') or a .json state "
        "file, got True (bool)"
    )
    assert isinstance(refused.value, TypeError)
    assert not herd.is_up() and not herd.home.exists()


def test_a_bad_fake_gpus_is_refused_while_a_daemon_runs_too(herd: Herd) -> None:
    # A running daemon keeps its GPUs (a UserWarning for good ones); a bad value is refused
    # all the same, as the same InvalidValue.
    herd.start("--fake-gpus", "2")
    with pytest.raises(InvalidValue, match=r"^fake_gpus: invalid item '0': a count must be 1"):
        gpuherd.connect(herd.home, fake_gpus=0)
    assert herd.is_up()
