"""A Ctrl-C while the CLI is still being loaded ends it with one line and exit 130, as one
during a command does (cli/entry.py); it printed a KeyboardInterrupt traceback. So too a
`gpuherd run` stopped as it begins: it leaves no empty folder, temporary state or lock."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import Runs

# The SIGINT arrives while the CLI's modules are imported: when Python first looks for
# `module` (a finder ahead of the others sends it, then lets the import go on).
INTERRUPTED_AT = """
import os, signal, sys
class Interrupt:
    @staticmethod
    def find_spec(name, path=None, target=None):
        if name == {module!r}:
            sys.meta_path.remove(Interrupt)
            os.kill(os.getpid(), signal.SIGINT)
        return None
sys.meta_path.insert(0, Interrupt)
from gpuherd.cli.entry import main
main()
"""


@pytest.mark.parametrize("module", ["click", "gpuherd.cli.separator", "gpuherd.errors"])
def test_a_ctrl_c_while_the_cli_loads_says_interrupted_in_one_line(module: str) -> None:
    code = INTERRUPTED_AT.format(module=module)
    done = subprocess.run(
        [sys.executable, "-c", code, "ls"], capture_output=True, text=True, timeout=60
    )
    assert (done.returncode, done.stderr, done.stdout) == (130, "gpuherd: interrupted\n", "")


def test_python_m_gpuherd_runs_through_the_same_entry() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "gpuherd", "--version"], capture_output=True, text=True, timeout=60
    )
    assert (done.returncode, done.stdout.split(",")[0]) == (0, "gpuherd"), done


# The signal (SIGINT unless said) arrives as `function` is called (a profile function sends
# it, then steps aside).
INTERRUPTED_IN = """
import os, signal, sys
def interrupt(frame, event, arg):
    if event == "call" and frame.f_code.co_name == {function!r}:
        sys.setprofile(None)
        os.kill(os.getpid(), signal.{signal})
sys.setprofile(interrupt)
from gpuherd.cli.entry import main
main()
"""


def test_a_run_interrupted_before_its_first_job_leaves_no_empty_folder(tmp_path: Path) -> None:
    # `gpuherd run` has made herd_runs/<timestamp> and is about to start its jobs: the folder
    # was left behind, empty, by each such try.
    code = INTERRUPTED_IN.format(function="_run_and_report", signal="SIGINT")
    done = subprocess.run(
        [sys.executable, "-c", code, "run", "--fake-gpus", "1", "-"],
        input="true\n",
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert (done.returncode, done.stderr.strip()) == (130, "gpuherd: interrupted"), done
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("signal", "status", "said"),
    [
        ("SIGTERM", 130, "gpuherd: interrupted"),
        ("SIGHUP", 129, ""),
    ],
)
def test_a_run_stopped_as_it_makes_its_state_leaves_nothing_behind(
    runs: Runs, signal: str, status: int, said: str
) -> None:
    # Before the run's loop took SIGTERM and SIGHUP, their default ended it at once: its
    # temporary database (in TMPDIR) and its folder's lock were left behind.
    code = INTERRUPTED_IN.format(function="replace_devices", signal=signal)
    done = subprocess.run(
        [sys.executable, "-c", code, "run", "--fake-gpus", "1", "--output-dir", "out", "-"],
        input="true\n",
        capture_output=True,
        text=True,
        timeout=60,
        cwd=runs.cwd,
        env=runs.env,
    )
    assert (done.returncode, done.stderr.strip()) == (status, said), done
    assert list(runs.tmp.iterdir()) == []  # no gpuherd-run-* state left
    assert list((runs.cwd / "out").iterdir()) == []  # no lock, and no job ran
