"""The API's one line for a number past 64 bits, wherever it was sent, and its words for a
body's value of the wrong kind (app._problem asks).

A number too large was said three ways: `invalid request: query.limit: N is too large …`
(FastAPI's bound on a query), `job_id N is too large …` (SQLite's refusal, its field found
in the request) and `invalid request: jobs.0.mem: inf is too large …` (a float where an
integer goes). Each is now `NAME VALUE is too large (at most 2**63 - 1)`, NAME the field's
as a body's refusal names it (`jobs.0.mem`; a list's own name for one of its numbers: `ids`),
and for a field with a unit, that unit (`give mem in bytes …`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from typing import Any
from urllib.parse import parse_qsl

from fastapi import Request

from gpuherd.core.idspec import parse_gpu_indices
from gpuherd.core.int64 import LARGEST, TOO_LARGE, LongNumber, OutOfRange, beyond, whole

UNITS = {
    "mem": "give mem in bytes, of each GPU's memory (1 GiB: 1073741824)",
    "ram": "give ram in bytes (1 GiB: 1073741824)",
    "max_log_size": "give max_log_size in bytes (0: no cap)",
}
"""What a client is told to give instead, for a field whose number has a unit."""

OBJECTS = {
    "SubmitItem": 'a job is a JSON object, as {"command": "...", "cwd": "/abs/dir"}',
    "SweepOptions": "a sweep's options are a JSON object of submit's options, as {\"gpus\": 1}",
}
"""What a body's object is, by the class pydantic named (`Input should be a dictionary or an
instance of SubmitItem` named a class of gpuherd's code, no word of the API's)."""


def out_of_range(name: str, value: int | float) -> str:
    """The line for `value` of field `name`, past what the queue stores."""
    if isinstance(value, float) and math.isinf(value):
        # JSON's 1e400 reads as infinity: say so, not `inf`, a word of Python's.
        shown = f"{'-' if value < 0 else ''}Infinity (a number past 1.8e308)"
    elif isinstance(value, float):
        shown = f"{value:g}"
    else:
        shown = str(value)
    line = f"{name} {shown} {beyond(value)}"
    unit = UNITS.get(name.rsplit(".", 1)[-1])
    return f"{line}: {unit}" if unit else line


def field_name(loc: Iterable[Any]) -> str:
    """A field as a refusal names it: `jobs.0.mem`, `ids` (not `ids.1`), `limit` (not
    `query.limit`)."""
    parts = [str(part) for part in loc]
    if parts[:1] in (["body"], ["query"], ["path"]):
        parts = parts[1:]
    while parts and parts[-1].isdecimal():
        parts.pop()
    return ".".join(parts) or "a number"


def too_large_problem(err: Any) -> str | None:
    """The line for a validation error that is a number past 64 bits (None: it is not)."""
    kind, value = str(err.get("type")), err.get("input")
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if kind.startswith("int_") and number and abs(value) > LARGEST:
        return out_of_range(field_name(err.get("loc", ())), value)  # 1e30 for an integer
    if kind == "int_parsing_size" and isinstance(value, str):
        # A path's or query's number of more digits than int() reads: pydantic said `Unable
        # to parse input string as an integer, exceeded maximum size`.
        return out_of_range(field_name(err.get("loc", ())), whole(value))
    if kind == "less_than_equal" and err.get("ctx", {}).get("le") == LARGEST:
        # A query's number past 64 bits (`?limit=`): FastAPI's bound.
        return out_of_range(field_name(err.get("loc", ())), _whole(value))
    return None


def _whole(value: Any) -> int | float:
    try:
        return int(value)
    except (TypeError, ValueError):
        return LARGEST + 1


def not_an_object(err: Any) -> str | None:
    """The words for a body's value that should be an object and is not (`{"jobs": [1]}`)."""
    if err.get("type") not in ("dataclass_type", "model_type", "dict_type"):
        return None
    what = OBJECTS.get(str(err.get("ctx", {}).get("class_name")))
    what = what or "it should be a JSON object (/openapi.json describes its fields)"
    sent = json.dumps(err.get("input"), default=str)
    sent = sent if len(sent) <= 40 else sent[:37] + "..."
    return f"{what}, got {sent}"


GPU_LIST = (
    "give GPU indices in a JSON list, like [0], [0, 1, 2, 3] or [0, 2] (--only-gpus 0, 0-3 or 0,2)"
)
"""What to send for `only_gpus`, as the CLI's `use GPU indices like 0, 0-3 or 0,2` says it."""


def gpu_text(err: Any) -> str | None:
    """The words for `only_gpus` sent as text, a list's place, in the CLI's words, named as
    a job's field is (`jobs.0.only_gpus (--only-gpus): no GPU given: ...`): `"only_gpus": ""`
    (a script's unset variable) was told pydantic's `Input should be a valid list`, which said
    neither that no GPU was named nor what to send. Text that names GPUs ("0,2", as the CLI
    and Python take it) is told the list it would be. None for another error."""
    loc, text = [str(part) for part in err.get("loc", ())], err.get("input")
    if err.get("type") != "list_type" or loc[-1:] != ["only_gpus"] or not isinstance(text, str):
        return None
    name = ".".join(loc[1:] if loc[:1] == ["body"] else loc) + " (--only-gpus)"
    if not text.strip(" ,"):  # (as parse_gpu_indices finds no GPU in it)
        return f"{name}: no GPU given: {GPU_LIST}"
    sent = json.dumps(text) if len(text) <= 40 else json.dumps(text[:37]) + "..."
    try:
        indices = parse_gpu_indices(text)
    except ValueError:  # (`x`; a GPU past the last index is the list's to say, once sent)
        indices = []
    if not 0 < len(indices) <= 16:  # (`0-4095` as its 4,096 indices: too long a line)
        return f"{name}: {sent} is text: {GPU_LIST}"
    return f"{name}: {sent} is text: give GPU indices in a JSON list, {indices}"


# ---- SQLite's OverflowError: the request's number it was ----------------------------------


def body_of(request: Request) -> Any:
    """The JSON body the route was given, as far as it was read: Starlette keeps what it read
    on the request. (Never read the stream here: a body read once, waited on again, would
    hang until the client leaves.)"""
    try:
        return json.loads(getattr(request, "_body", b"") or b"null", parse_int=whole)
    except ValueError:
        return None


def _too_large(data: Any, name: str = "", long: bool = False) -> tuple[str, int] | None:
    """The first field (its name, its number) holding an integer beyond what SQLite stores:
    `jobs.0.retries` of a job; `ids` for one of a list's numbers (`long`: one of more digits
    than int() reads, a LongNumber)."""
    if isinstance(data, int) and not isinstance(data, bool):
        past = isinstance(data, LongNumber) if long else abs(data) > LARGEST
        return (name or "a number", data) if past else None
    if isinstance(data, dict):
        items = [(f"{name}.{key}" if name else str(key), value) for key, value in data.items()]
    elif isinstance(data, list):
        # An object of a list is named by its place (`jobs.0`); a number by the list's name.
        items = [(f"{name}.{i}" if isinstance(v, dict) else name, v) for i, v in enumerate(data)]
    else:
        return None
    for key, value in items:
        if found := _too_large(value, key, long):
            return found
    return None


def refuse_long_numbers(data: Any) -> None:
    """OutOfRange, naming its field, for a number of a JSON body of more digits than int()
    reads (endpoints.read_json's LongNumber): refused as the body is read, in the words of one
    of 20 digits, before a field's own check would see it as pydantic's plain int."""
    if found := _too_large(data, long=True):
        raise OutOfRange(out_of_range(*found))


def which_too_large(request: Request) -> str:
    """The line for SQLite's OverflowError: the request's first number past 64 bits, by name,
    in its path (`/jobs/{job_id}`), query (`?ids=`), JSON body or form (the dashboard's)."""
    found = (
        _too_large(_text_numbers(request.path_params.items()))
        or _too_large(_text_numbers(request.query_params.multi_items()))
        or _too_large(body_of(request))
        or _too_large(_text_numbers(_form(request)))
    )
    if found is None:
        return f"a number in the request {TOO_LARGE}"
    return out_of_range(*found)


def _text_numbers(fields: Iterable[tuple[str, Any]]) -> dict[str, list[int]]:
    """The fields written as whole numbers (`ids=5&ids=7`: {"ids": [5, 7]}); a path's number
    is still text when the route refused it."""
    numbers: dict[str, list[int]] = {}
    for name, text in fields:
        if isinstance(text, str) and text.removeprefix("-").isdecimal() and len(text) < 40:
            numbers.setdefault(name, []).append(int(text))
    return numbers


def _form(request: Request) -> list[tuple[str, str]]:
    """The fields of a url-encoded form, as far as the route read it (as body_of)."""
    if not request.headers.get("content-type", "").startswith("application/x-www-form-urlencoded"):
        return []
    text = (getattr(request, "_body", b"") or b"").decode(errors="replace")
    return parse_qsl(text, keep_blank_values=True)
