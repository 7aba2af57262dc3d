"""Exclude expressions: a small, safe subset of Python evaluated over a sweep point.

Part of core/sweep.py (which re-exports compile_expr and evaluate).
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Any

from gpuherd.core.sweep_names import SweepError, value_text


def _mul(a: Any, b: Any) -> Any:
    for seq, n in ((a, b), (b, a)):
        if isinstance(seq, str | list | tuple) and isinstance(n, int) and len(seq) * n > 10**6:
            raise ValueError("repetition too large")
    return operator.mul(a, b)


def _pow(a: Any, b: Any) -> Any:
    if isinstance(b, int | float) and abs(b) > 100:
        raise ValueError("exponent too large")
    return operator.pow(a, b)


_BINOPS: dict[type[ast.AST], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: _mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: _pow,
}
_CMPOPS: dict[type[ast.AST], Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}
_UNARY: dict[type[ast.AST], Callable[[Any], Any]] = {
    ast.Not: operator.not_,
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
}
_ALLOWED = (
    ast.Expression,
    ast.BoolOp,
    ast.And,
    ast.Or,
    ast.BinOp,
    ast.UnaryOp,
    ast.Compare,
    ast.IfExp,
    ast.Name,
    ast.Load,
    ast.Constant,
    ast.Tuple,
    ast.List,
    *_BINOPS,
    *_CMPOPS,
    *_UNARY,
)


_EXAMPLE = "lr > 0.1 and bs == 64"


def compile_expr(text: str, names: Collection[str]) -> ast.Expression:
    """Parse an exclude expression; SweepError for anything but names of `names`, constants,
    comparisons (`in` too), and/or/not, arithmetic, `x if c else y`, tuples and lists."""
    where = f"exclude: expression {text!r}"
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:  # its str() repeats the message with "(<unknown>, line 1)"
        column = (exc.offset or 0) + len(text) - len(text.lstrip())  # parsed stripped
        at = f" at column {column}" if exc.offset and "\n" not in text.strip() else ""
        raise SweepError(
            f"{where}: not a Python expression ({exc.msg}{at}): write one over the"
            f" parameters, as {_EXAMPLE}",
            ("exclude",),
        ) from None
    except (ValueError, RecursionError, MemoryError) as exc:  # a NUL; nested too deeply
        problem = str(exc) or type(exc).__name__
        raise SweepError(
            f"{where}: not a Python expression ({problem}): write one over the parameters,"
            f" as {_EXAMPLE}",
            ("exclude",),
        ) from None
    for node in ast.walk(tree):
        if not isinstance(node, _ALLOWED):
            raise SweepError(
                f"{where}: {type(node).__name__} is not allowed (only parameters,"
                " constants, comparisons, and/or/not, arithmetic)",
                ("exclude",),
            )
        if isinstance(node, ast.Name) and (node.id.startswith("__") or node.id not in names):
            raise SweepError(
                f"{where}: {node.id} is not a parameter; parameters: "
                f"{', '.join(names) or '(none)'}",
                ("exclude",),
            )
    return tree


def evaluate(tree: ast.Expression, params: Mapping[str, Any], text: str) -> bool:
    """Whether the compiled expression holds for `params` (a key the point lacks is None)."""
    try:
        return bool(_eval(tree.body, params))
    except (TypeError, ValueError, ArithmeticError, RecursionError) as exc:
        raise SweepError(
            f"exclude: expression {text!r} failed on {dict(params)}: {exc}", ("exclude",)
        ) from None


def _eval(node: ast.AST, env: Mapping[str, Any]) -> Any:
    match node:
        case ast.Constant(value=value):
            return value
        case ast.Name(id=name):
            return env.get(name)
        case ast.Tuple(elts=elts):
            return tuple(_eval(e, env) for e in elts)
        case ast.List(elts=elts):
            return [_eval(e, env) for e in elts]
        case ast.BoolOp(op=op, values=values):
            result: Any = None
            for value_node in values:
                result = _eval(value_node, env)
                if bool(result) is isinstance(op, ast.Or):
                    return result
            return result
        case ast.UnaryOp(op=op, operand=operand):
            return _UNARY[type(op)](_eval(operand, env))
        case ast.BinOp(left=left, op=op, right=right):
            return _BINOPS[type(op)](_eval(left, env), _eval(right, env))
        case ast.Compare(left=left, ops=ops, comparators=comparators):
            return _compare(_eval(left, env), ops, comparators, env)
        case ast.IfExp(test=test, body=body, orelse=orelse):
            return _eval(body, env) if _eval(test, env) else _eval(orelse, env)
    raise ValueError(f"{type(node).__name__} is not allowed")


def _compare(left: Any, ops: list[ast.cmpop], rest: list[ast.expr], env: Mapping[str, Any]) -> bool:
    for op, node in zip(ops, rest, strict=True):
        right = _eval(node, env)
        if not _CMPOPS[type(op)](left, right):
            return False
        left = right
    return True


def keeper(
    exclude: Iterable[Mapping[str, Any]], expr: str | None, names: Collection[str]
) -> Callable[[Mapping[str, Any]], bool]:
    """A predicate: True for a point that neither a partial point of `exclude` nor `expr`
    removes (a partial point matches when every one of its keys has the same value text)."""
    partials = [{k: value_text(v) for k, v in p.items()} for p in exclude]
    tree = compile_expr(expr, names) if expr is not None else None

    def keep(params: Mapping[str, Any]) -> bool:
        for partial in partials:
            if all(k in params and value_text(params[k]) == t for k, t in partial.items()):
                return False
        return tree is None or not evaluate(tree, params, expr or "")

    return keep


def unmatched_exclusions(
    exclude: Iterable[Mapping[str, Any]],
    grids: Iterable[Mapping[str, Iterable[Any]]],
    fixed: Mapping[str, Any],
    random: Collection[str],
) -> list[str]:
    """A warning for each partial point of `exclude` that no point of the grids matches (as
    keeper() matches): it removes nothing, most likely a typo (`lr: 0.2` where the grid has
    0.02). Checked per grid and key, not point by point: a grid's points take every
    combination of its values. A random parameter may draw anything: it matches."""
    grids = list(grids) or [{}]

    def reaches(grid: Mapping[str, Iterable[Any]], key: str, text: str) -> bool:
        if key in random:
            return True
        if key in grid:  # the grid's value wins over fixed's
            return any(value_text(v) == text for v in grid[key])
        return key in fixed and value_text(fixed[key]) == text

    warnings = []
    for i, partial in enumerate(exclude):
        texts = {k: value_text(v) for k, v in partial.items()}
        if not any(all(reaches(g, k, t) for k, t in texts.items()) for g in grids):
            shown = ", ".join(f"{k}={t}" for k, t in texts.items())
            warnings.append(
                f"exclude[{i}]: no point has {shown}, so it removes nothing; check its values"
            )
    return warnings
