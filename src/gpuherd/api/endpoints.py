"""What the API's endpoints take, as a client is told: the methods a path takes (405), a
body that cannot be read (unparsable), a query value given twice (given_twice), and the
errors, streams and answers /openapi.json describes (answers: answer_schemas.py).

Starlette answered a wrong method with the `Allow` of the first route whose path matched:
`PUT /api/v1/jobs` said `allow: POST` (GET lists the jobs), and `GET /api/v1/jobs/kill`
went to `GET /jobs/{job_id}` and was refused as `path.job_id: Input should be a valid
integer`, not as the POST it is. FastAPI's schema said a refusal is `{"detail": [...]}`,
which no answer of gpuherd's is: every error is `{"error": "one line"}`.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Coroutine, Iterable, Iterator
from typing import Any, get_args, get_origin

from fastapi import FastAPI
from fastapi.dependencies.models import Dependant
from fastapi.dependencies.utils import request_params_to_args
from fastapi.responses import RedirectResponse, StreamingResponse
from fastapi.routing import APIRoute
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Match

from gpuherd.api.answer_schemas import describe_answers
from gpuherd.api.numbers import refuse_long_numbers
from gpuherd.core.int64 import whole
from gpuherd.errors import InvalidValue

ERROR_SCHEMA = {
    "type": "object",
    "properties": {"error": {"type": "string", "title": "Error"}},
    "required": ["error"],
    "additionalProperties": False,
    "title": "Error",
    "description": "Every refusal and failure: one line saying what is wrong and what to do.",
}
ERROR_REF = {"$ref": "#/components/schemas/Error"}
REFUSED = "Invalid request: a value the endpoint does not take (the line names it)"
OTHER = (
    "Another error: 403 (TCP without the token), 404 (no such job, endpoint), 405, 409 "
    "(the job's state does not allow it), 413 (body too large), 415 (body not JSON)"
)


class HerdApi(FastAPI):
    """The app, its schema telling errors and answers as they are (describe_errors,
    answer_schemas.describe_answers)."""

    def openapi(self) -> dict[str, Any]:
        if self.openapi_schema is None:
            self.openapi_schema = describe_answers(describe_errors(super().openapi()))
        return self.openapi_schema


def read_json(body: bytes) -> Any:
    """A JSON body as the API reads it: a whole number through int64.whole, so that one of
    more digits than int() reads is refused as too large, by its field's name (`ids 99999...
    (4,301 digits) is too large (at most 2**63 - 1)`), as one of 20 digits is. json.loads'
    own int() raised a ValueError, told as `the body's JSON nests lists or objects too deeply`.
    A key given twice in an object is KeyGivenTwice: json.loads kept the last value, and
    `{"ids": [3], "ids": [4]}` acted on job 4 alone, without a word."""
    return json.loads(body, parse_int=whole, object_pairs_hook=_once_each)


class KeyGivenTwice(Exception):
    """A JSON body's object with a key given more than once (read_json); not a ValueError,
    which read_json's callers take for a body nested too deeply."""


def _once_each(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # Keys counted only when the lengths differ: on a 10,000-job body (1.4-5 MB) the pairs
    # cost 6-12 ms over json.loads' own 25-60 ms, under 1% of its submission.
    obj = dict(pairs)
    if len(obj) != len(pairs):
        raise KeyGivenTwice
    return obj


def key_given_twice(body: bytes) -> str:
    """The line for a body read_json found a key given twice in, naming it by its path as a
    field's mistake is (`jobs.3.command: given 2 times: give it once`). The body is read
    again, its objects as lists of pairs (the first read kept none of them): the error path
    alone pays for it."""

    def found(value: Any, where: tuple[str, ...]) -> str | None:
        if isinstance(value, _Pairs):
            counts = Counter(key for key, _ in value)
            if twice := next((key for key, count in counts.items() if count > 1), None):
                path = ".".join((*where, twice))
                return f"invalid request: {path}: given {counts[twice]} times: give it once"
            items: Iterable[tuple[str, Any]] = value
        elif isinstance(value, list):
            items = ((str(index), item) for index, item in enumerate(value))
        else:
            return None
        return next(filter(None, (found(item, (*where, key)) for key, item in items)), None)

    try:
        said = found(json.loads(body, parse_int=whole, object_pairs_hook=_Pairs), ())
    except RecursionError:  # (deeper than the first read got, where the key was)
        said = None
    return said or "invalid request: the body gives a key twice in an object: give it once"


class _Pairs(list[tuple[str, Any]]):
    """An object of a body as key_given_twice reads it, told from an array by its type."""


class ReadsWholeNumbers(APIRoute):
    """An API route whose JSON body is read by read_json, before FastAPI reads it: Starlette
    keeps the value on the request, and FastAPI takes it from there. A body that is not JSON
    is left for FastAPI to refuse in its own words, as before."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()
        if self.body_field is None:  # (no body read: a GET, a verb without one)
            return handler

        async def read_then_handle(request: Request) -> Response:
            try:
                body = await request.body()
                if body.strip():
                    request._json = read_json(body)
            except KeyGivenTwice:  # (as a query's parameter given twice: given_twice)
                raise InvalidValue(key_given_twice(body)) from None
            except Exception:  # not JSON, or cut off at the cap: FastAPI says so, as before
                pass
            else:
                refuse_long_numbers(getattr(request, "_json", None))
            return await handler(request)

        return read_then_handle


class EventStream(StreamingResponse):
    """The response_class of a route answering server-sent events: the schema says
    `text/event-stream`, not the JSON it said of `/events` (the route builds its answer)."""

    media_type = "text/event-stream"


def allowed_methods(app: FastAPI, path: str) -> list[str]:
    """The methods some API route takes `path` with, its path values valid (`kill` is no
    job id, `/jobs/explode` no action): sorted, HEAD with GET (app.AnswersHead)."""
    methods: set[str] = set()
    for route in app.router.routes:
        if not isinstance(route, APIRoute):
            continue
        match, child = route.matches({"type": "http", "path": path, "method": "GET"})
        if match is Match.NONE or not _values_taken(route, child.get("path_params", {})):
            continue
        methods |= route.methods or set()
    if "GET" in methods:
        methods.add("HEAD")
    return sorted(methods)


def without_slash(app: FastAPI, scope: Any) -> str | None:
    """`scope`'s path without its trailing `/`s, when some route takes that path (with any
    method): `/api/v1/jobs/` is `/api/v1/jobs`; else None (no route's path ends in `/` but
    `/`). The app makes no redirect of it (HerdApi(redirect_slashes=False)): Starlette's was
    an empty 307, and `curl -s -X POST .../api/v1/jobs/` submitted nothing, without a word."""
    path = scope["path"]
    bare = path.rstrip("/")
    if not bare or bare == path:
        return None
    bare_scope = {**scope, "path": bare}
    matched = any(route.matches(bare_scope)[0] is not Match.NONE for route in app.router.routes)
    return bare if matched else None


def to_bare_path(app: FastAPI, scope: Any) -> RedirectResponse | None:
    """For a GET (or HEAD) outside /api/ of a path some route takes without its trailing `/`
    (`/jobs/`, a browser's typed address), the 307 to that path, as Starlette's was (None: no
    such request). Its Location is the path as sent (`raw_path`: `/sweeps/lr-%C3%A9/`),
    relative, its query kept. A POST or DELETE gets the 404 instead (without_slash): an empty
    307, which `curl -s` and urllib do not follow with the body, did nothing, unsaid."""
    raw = scope.get("raw_path") or scope["path"].encode()
    browsing = scope["method"] in ("GET", "HEAD")
    if not browsing or scope["path"].startswith("/api/") or not raw.endswith(b"/"):
        return None  # (a raw `/jobs%2F` is the path `/jobs/`: its redirect was to itself)
    if without_slash(app, scope) is None:
        return None
    query = scope.get("query_string", b"").decode("latin-1")
    return RedirectResponse(raw.rstrip(b"/").decode("latin-1") + ("?" + query if query else ""))


def _values_taken(route: APIRoute, values: dict[str, Any]) -> bool:
    # Its dependencies' too: `POST /jobs/{action}` checks the verb in one (jobs._verb).
    params = [param for dep in dependants(route.dependant) for param in dep.path_params]
    return not request_params_to_args(params, values)[1] and not outside_enum(params, values)


def dependants(dependant: Dependant) -> Iterator[Dependant]:
    """`dependant` and its dependencies', each in turn."""
    yield dependant
    for sub in dependant.dependencies:
        yield from dependants(sub)


def outside_enum(params: Iterable[Any], values: dict[str, Any]) -> bool:
    """Whether a path value a route checks itself (`action`) is none of those its schema
    lists (`/jobs/explode`, `/gpus/0/explode`): the route answers it with a 404."""
    for param in params:
        extra = param.field_info.json_schema_extra
        choices = extra.get("enum") if isinstance(extra, dict) else None
        if isinstance(choices, list) and values.get(param.alias) not in choices:
            return True
    return False


def unparsable(body: bytes) -> str:
    """The line for a body FastAPI could not read as JSON though its syntax may be right (a
    syntax error is `json_invalid`, app._problem's): it said "There was an error parsing the
    body" (400), and a body nested past Python's recursion limit was a 500 elsewhere."""
    try:
        body.decode("utf-8")
    except UnicodeDecodeError as error:
        return (
            f"invalid request: the body is not UTF-8 (byte {error.start} is "
            f"{body[error.start]:#04x}): send JSON encoded as UTF-8"
        )
    try:
        read_json(body)  # (FastAPI's json.loads stopped at a number of 4,301 digits)
    except json.JSONDecodeError as error:
        return f"invalid request: the body is not valid JSON ({error.msg})"
    except (ValueError, RecursionError):
        pass
    return (
        "invalid request: the body's JSON nests lists or objects too deeply to read: "
        "send them flat, as /openapi.json describes them"
    )


def given_twice(params: Iterable[Any], query: Any) -> str | None:
    """The line refusing a query parameter given more than once that takes one value:
    `?limit=1&limit=50` listed 50 jobs, the first value dropped without a word. (None: none
    such; `state` and `ids` repeat.)"""
    for param in params:
        count = len(query.getlist(param.alias))
        annotation = param.field_info.annotation
        repeats = list in {get_origin(kind) for kind in (annotation, *get_args(annotation))}
        if count > 1 and not repeats:
            return f"invalid request: query.{param.alias}: given {count} times: give it once"
    return None


def not_allowed(method: str, path: str, allowed: list[str], described: bool = True) -> str:
    """The one line of a 405: what to send instead; `described`: the path is the API's, which
    /openapi.json describes (not the dashboard's)."""
    shown = [m for m in allowed if m != "HEAD"] or allowed
    use = " or ".join(shown)
    return f"{method} is not allowed on {path}: use {use}" + (
        " (/openapi.json describes it)" if described else ""
    )


def describe_errors(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` (FastAPI's) with each operation's errors as they are: `{"error": "..."}`."""
    schemas = schema.setdefault("components", {}).setdefault("schemas", {})
    schemas.pop("HTTPValidationError", None)
    schemas.pop("ValidationError", None)
    schemas["Error"] = ERROR_SCHEMA
    content = {"application/json": {"schema": ERROR_REF}}
    for operations in schema.get("paths", {}).values():
        for operation in operations.values():
            responses = operation.setdefault("responses", {})
            # Every operation refuses a query parameter it does not take, or a body where it
            # takes none (app.refuse_unknown_query, refuse_body_where_none).
            responses["422"] = {"description": REFUSED, "content": content}
            responses["default"] = {"description": OTHER, "content": content}
    return schema
