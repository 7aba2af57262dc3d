"""The suite's own xdist units (tests/xdist_units.py): the browser modules in a few units."""

from __future__ import annotations

from pathlib import Path

from xdist_units import BROWSER_UNITS, browser_units


def test_browser_modules_share_units_of_about_as_many_tests_and_the_rest_stay_files(
    tmp_path: Path,
) -> None:
    e2e = tmp_path / "tests" / "e2e"
    e2e.mkdir(parents=True)
    (e2e / "test_dashboard.py").write_text("import pytest\n\ndef browser():\n    pass\n")
    sizes = {f"test_b{n}.py": n for n in range(1, 9)}  # 36 tests in 8 browser modules
    for name in sizes:
        (e2e / name).write_text("from test_dashboard import Board, browser, expect\n")
    (e2e / "test_plain.py").write_text("from test_dashboard import Board\n# a browser\n")
    nodeids = [f"tests/e2e/test_dashboard.py::test_{i}" for i in range(4)]
    nodeids += [f"tests/e2e/{name}::test_{i}" for name, n in sizes.items() for i in range(n)]
    nodeids += ["tests/e2e/test_plain.py::test_0", "tests/e2e/test_plain.py::test_1"]

    units = browser_units(nodeids, tmp_path)

    assert set(units) == {"tests/e2e/test_dashboard.py"} | {f"tests/e2e/{n}" for n in sizes}
    held: dict[str, int] = {}
    for nodeid in nodeids:
        file = nodeid.split("::")[0]
        if file in units:
            held[units[file]] = held.get(units[file], 0) + 1
    assert sorted(held) == [f"browsers-{n}" for n in range(BROWSER_UNITS)]
    assert max(held.values()) - min(held.values()) <= 1, held  # 40 tests: 10 a unit
