"""What a task (`@gpuherd.task`) shows of itself, in a notebook or a REPL: its function's name
and signature, and its job options, `<gpuherd.task train(lr: float, bs: int = 32) gpus=1>`,
where Python's own repr said `<gpuherd.tasks.Task object at 0x7f…>`. tasks.py's Task takes it
from here."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any

SIGNATURE_CHARS = 200
"""A longer signature (defaults of long lists) is cut, ending in `…)`."""


def task_repr(fn: Callable[..., Any], options: Mapping[str, Any]) -> str:
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)
    shown = [f"{key}={_option(key, value)}" for key, value in options.items()]
    return f"<gpuherd.task {name}{_signature(fn)}" + (" " + ", ".join(shown) if shown else "") + ">"


def _signature(fn: Callable[..., Any]) -> str:
    """`(lr: float, bs: int = 32) -> dict`: annotations as written, also where they are text
    (a module with `from __future__ import annotations`: Python's repr quoted each one)."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):  # (a builtin, a class without a readable __init__)
        return "(…)"
    parameters = [
        p.replace(annotation=_as_written(p.annotation)) for p in signature.parameters.values()
    ]
    text = str(
        signature.replace(
            parameters=parameters,
            return_annotation=_as_written(signature.return_annotation),
        )
    )
    return text if len(text) <= SIGNATURE_CHARS else text[: SIGNATURE_CHARS - 2] + "…)"


def _as_written(annotation: Any) -> Any:
    return _Written(annotation) if isinstance(annotation, str) else annotation


class _Written:
    """An annotation's text, shown without quotes (inspect shows an annotation by its repr)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def _option(key: str, value: Any) -> str:
    if key == "herd":  # its daemon's home, not `<gpuherd.Herd ...>` nested (or a folder's repr)
        home = getattr(getattr(value, "client", None), "home", value)
        return str(home) if home is not None else repr(value)
    return repr(value)
