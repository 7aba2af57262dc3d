"""A scheduler whose passes fail, for tests: the daemon's placement raises while a marker file
exists (engine_health.py says what follows). Made in the daemon's own process: a module of
PYTHONPATH's that Python runs at every start (`sitecustomize`) wraps `core.placement.place`.

It was a queued job's row holding a value placement could not work with (its GPU count as
text); every column of a job's row is now checked as it is read (store_row_types.py), so
such a row costs its job alone, set aside while the passes go on (engine_damaged.py), and no
value of a row breaks a pass any more. The daemon, its `daemon start` and the test's CLI
calls run as real processes then (PYTHONPATH is not the fork server's: forks.py)."""

from __future__ import annotations

import os
from pathlib import Path

from conftest import Herd

FAULT = "TypeError: a fault the test put in placement"
"""What a failing pass raises, as the daemon says it."""

_SITE = """
import os

_marker = os.environ.get("GPUHERD_TEST_PLACEMENT_FAULT")
if _marker:
    import gpuherd.core.placement as _placement

    _place = _placement.place

    def place(*args, **kwargs):
        if os.path.exists(_marker):
            raise TypeError("a fault the test put in placement")
        return _place(*args, **kwargs)

    _placement.place = place
"""


def fault_env(folder: Path) -> dict[str, str]:
    """The environment a daemon started with has the fault ready (off until `break_passes`)."""
    site = folder / "fault-site"
    site.mkdir(parents=True, exist_ok=True)
    (site / "sitecustomize.py").write_text(_SITE)
    path = os.pathsep.join(p for p in (str(site), os.environ.get("PYTHONPATH", "")) if p)
    return {"PYTHONPATH": path, "GPUHERD_TEST_PLACEMENT_FAULT": str(folder / "placement-fails")}


def break_passes(herd: Herd) -> None:
    """Make the daemon's passes fail (its environment from fault_env): each fails until
    `mend`."""
    Path(herd.env["GPUHERD_TEST_PLACEMENT_FAULT"]).touch()


def mend(herd: Herd) -> None:
    """Passes work again (the next retry of one finds it so: nobody wakes the engine)."""
    Path(herd.env["GPUHERD_TEST_PLACEMENT_FAULT"]).unlink()
