"""Whether a task of the script you run is defined only under `if __name__ == "__main__":`.

A job loads the script as multiprocessing's "spawn" child does (worker.py), so that block does
not run in the job: a function defined there is not found, and every job of it failed with
`gpuherd worker: demo.py has no 'train'`, long after the submit that looked fine. The
decorator reads the script's syntax instead and refuses such a function at once. Only a name
bound nowhere else in the script is refused (a name also bound outside the block, or bound in
a way the syntax does not show, is left to the job, as before).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

from gpuherd.errors import HerdError


def refuse_main_block(script: Path, qualname: str) -> None:
    """HerdError now for a task the job would not find: defined under the script's
    `if __name__ == "__main__":`, which the job does not run."""
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


def only_under_main_block(source: bytes, name: str) -> bool:
    """Whether `name` is bound in the script `source` only under its top-level
    `if __name__ == "__main__":` blocks (False when the source does not parse)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return False
    blocks = [node for node in tree.body if isinstance(node, ast.If) and _is_main_test(node.test)]
    inside = _bound([statement for block in blocks for statement in block.body])
    outside = [node for node in tree.body if not any(node is block for block in blocks)]
    outside += [statement for block in blocks for statement in block.orelse]
    return name in inside and name not in _bound(outside)


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


__all__ = ["only_under_main_block", "refuse_main_block"]
