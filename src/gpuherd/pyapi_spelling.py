"""The daemon's warnings, written for the CLI, with its option names as the Python API's
keywords (`use another --name` -> `use another name=`): pyapi_values.sweep_warnings says them.

Only the words of the warning itself are respelt, never what it quotes: the fix a warning
gives is often a command, written as it is typed (`gpuherd edit 5 --command './job.sh --name
x'`, `herd.submit('./job.sh --cwd /data')`), where `--name` is the job's program's option, not
gpuherd's (it became `'./job.sh name= x'`, a command that runs something else).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

_CLI_OPTIONS = {
    "--results-dir": "results_dir=",
    "--name": "name=",
    "--force": "force=True",
    "--cwd": "cwd=",  # (a submission's: a script not there, script_files.py)
}
"""The options a sweep's warnings name (sweeps.py, sweep_checks.py), as Python spells them."""
_CLI_OPTION = re.compile(r"(?<![^\s(])(" + "|".join(_CLI_OPTIONS) + r")(?![\w-])")

_OPENING = re.compile(r"""(?<![\w'"])['"]""")
"""A quote that opens quoted text: one after a letter is an apostrophe (`the sweep's`)."""
_QUOTED = (
    re.compile(r"""'[^']*'(?:"'"'[^']*')*"""),  # a shell word, as shlex.quote writes it
    re.compile(r"""'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*\""""),  # a Python string's repr
)


def python_spelling(text: str) -> str:
    """A warning of the daemon's, written for the CLI, with its options as keywords; what it
    quotes (a command, a program's name) as it is."""
    quoted = list(_quoted_spans(text))

    def respelt(found: re.Match[str]) -> str:
        if any(start <= found.start() < end for start, end in quoted):
            return found.group()
        return _CLI_OPTIONS[found.group(1)]

    return _CLI_OPTION.sub(respelt, text)


def _quoted_spans(text: str) -> Iterator[tuple[int, int]]:
    """Where `text` holds quoted text: each the longest of its readings, as a shell word or
    as a Python string (`'it\\'s --name'` is one string, and a shell word ends at its `\\'`)."""
    at = 0
    while (opening := _OPENING.search(text, at)) is not None:
        start = opening.start()
        ends = [found.end() for quoted in _QUOTED if (found := quoted.match(text, start))]
        at = max(ends, default=start + 1)
        if ends:
            yield start, at
