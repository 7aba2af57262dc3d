"""How xdist hands the suite's files to its workers: as `--dist loadfile` does (a file is one
unit of work, the units with the most tests first), except the browser modules, which go in
a few units of several modules each. A worker then runs a unit's browser modules one after
another, and the browser one leaves is the next one's (tests/browsers.py): a unit starts
one browser where each module started its own (~1.2 CPU-s each). Spread over the run, as
their sizes put them, the modules seldom followed one another on a worker.

A browser module is one that imports (or defines) the `browser` fixture of test_dashboard.py:
read from its text, as xdist's controller, which makes the units, imports no test module.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

from xdist.scheduler import LoadFileScheduling

BROWSER_UNITS = 4
"""Fewer than CI's 6 workers (pyproject.toml): the units start at once, one on each of 4, a
browser launch each, while the others take the other files."""

BROWSER_MODULE = re.compile(r"^(from test_dashboard import .*\bbrowser\b|def browser\()", re.M)


def browser_units(nodeids: list[str], rootdir: Path) -> dict[str, str]:
    """The browser modules among the files of `nodeids`, each with the unit it goes in:
    `browsers-N`, the modules spread so that the units hold about as many tests."""
    tests = Counter(nodeid.split("::", 1)[0] for nodeid in nodeids)
    modules = [file for file in tests if BROWSER_MODULE.search((rootdir / file).read_text())]
    held = [0] * BROWSER_UNITS
    units: dict[str, str] = {}
    for file in sorted(modules, key=lambda file: -tests[file]):  # (the largest first)
        unit = held.index(min(held))
        held[unit] += tests[file]
        units[file] = f"browsers-{unit}"
    return units


class BrowserUnits(LoadFileScheduling):
    def __init__(self, config: Any, log: Any = None) -> None:
        super().__init__(config, log)
        self.rootdir = Path(config.rootpath)
        self.units: dict[str, str] = {}

    def schedule(self) -> None:
        if self.collection is None and self.registered_collections:  # (the first call)
            collected = list(next(iter(self.registered_collections.values())))
            self.units = browser_units(collected, self.rootdir)
        super().schedule()

    def _split_scope(self, nodeid: str) -> str:
        file: str = super()._split_scope(nodeid)
        return self.units.get(file, file)
