"""An integer metric or parameter too large for a float (JSON has no limit: 10**310 is a
valid metrics.json) made the dashboard's whole sweep page "no such page" (404) and its live
refresh "a number in the request is too large" (422): the plot's float() of it overflowed.
Now such a point is drawn in the table and left out of the plot, its caption saying why."""

from __future__ import annotations

import html
import re
from pathlib import Path

from conftest import Herd

HUGE = 10**310
WRITES = f"""import sys
value = {HUGE} if sys.argv[1] == "3" else 0.5
open(sys.argv[2] + "/metrics.json", "w").write('{{"acc": %s}}' % value)
"""


def _caption(page: str) -> str:
    found = re.search(r'<figcaption class="muted small">(.*?)</figcaption>', page, re.S)
    assert found, "no plot caption"
    return " ".join(html.unescape(found.group(1)).split())


def test_a_huge_integer_metric_or_parameter_leaves_the_sweep_page_drawn(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    herd = shared_daemon
    (tmp_path / "writes.py").write_text(WRITES)
    points = ("1", "2", "3", str(HUGE))  # x=3 writes the huge metric; the last is a huge x
    herd.cli(
        "sweep", "python3 writes.py {x} {run_dir}", "-p", "x", *points, "--gpus", "0",
        "--name", "huge", "-q", cwd=tmp_path,
    )  # fmt: skip
    herd.cli("sweep", "wait", "huge", timeout=60)
    for path in ("/sweeps/huge?metric=acc&param=x", "/ui/sweeps/huge?metric=acc&param=x"):
        status, _, body = herd.request("GET", path)
        assert status == 200, (path, status, body[:300])  # (before: 404 and 422)
        page = body.decode()
        assert str(HUGE) in page, path  # the table shows the value as the CLI does
        assert _caption(page).startswith(
            "3 of 4 finished points have a number for acc; 1 not plotted (too large)."
        ), path
