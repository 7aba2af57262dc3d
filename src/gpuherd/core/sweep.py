"""Sweeps as plain data: a spec expands into points, each with its folder name and command.

Pure: no I/O, no clock; randomness only from `random.Random(spec.seed)`. Rules:

- `fixed` holds defaults shared by every point; a grid or random key may also be in `fixed`
  and then wins for the points that vary it (as GPU Task Scheduler's test_config overrides its
  global_config).
- A point's varying keys are the keys its grid declares plus the random keys, in declaration
  order, even a key with one value: adding a value later renames no finished point's folder.
- A point is its parameters as text (`value_text`): 1 and "1" are one point (they give the same
  command); 1 and 1.0 are two.
- Shuffling or sampling needs `seed`: the caller picks one and records it.
- Placeholders may carry a format spec or conversion (`{lr:.2e}`, `{x!r}`), applied to the raw
  value before quoting.
"""

from __future__ import annotations

import ast
import hashlib
import itertools
import json
import math
import operator
import posixpath
import shlex
import string
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from random import Random
from typing import Any, Literal

DistKind = Literal["choice", "uniform", "loguniform", "int"]
RESERVED = ("run_dir", "sweep", "index")
"""Placeholders every command has; no parameter may take these names."""
MAX_FOLDER_BYTES = 100
MAX_POINTS = 1_000_000
"""expand() refuses bigger grids; check count() first to tell the user."""
_NAME_CHARS = "._+-@"
"""Besides letters and digits, the characters a folder name keeps."""


class SweepError(ValueError):
    """An invalid sweep. `loc` is the key path at fault, e.g. ("grid", 0, "lr")."""

    def __init__(self, message: str, loc: tuple[str | int, ...] = ()) -> None:
        super().__init__(message)
        self.loc = loc


@dataclass(frozen=True)
class Distribution:
    kind: DistKind
    values: tuple[Any, ...] = ()
    """For `choice`."""
    low: float = 0.0
    high: float = 0.0
    """Bounds for `uniform`, `loguniform` and `int` (both included for `int`)."""

    def __post_init__(self) -> None:
        bounds = f"[{self.low!r}, {self.high!r}]"
        if self.kind == "choice":
            if not self.values:
                raise SweepError("choice needs at least one value")
            return
        if self.kind not in ("uniform", "loguniform", "int"):
            raise SweepError(f"unknown distribution {self.kind!r}: use choice, uniform, ...")
        if not (math.isfinite(self.low) and math.isfinite(self.high) and self.low <= self.high):
            raise SweepError(f"{self.kind}: needs finite bounds low <= high, got {bounds}")
        if self.kind == "loguniform" and self.low <= 0:
            raise SweepError(f"loguniform: bounds must be greater than zero, got {bounds}")
        if self.kind == "int" and not (
            float(self.low).is_integer() and float(self.high).is_integer()
        ):
            raise SweepError(f"int: bounds must be whole numbers, got {bounds}")

    def sample(self, rng: Random) -> Any:
        if self.kind == "choice":
            return rng.choice(self.values)
        if self.kind == "int":
            return rng.randint(int(self.low), int(self.high))
        if self.kind == "uniform":
            return rng.uniform(self.low, self.high)
        drawn = math.exp(rng.uniform(math.log(self.low), math.log(self.high)))
        return min(max(drawn, self.low), self.high)

    def size(self) -> int | None:
        """How many distinct values it gives; None for a float range."""
        if self.kind == "choice":
            return len({value_text(v) for v in self.values})
        if self.kind == "int" or self.low == self.high:
            return int(self.high - self.low) + 1
        return None


@dataclass(frozen=True)
class SweepSpec:
    name: str
    command: str | None = None
    """The template; None for Python-task sweeps (then points carry no command)."""
    results_dir: str = "results"
    fixed: Mapping[str, Any] = field(default_factory=dict)
    grids: tuple[Mapping[str, tuple[Any, ...]], ...] = ()
    """Each grid's Cartesian product, joined in order; () = one point of `fixed` alone."""
    random: Mapping[str, Distribution] = field(default_factory=dict)
    samples: int | None = None
    seed: int | None = None
    shuffle: bool = False
    exclude: tuple[Mapping[str, Any], ...] = ()
    """Partial points: a point matching every key of one of them is left out."""
    exclude_expr: str | None = None
    """A Python expression over the point's keys; points where it is true are left out."""
    item_sep: str = ","
    kv_sep: str = "="

    def __post_init__(self) -> None:
        _validate(self)

    @property
    def varying(self) -> tuple[str, ...]:
        """The keys any point varies, in declaration order (grids first, then random)."""
        return tuple(dict.fromkeys([*(k for g in self.grids for k in g), *self.random]))

    @property
    def needs_seed(self) -> bool:
        return self.shuffle or self.samples is not None


@dataclass(frozen=True)
class Point:
    index: int
    params: Mapping[str, Any]
    """`fixed` merged with this point's varying values."""
    varying: tuple[str, ...]
    folder: str
    run_dir: str
    """`results_dir/folder`, as written in the spec (relative if it is)."""
    command: str | None


@dataclass(frozen=True)
class ResumePlan:
    """Points in sweep order, by what a resubmission does with them."""

    to_run: tuple[Point, ...]
    skipped_done: tuple[Point, ...]
    rerun_failed: tuple[Point, ...]
    new: tuple[Point, ...]
    rerun_done: tuple[Point, ...] = ()
    """Done points run again because of `force`."""

    def summary(self) -> str:
        text = (
            f"{len(self.to_run)} to run: {len(self.new)} new, {len(self.rerun_failed)} failed"
            f" to rerun, {len(self.skipped_done)} done (skipped)"
        )
        return text + (f", {len(self.rerun_done)} done forced to rerun" if self.rerun_done else "")


# ---- validation -----------------------------------------------------------------------------


def _validate(spec: SweepSpec) -> None:
    if not spec.name:
        raise SweepError("name: must not be empty", ("name",))
    _check_seps(spec.item_sep, spec.kv_sep)
    for key in spec.fixed:
        _check_key(key, "fixed", ("fixed", key))
    _check_grids(spec)
    if spec.samples is not None and spec.samples < 1:
        raise SweepError(f"samples: must be at least 1, got {spec.samples}", ("samples",))
    if spec.random and spec.samples is None:
        raise SweepError("random: distributions need `samples` (how many points)", ("random",))
    known = [*spec.fixed, *(k for k in spec.varying if k not in spec.fixed)]
    for i, partial in enumerate(spec.exclude):
        if not partial:
            raise SweepError(f"exclude[{i}]: empty; it would exclude every point", ("exclude", i))
        unknown = [k for k in partial if k not in known]
        if unknown:
            raise SweepError(
                f"exclude[{i}]: {unknown[0]} is not a parameter; parameters: {', '.join(known)}",
                ("exclude", i),
            )
    if spec.exclude_expr is not None:
        compile_expr(spec.exclude_expr, known)
    if spec.command is not None:
        check_template(spec.command, known)
        _check_coverage(spec)


def _check_grids(spec: SweepSpec) -> None:
    for i, grid in enumerate(spec.grids):
        where = "grid" if len(spec.grids) == 1 else f"grid[{i}]"
        if not grid:
            raise SweepError(f"{where}: empty; give each parameter a list of values", ("grid", i))
        for key, values in grid.items():
            _check_key(key, where, ("grid", i, key))
            if not values:
                raise SweepError(f"{where}.{key}: empty list of values", ("grid", i, key))
    for key in spec.random:
        _check_key(key, "random", ("random", key))
        if any(key in grid for grid in spec.grids):
            raise SweepError(f"random.{key}: {key!r} is also in grid", ("random", key))


def _check_coverage(spec: SweepSpec) -> None:
    """Every grid must give a value to every placeholder of the command."""
    used = set(template_fields(spec.command or "")) - set(RESERVED)
    for i, grid in enumerate(spec.grids):
        missing = sorted(used - set(grid) - set(spec.fixed) - set(spec.random))
        if missing:
            raise SweepError(
                f"command: placeholder {{{missing[0]}}} has no value in grid[{i}];"
                " add it there or to fixed",
                ("grid", i),
            )


def _check_key(key: object, where: str, loc: tuple[str | int, ...]) -> None:
    if not isinstance(key, str) or not key:
        raise SweepError(f"{where}: {key!r}: a parameter name must be a non-empty string", loc)
    if key in RESERVED:
        raise SweepError(f"{where}.{key}: reserved for the placeholder {{{key}}}; rename it", loc)


def _check_seps(item_sep: str, kv_sep: str) -> None:
    for which, sep in (("item", item_sep), ("kv", kv_sep)):
        if len(sep) != 1 or sep.isalnum() or sep.isspace() or sep in "/\\~_.'\"\0":
            raise SweepError(
                f"separators.{which}: {sep!r} must be one punctuation character other than"
                " / \\ ~ _ . and quotes",
                ("separators", which),
            )
    if item_sep == kv_sep:
        raise SweepError(f"separators: item and kv are both {item_sep!r}", ("separators",))


# ---- expansion ------------------------------------------------------------------------------


def _grid_size(spec: SweepSpec) -> int:
    return sum(math.prod(len(v) for v in g.values()) for g in spec.grids) if spec.grids else 1


def count(spec: SweepSpec) -> int:
    """Points expand() gives at most (before duplicates and exclude), without expanding."""
    size = _grid_size(spec)
    if spec.samples is None:
        return size
    return spec.samples if spec.random else min(spec.samples, size)


def expand(spec: SweepSpec) -> list[Point]:
    """All points of the sweep, numbered in order; see the module doc for the rules."""
    if spec.needs_seed and spec.seed is None:
        raise SweepError("seed: shuffle and samples need a seed; pick one and record it", ("seed",))
    size = _grid_size(spec)
    if size > MAX_POINTS:
        raise SweepError(f"grid: {size} points, more than {MAX_POINTS}; narrow it", ("grid",))
    rng = Random(spec.seed)
    keep = _keeper(spec)
    if spec.random:
        chosen = _draw(spec, rng, keep)
    else:
        chosen = [(p, v) for p, v in _grid(spec) if keep(p)]
        if spec.samples is not None:
            if spec.samples > len(chosen):
                raise SweepError(
                    f"samples: {spec.samples} asked, but the grid has only {len(chosen)} points",
                    ("samples",),
                )
            chosen = rng.sample(chosen, spec.samples)
        elif spec.shuffle:
            rng.shuffle(chosen)
    return [_point(spec, i, params, varying) for i, (params, varying) in enumerate(chosen)]


_Combo = tuple[dict[str, Any], tuple[str, ...]]


def _identity(params: Mapping[str, Any]) -> frozenset[tuple[str, str]]:
    return frozenset((k, value_text(v)) for k, v in params.items())


def _grid(spec: SweepSpec) -> list[_Combo]:
    """Each grid's product with `fixed` merged in, duplicates dropped (the first one stays)."""
    seen: set[frozenset[tuple[str, str]]] = set()
    out: list[_Combo] = []
    for grid in spec.grids or ({},):
        varying = tuple(k for k in spec.varying if k in grid or k in spec.random)
        for values in itertools.product(*grid.values()):
            params = {**spec.fixed, **dict(zip(grid, values, strict=True))}
            ident = _identity(params)
            if ident not in seen:
                seen.add(ident)
                out.append((params, varying))
    return out


def _draw(spec: SweepSpec, rng: Random, keep: Callable[[Mapping[str, Any]], bool]) -> list[_Combo]:
    """`samples` distinct points: grid points in shuffled rounds, each with random draws."""
    wanted = spec.samples or 0
    bases = _grid(spec)
    sizes = [d.size() for d in spec.random.values()]
    space = None if None in sizes else len(bases) * math.prod(s or 0 for s in sizes)
    if space is not None and wanted > space:
        raise SweepError(
            f"samples: {wanted} asked, but only {space} distinct points exist", ("samples",)
        )
    seen: set[frozenset[tuple[str, str]]] = set()
    out: list[_Combo] = []
    order: list[int] = []
    tries = 0
    while len(out) < wanted:
        if tries >= 100 * wanted + 1000:
            raise SweepError(
                f"samples: drew only {len(out)} distinct points of {wanted} in {tries} tries;"
                " widen the distributions or loosen exclude",
                ("samples",),
            )
        tries += 1
        if not order:
            order = list(range(len(bases)))
            rng.shuffle(order)
        base, varying = bases[order.pop()]
        params = {**base, **{k: d.sample(rng) for k, d in spec.random.items()}}
        ident = _identity(params)
        if ident not in seen and keep(params):
            seen.add(ident)
            out.append((params, varying))
    return out


def _point(spec: SweepSpec, index: int, params: dict[str, Any], varying: tuple[str, ...]) -> Point:
    folder = folder_name(params, varying, spec.item_sep, spec.kv_sep, index=index)
    run_dir = posixpath.join(spec.results_dir, folder)
    command = None
    if spec.command is not None:
        command = render(spec.command, params, run_dir, spec.name, index)
    return Point(index, params, varying, folder, run_dir, command)


def _keeper(spec: SweepSpec) -> Callable[[Mapping[str, Any]], bool]:
    """A predicate: True for a point that `exclude` does not remove."""
    partials = [{k: value_text(v) for k, v in p.items()} for p in spec.exclude]
    expr = spec.exclude_expr
    tree = compile_expr(expr, [*spec.fixed, *spec.varying]) if expr is not None else None

    def keep(params: Mapping[str, Any]) -> bool:
        for partial in partials:
            if all(k in params and value_text(params[k]) == t for k, t in partial.items()):
                return False
        return tree is None or not evaluate(tree, params, expr or "")

    return keep


# ---- names and commands ---------------------------------------------------------------------


def value_text(value: Any) -> str:
    """A value as commands and folder names show it: "0.1", "1e-05", "32", "adam", "[1,2]"."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, int | float):  # through int()/float(): numpy's repr is "np.float64(..)"
        return repr(int(value) if isinstance(value, int) else float(value))
    try:
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


def _clean(text: str, seps: str) -> str:
    return "".join(c if (c.isalnum() or c in _NAME_CHARS) and c not in seps else "_" for c in text)


def folder_name(
    params: Mapping[str, Any],
    varying_keys: Sequence[str],
    item_sep: str = ",",
    kv_sep: str = "=",
    *,
    index: int = 0,
) -> str:
    """`lr=0.1,bs=32` from the varying keys, in their order; `point_<index>` if there are none.

    Other characters than letters, digits and `._+-@` (and a leading `.` or `-`) become `_`;
    then, or when the name is over MAX_FOLDER_BYTES, it ends in `~` and 8 hex digits of a hash
    of the exact values, so names stay legal, short and unique.
    """
    pairs = [(k, value_text(params[k])) for k in varying_keys if k in params]
    if not pairs:
        return f"point_{index}"
    seps = item_sep + kv_sep
    name = item_sep.join(f"{_clean(k, seps)}{kv_sep}{_clean(v, seps)}" for k, v in pairs)
    exact = name == item_sep.join(f"{k}{kv_sep}{v}" for k, v in pairs)
    if name[0] in ".-":
        name, exact = "_" + name[1:], False
    if exact and len(name.encode()) <= MAX_FOLDER_BYTES:
        return name
    digest = hashlib.sha256(json.dumps(pairs, ensure_ascii=False).encode()).hexdigest()[:8]
    head = name.encode()[: MAX_FOLDER_BYTES - 9].decode("utf-8", "ignore")
    return f"{head}~{digest}"


_Field = tuple[str, str | None, str | None, str | None]


def _parse_template(template: str) -> list[_Field]:
    try:
        return list(string.Formatter().parse(template))
    except ValueError as exc:
        raise SweepError(
            f"command: {exc} in {template!r} (write {{{{ and }}}} for literal braces)",
            ("command",),
        ) from None


def template_fields(template: str) -> list[str]:
    """The placeholder names in `template`, in order, repeats included."""
    return [name for _, name, _, _ in _parse_template(template) if name is not None]


def check_template(template: str, names: Collection[str]) -> None:
    """Raise SweepError for a placeholder that is not a parameter or cannot be rendered."""
    for _, name, spec, conversion in _parse_template(template):
        if name is None:
            continue
        if not name or name.isdigit():
            raise SweepError(
                f"command: placeholder {{{name}}} needs a parameter name", ("command",)
            )
        if name not in names and name not in RESERVED:
            raise SweepError(
                f"command: placeholder {{{name}}} is not a parameter; parameters: "
                f"{', '.join(names) or '(none)'} (and {', '.join(RESERVED)})",
                ("command",),
            )
        if conversion not in (None, "r", "s", "a") or "{" in (spec or ""):
            raise SweepError(
                f"command: placeholder {{{name}}}: unsupported conversion or nested placeholder",
                ("command",),
            )


def render(template: str, params: Mapping[str, Any], run_dir: str, sweep: str, index: int) -> str:
    """The command for one point: each placeholder's value shell-quoted (`{{`/`}}` = braces)."""
    specials: dict[str, Any] = {"run_dir": run_dir, "sweep": sweep, "index": index}
    out: list[str] = []
    check_template(template, list(params))
    for literal, name, spec, conversion in _parse_template(template):
        out.append(literal)
        if name is not None:
            value = specials[name] if name in specials else params[name]
            out.append(shlex.quote(_format(name, value, spec or "", conversion)))
    return "".join(out)


def _format(name: str, value: Any, spec: str, conversion: str | None) -> str:
    if conversion is not None:
        value = {"r": repr, "a": ascii, "s": value_text}[conversion](value)
    if not spec:
        return value_text(value)
    try:
        return format(value, spec)
    except (TypeError, ValueError) as exc:
        raise SweepError(
            f"command: {{{name}:{spec}}} cannot format {value!r}: {exc}", ("command",)
        ) from None


def unused_params(template: str, spec: SweepSpec) -> list[str]:
    """Varying keys the command does not mention (worth a warning; not an error)."""
    used = set(template_fields(template))
    return [k for k in spec.varying if k not in used]


def plan_resume(
    points: Iterable[Point], done: Collection[str], failed: Collection[str], *, force: bool = False
) -> ResumePlan:
    """Sort points by their folder: in `done` skipped (rerun with `force`), in `failed` rerun,
    others new. A folder in both counts as done."""
    to_run: list[Point] = []
    buckets: dict[str, list[Point]] = {"done": [], "failed": [], "new": []}
    for point in points:
        kind = "done" if point.folder in done else "failed" if point.folder in failed else "new"
        buckets[kind].append(point)
        if force or kind != "done":
            to_run.append(point)
    done_points = tuple(buckets["done"])
    return ResumePlan(
        to_run=tuple(to_run),
        skipped_done=() if force else done_points,
        rerun_failed=tuple(buckets["failed"]),
        new=tuple(buckets["new"]),
        rerun_done=done_points if force else (),
    )


# ---- exclude expressions --------------------------------------------------------------------


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


def compile_expr(text: str, names: Collection[str]) -> ast.Expression:
    """Parse an exclude expression; SweepError for anything but names of `names`, constants,
    comparisons (`in` too), and/or/not, arithmetic, `x if c else y`, tuples and lists."""
    where = f"exclude: expression {text!r}"
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise SweepError(f"{where}: invalid syntax ({exc})", ("exclude",)) from None
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
