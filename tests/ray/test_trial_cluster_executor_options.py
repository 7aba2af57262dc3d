"""`daemon start` options that mix the two executors are refused in one line that says what
to do, not only what is wrong. Refused before any cluster is dialled: no cluster here."""

from __future__ import annotations

import pytest

from conftest import Herd


@pytest.mark.parametrize(
    ("options", "advice"),
    [
        (["--address", "192.0.2.2:6379", "--gpus", "0"], "drop them, or drop --address to run"),
        (["--executor", "ray", "--gpus", "0"], "drop them, or use --executor local to run"),
        (["--executor", "local", "--address", "192.0.2.2:6379"], "drop --executor local"),
    ],
)
def test_mixed_executor_options_say_what_to_do(herd: Herd, options: list[str], advice: str) -> None:
    proc = herd.cli("daemon", "start", *options, check=False)
    assert proc.returncode != 0
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert advice in lines[0], lines[0]  # before: "... are for the local executor" and no more
