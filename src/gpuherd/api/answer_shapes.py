"""The building blocks of the answers' schemas (answer_schemas.py): JSON Schema as
OpenAPI 3.1 takes it, `null` a type of its own."""

from __future__ import annotations

from typing import Any

Shape = dict[str, Any]

INT: Shape = {"type": "integer"}
NUM: Shape = {"type": "number"}
"""Seconds and times: a fraction, or an integer as a client sent it (`"timeout": 60`)."""
STR: Shape = {"type": "string"}
BOOL: Shape = {"type": "boolean"}
INTS: Shape = {"type": "array", "items": INT}
STRS: Shape = {"type": "array", "items": STR}


def maybe(shape: Shape) -> Shape:
    """`shape` or null (a value not known, or not there yet)."""
    if "$ref" in shape:
        return {"anyOf": [shape, {"type": "null"}]}
    nullable = {**shape, "type": [shape["type"], "null"]}
    if "enum" in shape:
        nullable["enum"] = [*shape["enum"], None]
    return nullable


def of(values: Shape) -> Shape:
    """An object whose keys are names or ids (as text), each value `values`."""
    return {"type": "object", "additionalProperties": values}


def ref(name: str) -> Shape:
    return {"$ref": f"#/components/schemas/{name}"}


def obj(
    fields: dict[str, Shape],
    *,
    title: str | None = None,
    description: str | None = None,
    optional: dict[str, Shape] | None = None,
) -> Shape:
    """An answer's object: every field of `fields` always there (required), those of
    `optional` only in some answers; fields a newer daemon adds allowed."""
    shape: Shape = {
        "type": "object",
        "properties": {**fields, **(optional or {})},
        "required": list(fields),
        "additionalProperties": True,
    }
    if title:
        shape["title"] = title
    if description:
        shape["description"] = description
    return shape


def answer_of(name: str, description: str) -> Shape:
    """An operation's 200 response: JSON of the component `name`."""
    return {"description": description, "content": {"application/json": {"schema": ref(name)}}}
