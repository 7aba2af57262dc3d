"""Whether a task of the script you run is defined only under `if __name__ == "__main__":`.

A job loads the script as multiprocessing's "spawn" child does (worker.py), so that block does
not run in the job: a function defined there is not found, and every job of it failed with
`gpuherd worker: demo.py has no 'train'`, long after the submit that looked fine. The
decorator reads the script's syntax instead and refuses such a function at once. Only a name
bound nowhere else in the script is refused (a name also bound outside the block, or bound in
a way the syntax does not show, is left to the job, as before). A global the task uses that is
set only in that block (`DATA = load()` under it) is warned of, as the job fails on it with a
bare NameError; warned, not refused: the code that uses it may be one a job never reaches.
"""

from __future__ import annotations

import ast
import functools
import importlib.util
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from gpuherd.errors import HerdError
from gpuherd.pyapi_values import warn_at_caller

if TYPE_CHECKING:
    import symtable


def refuse_main_block(script: Path, qualname: str) -> None:
    """HerdError now for a task the job would not find: defined under the script's
    `if __name__ == "__main__":`, which the job does not run; a UserWarning for a global it
    reads that only that block sets."""
    top = qualname.split(".")[0]
    try:
        source = script.read_bytes()
    except OSError:
        return  # (the job says what it cannot read)
    if only_under_main_block(source, top):
        raise HerdError(
            f'{qualname} is defined under `if __name__ == "__main__":` in {script}, which a '
            f"job does not run (it loads the script as multiprocessing's spawn does): define "
            f"{top} above that block, at the script's top level"
        )
    if names := main_block_globals(source, top):
        them, parameters = ("it", "a parameter") if len(names) == 1 else ("them", "parameters")
        warn_at_caller(
            f'{top} uses {", ".join(names)}, set only under `if __name__ == "__main__":` in '
            f"{script}, which a job does not run (it loads the script as multiprocessing's "
            f"spawn does), so the job fails with NameError: set {them} at the script's top "
            f"level, or pass {them} to {top} as {parameters}",
            UserWarning,
        )


def only_under_main_block(source: bytes, name: str) -> bool:
    """Whether `name` is bound in the script `source` only under its top-level
    `if __name__ == "__main__":` blocks (False when the source does not parse)."""
    syntax = _script_syntax(source)
    return syntax is not None and name in syntax.main_only


def main_block_globals(source: bytes, name: str) -> list[str]:
    """The globals the top-level function (or class) `name` reads, nested functions and
    comprehensions included, that the script `source` binds only under its
    `if __name__ == "__main__":` blocks. (Python's own symbol tables say which names are
    global there: a parameter, a local or an `except ... as` name is not.)"""
    syntax = _script_syntax(source)
    if syntax is None:
        return []
    read = set().union(*(_globals_read(t) for t in syntax.top_level if t.get_name() == name))
    return sorted(read & syntax.main_only)


@dataclass(frozen=True)
class _ScriptSyntax:
    main_only: frozenset[str]
    top_level: list[symtable.SymbolTable]  # (the module's functions and classes)


# Each task of a script reads the same script: parsed once (50 tasks parsed it 100 times, and
# built its symbol table 50 times). Keyed by the source itself: an edited script parses again.
@functools.lru_cache(maxsize=4)
def _script_syntax(source: bytes) -> _ScriptSyntax | None:
    """The script's syntax, as the checks above read it; None when it does not parse."""
    import symtable  # (only for a script's task, once)

    try:
        tree = ast.parse(source)
        module = symtable.symtable(importlib.util.decode_source(source), "<script>", "exec")
    except (SyntaxError, ValueError):
        return None
    return _ScriptSyntax(frozenset(_main_only(tree)), module.get_children())


def _globals_read(table: symtable.SymbolTable) -> set[str]:
    names = {s.get_name() for s in table.get_symbols() if s.is_global() and s.is_referenced()}
    return names.union(*(_globals_read(child) for child in table.get_children()))


def _main_only(tree: ast.Module) -> set[str]:
    """The names bound under the top-level `if __name__ == "__main__":` blocks and nowhere
    else in the script."""
    blocks = [node for node in tree.body if isinstance(node, ast.If) and _is_main_test(node.test)]
    inside = _bound([statement for block in blocks for statement in block.body])
    outside = [node for node in tree.body if not any(node is block for block in blocks)]
    outside += [statement for block in blocks for statement in block.orelse]
    return inside - _bound(outside)


def _is_main_test(test: ast.expr) -> bool:
    """`__name__ == "__main__"` (either way round)."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return False
    if not isinstance(test.ops[0], ast.Eq):
        return False
    sides = [test.left, test.comparators[0]]
    named = any(isinstance(side, ast.Name) and side.id == "__name__" for side in sides)
    return named and any(
        isinstance(side, ast.Constant) and side.value == "__main__" for side in sides
    )


def _bound(statements: Iterable[ast.stmt]) -> set[str]:
    """Every name the statements bind, at any depth (more than the top level's: a name that
    may be bound outside the block is not refused)."""
    names: set[str] = set()
    for statement in statements:
        for node in ast.walk(statement):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, ast.alias):
                names.add((node.asname or node.name).split(".")[0])
    return names


__all__ = ["main_block_globals", "only_under_main_block", "refuse_main_block"]
