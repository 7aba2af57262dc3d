"""A script's task that reads a global set only under `if __name__ == "__main__":` (which a
job does not run) is warned of where it is decorated: its every job failed with a bare
`NameError: name 'DATA' is not defined`, long after the submit. Parameters, locals and names
also bound above the block are not warned of."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

SCRIPT = """
import gpuherd

SCALE = 2


@gpuherd.task(gpus=0)
def train(lr, seed=0):
    try:
        steps = [SCALE * x for x in DATA]  # DATA: set below, in the block a job does not run
    except ValueError as err:
        print(err)
    pick = lambda rows: rows[seed]
    return lr * pick(steps) * helper()


if __name__ == "__main__":
    DATA = [1, 2, 3]
    SCALE = 3

    def helper():
        return 1

    for lr in [0.1, 0.01]:
        err = seed = pick = steps = None
"""


def decorated(tmp_path: Path, text: str) -> str:
    """The stderr of running the script, which submits nothing (no daemon is needed)."""
    script = tmp_path / "demo.py"
    script.write_text(textwrap.dedent(text))
    ran = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=60, check=True
    )
    return ran.stderr.replace(str(script), "demo.py")


def test_a_global_set_only_under_the_main_block_is_warned_of(tmp_path: Path) -> None:
    assert decorated(tmp_path, SCRIPT) == (
        "demo.py:7: UserWarning: train uses DATA, helper, set only under "
        '`if __name__ == "__main__":` in demo.py, which a job does not run (it loads the '
        "script as multiprocessing's spawn does), so the job fails with NameError: set them "
        "at the script's top level, or pass them to train as parameters\n"
        "  @gpuherd.task(gpus=0)\n"
    )


def test_names_bound_above_the_block_or_in_the_function_are_not(tmp_path: Path) -> None:
    fine = SCRIPT.replace("SCALE = 2\n", "SCALE = 2\nDATA = []\n\ndef helper():\n    return 2\n")
    assert decorated(tmp_path, fine) == ""
