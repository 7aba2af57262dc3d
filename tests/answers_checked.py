"""Answers of a real daemon checked against what its /openapi.json says of them, with each
schema made strict (no field it does not name): a field added to an answer and not to its
schema fails too (test_openapi_answers.py, and tests of answers only some states give)."""

from __future__ import annotations

import json
from typing import Any

import jsonschema

from conftest import Herd

API = "/api/v1"


def strict(shape: Any) -> Any:
    """`shape` with every object that names its fields closed to others: the answers of
    today have only the fields their schema names (a newer daemon's may add more)."""
    if isinstance(shape, list):
        return [strict(item) for item in shape]
    if not isinstance(shape, dict):
        return shape
    closed = {key: strict(value) for key, value in shape.items()}
    if "properties" in closed and closed.get("additionalProperties") is True:
        closed["additionalProperties"] = False
    return closed


def problems(schema: dict[str, Any], components: dict[str, Any], answer: Any) -> list[str]:
    """Where `answer` disagrees with `schema` (its $refs into `components`), one line each."""
    validator = jsonschema.Draft202012Validator({**schema, "components": components})
    return [line for error in validator.iter_errors(answer) for line in _lines(error)]


def _lines(error: jsonschema.ValidationError, branch: str = "") -> list[str]:
    if error.context:  # none of anyOf's schemas: what each said, not the whole answer
        return [
            line
            for inner in error.context
            for line in _lines(inner, f" (as {error.validator} {inner.relative_schema_path[0]})")
        ]
    where = ".".join(map(str, error.absolute_path)) or "(the answer)"
    return [f"{where}: {error.message[:300]}{branch}"]


class Answers:
    """Requests to a daemon whose answers are checked against its /openapi.json."""

    def __init__(self, herd: Herd) -> None:
        self.herd = herd
        status, _, raw = herd.request("GET", "/openapi.json")
        assert status == 200, raw
        self.doc = json.loads(raw)
        self.components = strict(self.doc["components"])
        self.checked: set[tuple[str, str]] = set()

    def schema(self, method: str, template: str) -> dict[str, Any]:
        operation = self.doc["paths"][API + template][method.lower()]
        schema: dict[str, Any] = operation["responses"]["200"]["content"]["application/json"][
            "schema"
        ]
        return schema

    def check(self, method: str, path: str, body: Any = None, template: str = "") -> Any:
        """The answer to METHOD /api/v1PATH (200), which its schema must describe; `template`:
        the path as the schema names it (`/jobs/{job_id}`), if not `path` without its query."""
        sent = None if body is None else json.dumps(body)
        status, _, raw = self.herd.request(method, API + path, sent)
        assert status == 200, f"{method} {path}: {status} {raw!r}"
        answer = json.loads(raw)
        template = template or path.partition("?")[0]
        found = problems(self.schema(method, template), self.components, answer)
        assert not found, f"{method} {path} disagrees with /openapi.json:\n" + "\n".join(found)
        self.checked.add((method.lower(), template))
        return answer

    def json_operations(self) -> set[tuple[str, str]]:
        """Every operation whose 200 answer is JSON, as (method, path under /api/v1)."""
        found = set()
        for path, operations in self.doc["paths"].items():
            for method, operation in operations.items():
                if "application/json" in operation["responses"]["200"].get("content", {}):
                    found.add((method, path.removeprefix(API)))
        return found
