"""How big the tests that draw or repeat many cases run: the CI figures by default;
`GPUHERD_SOAK=full` gives the big manual ones (tests/reliability/faults.py re-exports these)."""

from __future__ import annotations

import os
from typing import TypeVar

T = TypeVar("T")

FULL = os.environ.get("GPUHERD_SOAK", "").lower() == "full"


def scaled(ci: T, full: T) -> T:
    """The CI figure, or the full one under GPUHERD_SOAK=full."""
    return full if FULL else ci
