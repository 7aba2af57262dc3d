"""The name the user typed (`gpuherd` or its short alias `herd`), and the one way a line of
gpuherd's own on stderr starts with it. Apart from the CLI (cli/main.py) so that the client,
below the CLI, says its warning the same way without importing click."""

from __future__ import annotations

import os
import sys

SCRIPT_NAMES = ("gpuherd", "herd")
"""The console scripts (pyproject.toml): usage lines and hints name the one typed."""


def typed_name() -> str:
    """The name the user typed, for usage lines and `(see herd ls --help)`: `herd` for the
    short alias, as click takes it from argv[0]; `gpuherd` otherwise (`python -m gpuherd`,
    whose argv[0] is __main__.py, a Python program using the API, and main() called in a
    program of another name)."""
    typed = os.path.basename(sys.argv[0]) if sys.argv else ""
    return typed if typed in SCRIPT_NAMES else "gpuherd"


def as_typed(text: str) -> str:
    """A hint kept as a constant, which quotes gpuherd's commands (`gpuherd ls --all lists
    every job`), in the name typed when it is said: `herd ls --all ...` under `herd`. Its
    every `gpuherd ` is taken for a command's; one built when said uses typed_name()."""
    return text.replace("gpuherd ", f"{typed_name()} ")


def prefixed(kind: str, text: str = "") -> str:
    """The one way a line of gpuherd's own on stderr starts, in the name typed: `herd:
    error: TEXT`, `gpuherd: warning: TEXT`; `kind` alone for an interruption or a note
    (`herd: interrupted`, `herd: job 5 has not started yet: ...`). Always one line: what
    it quotes (a file named `no⏎file`, a job's reason) may hold a line break or a control
    character, which would end the line there and start the next without the prefix: it
    shows them (said_line), `\\x1b[31m` of a value typed with an escape sequence in it."""
    from gpuherd.core.text import said_line  # (only when something is said: start-up time)

    said = f"{typed_name()}: {kind}: {text}" if text else f"{typed_name()}: {kind}"
    return said_line(said)
