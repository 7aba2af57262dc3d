"""The dashboard's static files: linked by URLs that name their content (a browser never runs
a cached script of another gpuherd), and kept by browsers under such a URL.

Over the daemon's Unix socket; a second daemon runs from a copy of the package whose plot.js
was changed, as an upgrade changes it.
"""

from __future__ import annotations

import hashlib
import re
import shutil
from pathlib import Path

from test_dashboard_pages import call

import gpuherd
from conftest import Herd

PACKAGE = Path(gpuherd.__file__).parent
KEEP = "public, max-age=31536000, immutable"


def linked(herd: Herd) -> dict[str, str]:
    """The static files a page links, by name, and the `v` of each one's URL."""
    return dict(re.findall(r'"/static/([\w.]+)\?v=([^"]+)"', call(herd, "GET", "/").body))


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:12]


def test_a_file_is_linked_by_its_content_and_kept(daemon: Herd) -> None:
    links = linked(daemon)
    static = PACKAGE / "api" / "static"
    assert set(links) == {path.name for path in static.iterdir()}  # every one, htmx too
    for name, version in links.items():
        assert version == digest(static / name), name
    script = call(daemon, "GET", f"/static/plot.js?v={links['plot.js']}")
    assert script.status == 200 and script.body == (static / "plot.js").read_text()
    assert script.headers["cache-control"] == KEEP
    again = call(
        daemon,
        "GET",
        f"/static/plot.js?v={links['plot.js']}",
        headers={"If-None-Match": script.headers["etag"]},
    )
    assert again.status == 304 and again.headers["cache-control"] == KEEP
    # Under a URL of other content (a page of an older gpuherd) or none, nothing is kept.
    for stale in ("/static/plot.js?v=0.2.0", "/static/plot.js"):
        answer = call(daemon, "GET", stale)
        assert answer.status == 200 and answer.headers["cache-control"] == "no-cache", stale


def test_a_changed_file_is_linked_by_another_url(daemon: Herd, tmp_path: Path) -> None:
    copy = tmp_path / "src" / "gpuherd"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    plot = copy / "api" / "static" / "plot.js"
    plot.write_text(plot.read_text() + "\n// changed by an upgrade\n")
    upgraded = Herd(tmp_path / "upgraded")
    upgraded.env["PYTHONPATH"] = str(copy.parent)
    try:
        upgraded.start("--fake-gpus", "1")
        before, after = linked(daemon), linked(upgraded)
        assert after["plot.js"] == digest(plot) != before["plot.js"]
        assert {k: v for k, v in after.items() if k != "plot.js"} == {
            k: v for k, v in before.items() if k != "plot.js"
        }
        served = call(upgraded, "GET", f"/static/plot.js?v={after['plot.js']}")
        assert served.body.endswith("// changed by an upgrade\n")
    finally:
        upgraded.cleanup()
