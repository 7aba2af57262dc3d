"""The names of an attempt's own logs in its folder, and which file of the user's choosing an
attempt's view names (pure, and light: the CLI's `show` imports it at every start)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

FOLDER_LOGS = ("stdout.log", "stderr.log")
"""An attempt's own logs, in its folder: where its streams go without a file of the user's
choosing, and the links to such a file."""


def chosen_file(attempt: Mapping[str, Any], stream: str) -> str | None:
    """The file of the user's choosing (--output, --error) that the `stream` of an attempt (as
    `show` has it, with its `log_files`) went to, as the attempt recorded it: an edit since
    changes the next attempts' files alone. None: its folder's own log (or not said: a daemon
    older than attempts' own files)."""
    if "log_files" not in attempt:
        return None
    path = str(attempt["log_files"][stream])
    own = os.path.join(str(attempt["dir"]), FOLDER_LOGS[stream == "stderr"])
    return None if path == own else path
