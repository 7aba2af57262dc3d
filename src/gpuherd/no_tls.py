"""asyncio imported without its TLS support, for `gpuherd run`, which opens no connection.

asyncio imports `ssl` (for TLS streams, which it makes optional: it works on without them
where Python has no ssl module), and `ssl` loads OpenSSL: ~4 % of the instructions a one-job
run executes, all on the way to its first job (benchmarks/README.md). `gpuherd run` reads its
jobs from a file, a pipe or a --yielder's own process and talks to nothing over a network,
so while its modules are imported `ssl` is marked missing (None in sys.modules: Python's own
way to say a module cannot be imported), and asyncio leaves TLS out. The mark is taken back
at once: a later `import ssl` (by anything) imports it as usual; only asyncio's TLS streams
stay off in that process.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def asyncio_without_tls() -> Iterator[None]:
    """Imports inside that bring in asyncio for the first time leave its TLS out. Nothing
    changes where asyncio or ssl is imported already (a test, a notebook, a site hook)."""
    if "asyncio" in sys.modules or "ssl" in sys.modules:
        yield
        return
    sys.modules["ssl"] = None  # type: ignore[assignment]
    try:
        yield
    finally:
        imported = sys.modules.pop("ssl", None)
        if imported is not None:  # (not through the mark: only a module set in its place)
            sys.modules["ssl"] = imported
