"""`gpuherd run --yielder` whose yielder() returns something that holds no jobs: one line
naming what it returned and saying to yield each job, exit 1, nothing run. (A returned dict ran
its keys as jobs, `command` succeeding, exit 0; a string its characters; a set in an order that
changed from run to run; None and a number said `yielder() raised TypeError`.)
"""

from __future__ import annotations

import pytest
from test_run_cli import assert_one_error_line, write_yielder

from conftest import Probe, Runs

EACH = "not jobs: yield each job (or return a list of them)"


@pytest.mark.parametrize(
    ("returned", "said"),
    [
        ('{"command": PROBE}', "returned a dict ({'command': "),
        ('{"command": PROBE, "gpus": 1}', "returned a dict ({'command': "),
        ("PROBE", "returned a str ("),
        ("PROBE.encode()", "returned bytes (b"),
        ("None", "returned None, not jobs (a forgotten `yield`?): yield each job"),
        ("5", f"returned an int (5), {EACH}"),
        ("1.5", f"returned a float (1.5), {EACH}"),
    ],
    ids=["dict", "dict-with-gpus", "str", "bytes", "None", "int", "float"],
)
def test_a_returned_value_that_holds_no_jobs_is_refused_and_nothing_runs(
    runs: Runs, probe: Probe, returned: str, said: str
) -> None:
    path = write_yielder(
        runs, f"PROBE = {probe.cmd('job')!r}\n\ndef yielder():\n    return {returned}\n"
    )
    out = runs.root / "out"
    proc = runs.run("--fake-gpus", "1", "--output-dir", str(out), "--yielder", str(path))
    line = assert_one_error_line(proc, f"--yielder {path}: yielder() {said}")
    assert proc.returncode == 1, line
    assert line.endswith("yield each job (or return a list of them)"), line
    assert not out.exists()
    assert probe.records() == []


def test_a_returned_set_is_refused_for_its_order(runs: Runs, probe: Probe) -> None:
    path = write_yielder(
        runs, f"def yielder():\n    return {{{probe.cmd('a')!r}, {probe.cmd('b')!r}}}\n"
    )
    proc = runs.run("--fake-gpus", "1", "--yielder", str(path))
    line = assert_one_error_line(proc, "yielder() returned a set (")
    assert line.endswith(
        "), whose order changes from run to run: yield each job (or return a list of them)"
    ), line
    assert probe.records() == []


@pytest.mark.parametrize("brackets", ["[]", "()"], ids=["list", "tuple"])
def test_a_returned_list_or_tuple_of_jobs_still_runs(
    runs: Runs, probe: Probe, brackets: str
) -> None:
    jobs = f"{probe.cmd('a')!r}, {probe.cmd('b')!r},"
    path = write_yielder(runs, f"def yielder():\n    return {brackets[0]}{jobs}{brackets[1]}\n")
    proc = runs.run("--fake-gpus", "1", "-q", "--yielder", str(path))
    assert (proc.returncode, proc.stderr) == (0, ""), proc.stdout + proc.stderr
    assert sorted(probe.by_name()) == ["a", "b"]
