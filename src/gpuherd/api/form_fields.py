"""How the dashboard's forms read a job's fields: one reader per field (`gpuherd edit`'s and
`submit`'s options), shared by a job page's edit form and the submit page, so a box that both
forms have takes the same text and refuses it in the same words, named by its label."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from gpuherd.core.edit import BEGIN
from gpuherd.core.idspec import parse_gpu_indices, parse_ids
from gpuherd.core.int64 import beyond, holds
from gpuherd.core.int64 import whole as whole_number
from gpuherd.core.log_caps import sent_log_cap
from gpuherd.core.units import parse_duration, parse_memory
from gpuherd.core.when import parse_begin
from gpuherd.errors import HerdError


def whole(text: str) -> int:
    try:
        return whole_number(text)  # (more digits than int() reads: too large, as 20 are)
    except ValueError:
        raise ValueError(f"{text!r} is not a whole number") from None


def _stored(number: int) -> int:
    """`number` if the queue can store it. One past 64 bits is a ValueError here, said by its
    box's label as a mistyped value is (read_field), not the API's OutOfRange naming its
    field in a JSON line; nothing is submitted or edited either way."""
    if not holds(number):
        raise ValueError(f"{number} {beyond(number)}")
    return number


def stored_whole(text: str) -> int:
    """A whole number the queue can store (retries; the submit page's priority)."""
    return _stored(whole(text))


def _job_ids(text: str) -> list[int]:
    ids = parse_ids(text.replace("#", " "))  # "#3, #5" as the pages write them, or 3,5
    if ids:
        _stored(ids[-1])
    return ids


FIELD_READERS: dict[str, Any] = {
    "command": lambda text: text.replace("\r\n", "\n"),
    "name": str,
    "gpus": whole,
    "only_gpus": parse_gpu_indices,
    "mem": parse_memory,  # `10` is refused: bytes are never meant
    "ram": parse_memory,
    "retries": stored_whole,  # (gpus: the daemon's 0-64 says more than "too large")
    "retry_delay": parse_duration,
    "timeout": parse_duration,
    "max_log_size": sent_log_cap,
    "project": str,
    "cwd": str,  # (the service checks that the folder exists)
    "grace": parse_duration,
    "after": _job_ids,
    "after_any": _job_ids,
    "after_fail": _job_ids,
    BEGIN: lambda text: parse_begin(text, time.time(), "time"),
    "output": str,  # (checked by the service, from the job's working directory)
    "error": str,
}
"""A job's fields as the edit form has them (`gpuherd edit`'s options), and how each one's
text is read; the submit page reads those it has too with these (form_words.SUBMIT_LABELS)."""

NOT_EMPTIED = {
    "command": "a job runs a command: type one",
    "gpus": "cannot be emptied: type 0 for a job without GPUs",
    "retries": "cannot be emptied: type 0 for none",
    "cwd": "a job runs in a folder: give the absolute path of one",
    "grace": "cannot be emptied: type the time a stop waits before SIGKILL, e.g. 10s",
}
"""The fields every job has (`gpuherd edit --clear` takes none of them), said so when the
edit form's box is emptied: read as text, an empty box said `GPUs: '' is not a whole number`
or `'grace': invalid duration ''`. (The submit page gives its blank GPUs 1 and leaves its blank
More options out.)"""


def read_field(name: str, text: str, labels: Mapping[str, str]) -> Any:
    """The value of field `name` typed as `text`, or the error naming it by its box's label
    in `labels`, quoted as in_form_words quotes it (`'retries': 'x' is not a whole number`)."""
    if not text and name in NOT_EMPTIED:
        raise HerdError(f"'{labels[name]}': {NOT_EMPTIED[name]}")
    try:
        return FIELD_READERS[name](text)
    except ValueError as exc:
        raise HerdError(f"'{labels[name]}': {exc}") from None
