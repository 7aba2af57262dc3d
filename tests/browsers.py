"""One browser (Playwright's driver and Debian's chromium) for a worker's browser modules.

Starting them costs ~1.2 CPU-s (the driver ~0.4, chromium's launch ~0.8), and 27 modules
each started their own. A browser a module has done with is now kept for this worker's next
module, as ray_fixtures hands its clusters on, if that is a browser module too (xdist hands
them out in units of several: xdist_units.py); conftest.py closes it before a test of any
other module. While Playwright runs, the worker's main thread has an event loop running
(asyncio.run fails there) and Playwright's driver as a child (tests check there is none).
"""

from __future__ import annotations

from typing import Any

_KEPT: list[tuple[Any, Any]] = []
"""(Playwright, Browser) a module has done with: at most one."""


def take(executable: str, args: list[str]) -> tuple[Any, Any]:
    """The kept browser with its Playwright, if it still runs; else a new one."""
    while _KEPT:
        playwright, browser = _KEPT.pop()
        if browser.is_connected():
            return playwright, browser
        playwright.stop()
    from playwright.sync_api import sync_playwright

    playwright = sync_playwright().start()
    try:
        return playwright, playwright.chromium.launch(executable_path=executable, args=args)
    except BaseException:
        playwright.stop()
        raise


def keep(playwright: Any, browser: Any) -> None:
    """Keep the browser for the next module, without the contexts its module left open (each
    module starts from a browser holding no cookie, no page)."""
    try:
        for context in browser.contexts:
            context.close()
    except Exception:  # (it crashed: the module's tests said so; the next one starts anew)
        close(playwright, browser)
        return
    _KEPT.append((playwright, browser))


def close_kept() -> None:
    """Close the kept browser, if any: its chromium and Playwright's driver end."""
    while _KEPT:
        close(*_KEPT.pop())


def close(playwright: Any, browser: Any) -> None:
    try:
        if browser.is_connected():
            browser.close()
    finally:
        playwright.stop()
