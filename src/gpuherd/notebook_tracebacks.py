"""What IPython and Jupyter show for a gpuherd error: the traceback down to the line of the
user's cell, without gpuherd's own frames (a client's socket reads, the request that got the
daemon's refusal), as the CLI shows one line. The error's own line says what to do; the
frames under it said nothing to a user, and pushed that line off the screen.

IPython asks an exception for its lines through `_render_traceback_` (errors.HerdError's,
pyapi_notebook.wait_interrupted's): imported only then, so `import gpuherd` stays light.
`%xmode Verbose` shows every frame, gpuherd's too (for a bug report)."""

from __future__ import annotations

import importlib
import traceback
from pathlib import Path
from types import TracebackType
from typing import Any

_PACKAGE = Path(__file__).resolve().parent


def _is_own(tb: TracebackType) -> bool:
    try:
        return Path(tb.tb_frame.f_code.co_filename).resolve().is_relative_to(_PACKAGE)
    except (OSError, ValueError):  # ('<ipython-input-…>': no such file, and not ours)
        return False


def without_own_frames(tb: TracebackType | None) -> TracebackType | None:
    """The traceback `tb` with gpuherd's frames left out (the user's frames kept in order)."""
    kept: list[TracebackType] = []
    while tb is not None:
        if not _is_own(tb):
            kept.append(tb)
        tb = tb.tb_next
    trimmed: TracebackType | None = None
    for frame in reversed(kept):
        trimmed = TracebackType(trimmed, frame.tb_frame, frame.tb_lasti, frame.tb_lineno)
    return trimmed


def render(error: BaseException) -> list[str]:
    """`_render_traceback_`'s lines: the shell's own traceback, of the user's frames."""
    try:
        # (through import_module: IPython is not typed, and not a dependency of gpuherd)
        shell: Any = importlib.import_module("IPython.core.getipython").get_ipython()
        formatter = shell.InteractiveTB
        verbose = formatter.mode == "Verbose"
        tb = error.__traceback__ if verbose else without_own_frames(error.__traceback__)
        return list(formatter.structured_traceback(type(error), error, tb))
    except Exception:  # (no shell: called from elsewhere) Python's own, never a second error
        return [line.rstrip("\n") for line in traceback.format_exception(error)]
