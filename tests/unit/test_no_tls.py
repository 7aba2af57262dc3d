"""no_tls.asyncio_without_tls: asyncio imported inside leaves ssl unloaded and still runs; ssl
stays importable afterwards; where asyncio or ssl is loaded already, nothing changes. Each case
in a fresh interpreter (this one has asyncio loaded)."""

from __future__ import annotations

import subprocess
import sys

FIRST_IMPORT = """
import sys
from gpuherd.no_tls import asyncio_without_tls
with asyncio_without_tls():
    import asyncio
assert "ssl" not in sys.modules
async def answer():
    await asyncio.sleep(0)
    return 42
assert asyncio.run(answer()) == 42
import ssl
assert ssl.OPENSSL_VERSION
print("ok")
"""

SSL_LOADED = """
import ssl, sys
from gpuherd.no_tls import asyncio_without_tls
with asyncio_without_tls():
    import asyncio.sslproto
assert asyncio.sslproto.ssl is ssl and sys.modules["ssl"] is ssl
print("ok")
"""


def _python(code: str) -> str:
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def test_asyncio_imported_inside_runs_without_ssl_and_ssl_stays_importable() -> None:
    assert _python(FIRST_IMPORT) == "ok"


def test_nothing_changes_where_ssl_is_loaded_already() -> None:
    assert _python(SSL_LOADED) == "ok"
