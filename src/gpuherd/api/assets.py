"""The dashboard's static files (/static): linked by URLs that name their content, and kept
by browsers for as long as that content is what the URL names.

A page links `/static/plot.js?v=HASH`, HASH the first hex digits of the file's SHA-256, read
once as the daemon starts. Another gpuherd changes the file, hence its URL: a browser never
runs a cached plot.js of another version against this version's pages (a `?v=` of gpuherd's
version did so until the version was bumped). A URL of the current content may be kept for a
year and never asked again (immutable); any other (a page of an older daemon, a URL typed)
must ask each time, so no other content is ever kept under a URL.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from urllib.parse import parse_qs

from starlette.responses import Response
from starlette.staticfiles import PathLike, StaticFiles
from starlette.types import Scope

STATIC = Path(__file__).parent / "static"
KEEP = "public, max-age=31536000, immutable"
ASK_AGAIN = "no-cache"


def fingerprints(folder: Path) -> dict[str, str]:
    """Each file of `folder` (by name) and the first 12 hex digits of its content's SHA-256."""
    return {
        path.name: hashlib.sha256(path.read_bytes()).hexdigest()[:12]
        for path in sorted(folder.iterdir())
        if path.is_file()
    }


FINGERPRINTS = fingerprints(STATIC)
"""Read at start (the files are about 100 KB): a page links each file at no cost."""


def url(name: str) -> str:
    """The URL a page links static file `name` by: `/static/plot.js?v=5f0c2a9e1b7d`."""
    return f"/static/{name}?v={FINGERPRINTS[name]}"


class Assets(StaticFiles):
    """/static, answering with how long a browser may keep what it was sent (module doc)."""

    def file_response(
        self,
        full_path: PathLike,
        stat_result: os.stat_result,
        scope: Scope,
        status_code: int = 200,
    ) -> Response:
        response = super().file_response(full_path, stat_result, scope, status_code)
        # Set on a 304 too: a browser that asked again is told again how long to keep it.
        asked = parse_qs(scope.get("query_string", b"").decode(errors="replace")).get("v")
        current = asked == [FINGERPRINTS.get(self.get_path(scope))]
        response.headers["cache-control"] = KEEP if current else ASK_AGAIN
        return response
