"""The console scripts' entry point (`gpuherd`, `herd`, `python -m gpuherd`).

A Ctrl-C while Python still loads the CLI (its first ~50 ms: click, the package's modules)
ends it as one during a command does, with one line and exit 130; it printed a
KeyboardInterrupt traceback from somewhere in importlib. Only this module and
gpuherd.typed_name are loaded before the guard.
"""

from __future__ import annotations

import sys

from gpuherd.typed_name import prefixed


def main() -> None:
    try:
        from gpuherd.cli.main import main as run_cli
    except KeyboardInterrupt:
        if sys.stderr is not None:  # (closed: `2>&-`; nowhere to say it)
            print(prefixed("interrupted"), file=sys.stderr)
        sys.exit(130)
    run_cli()
