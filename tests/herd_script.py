"""The `herd` console script, run as a module: the fork server (forks.py) runs `python -m
MODULE`, whose argv[0] would make the CLI name itself `gpuherd`; this runs the installed
script itself, as typed (`herd ARGS`), for tests that read what `herd` prints
(forks.python_m("herd_script", ARGS, ..., cwd=HERE))."""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

HERE = Path(__file__).parent

if __name__ == "__main__":
    script = str(Path(sys.executable).with_name("herd"))
    sys.argv[0] = script
    runpy.run_path(script, run_name="__main__")
