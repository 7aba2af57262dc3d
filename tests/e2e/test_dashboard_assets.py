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


def package_copy(tmp_path: Path) -> Path:
    copy = tmp_path / "src" / "gpuherd"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def herd_from(copy: Path, home: Path) -> Herd:
    """A daemon's Herd (not started) that runs gpuherd from `copy`."""
    herd = Herd(home)
    herd.env["PYTHONPATH"] = str(copy.parent)
    return herd


def test_a_changed_file_is_linked_by_another_url(daemon: Herd, tmp_path: Path) -> None:
    copy = package_copy(tmp_path)
    plot = copy / "api" / "static" / "plot.js"
    plot.write_text(plot.read_text() + "\n// changed by an upgrade\n")
    upgraded = herd_from(copy, tmp_path / "upgraded")
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


def test_a_daemon_upgraded_in_place_serves_what_it_started_with(tmp_path: Path) -> None:
    """Its files changed on disk while it runs (`pip install -U`): it must not send the new
    plot.js under the old one's URL (kept by browsers for a year), nor render new templates
    with its old code."""
    copy = package_copy(tmp_path)
    herd = herd_from(copy, tmp_path / "home")
    try:
        herd.start("--fake-gpus", "1")
        before = linked(herd)
        plot = copy / "api" / "static" / "plot.js"
        original = plot.read_text()
        plot.write_text(original + "\n// changed by an upgrade\n")
        page = copy / "api" / "templates" / "base.html"
        page.write_text(page.read_text() + "\n<!-- changed by an upgrade -->\n")
        assert linked(herd) == before
        assert "changed by an upgrade" not in call(herd, "GET", "/").body
        served = call(herd, "GET", f"/static/plot.js?v={before['plot.js']}")
        assert served.status == 200 and served.body == original
    finally:
        herd.cleanup()
