"""The dashboard's static files (/static): linked by URLs that name their content, and kept
by browsers for as long as that content is what the URL names.

A page links `/static/plot.js?v=HASH`, HASH the first hex digits of the file's SHA-256. The
files are read once, as the daemon starts, and served from memory: a gpuherd upgraded in
place while its daemon runs changes the files on disk, and the running daemon would send
the new content under the old content's URL, which browsers keep for a year. Another
gpuherd's daemon has other content, hence other URLs: a browser never runs a cached plot.js
of another version against this version's pages (a `?v=` of gpuherd's version did so until
the version was bumped). A URL of the current content may be kept for a year and never
asked again (immutable); any other (a page of an older daemon, a URL typed) must ask each
time, so no other content is ever kept under a URL.
"""

from __future__ import annotations

import hashlib
import mimetypes
from dataclasses import dataclass
from pathlib import Path

from starlette.responses import Response

from gpuherd.errors import NotFound

STATIC = Path(__file__).parent / "static"
KEEP = "public, max-age=31536000, immutable"
ASK_AGAIN = "no-cache"


@dataclass(frozen=True)
class Asset:
    body: bytes
    fingerprint: str
    """The first 12 hex digits of the body's SHA-256."""
    media_type: str


def read_asset(path: Path) -> Asset:
    body = path.read_bytes()
    kind = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    return Asset(body, hashlib.sha256(body).hexdigest()[:12], kind)


def read_assets(folder: Path) -> dict[str, Asset]:
    """Each file of `folder`, by name."""
    return {path.name: read_asset(path) for path in sorted(folder.iterdir()) if path.is_file()}


ASSETS = read_assets(STATIC)
"""Read at start (the files are about 100 KB): served, and linked, at no cost."""


def url(name: str) -> str:
    """The URL a page links static file `name` by: `/static/plot.js?v=5f0c2a9e1b7d`."""
    return f"/static/{name}?v={ASSETS[name].fingerprint}"


def response(name: str, asked: str | None, if_none_match: str | None) -> Response:
    """Static file `name` for a URL whose `v` is `asked`, and how long it may be kept (module
    doc); 304 to a browser that has it (its ETag in If-None-Match)."""
    asset = ASSETS.get(name)
    if asset is None:
        raise NotFound(f"no static file {name!r}")
    etag = f'"{asset.fingerprint}"'
    # Set on a 304 too: a browser that asked again is told again how long to keep it.
    headers = {"etag": etag, "cache-control": KEEP if asked == asset.fingerprint else ASK_AGAIN}
    if etag in _etags(if_none_match or ""):
        return Response(status_code=304, headers=headers)
    return Response(asset.body, media_type=asset.media_type, headers=headers)


def _etags(if_none_match: str) -> set[str]:
    """The ETags an If-None-Match names (a weak `W/"x"` matches as `"x"`, RFC 9110 13.1.2)."""
    return {tag.strip().removeprefix("W/") for tag in if_none_match.split(",")}
