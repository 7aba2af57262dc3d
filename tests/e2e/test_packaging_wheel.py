"""The wheel a user installs (`pip install gpuherd-*.whl`, not the suite's editable install)
holds every file gpuherd reads at run time, nothing of the tests, and says what it needs.

The wheel is built as a user builds it (`pip wheel --no-deps .`, hatchling in an isolated
build environment), then installed with `--no-deps` into a venv that borrows this
environment's packages for the dependencies, so the CLI and the dashboard's files are the
installed copy's, never the checkout's.
"""

from __future__ import annotations

import email.message
import email.parser
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "src" / "gpuherd"

# The oldest release of each dependency with what gpuherd uses of it; a lower floor in the
# metadata lets pip keep an older one that a user already has, and gpuherd then breaks.
FLOORS = {
    # click.NoSuchCommand (cli/main.py): every mistyped command, every usage error, ended in
    # an AttributeError traceback with click 8.1-8.3.
    "click": Version("8.4"),
    # pydantic 2.5 cannot resolve wire.py's Annotated aliases: the daemon did not start
    # (PydanticUndefinedAnnotation: name 'Bool' is not defined).
    "pydantic": Version("2.6"),
    # Before 0.132 FastAPI read a body sent without Content-Type as JSON: the API's 415 for a
    # body not sent as JSON (README, "HTTP API") held only for a Content-Type other than JSON.
    "fastapi": Version("0.132"),
    # A notebook's task is pickled with cloudpickle at submit (tasks_pickled.py): its support
    # of Python 3.11 came in 2.1, and was fixed for 3.11's release in 2.2.
    "cloudpickle": Version("2.2"),
}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(REPO)],
        capture_output=True,
        text=True,
        timeout=110,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (built,) = out.glob("gpuherd-*.whl")
    return built


def package_files() -> set[str]:
    """Every file of src/gpuherd that is not Python's cache, as the wheel names it."""
    return {
        path.relative_to(PACKAGE.parent).as_posix()
        for path in PACKAGE.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"
    }


def metadata(wheel: Path) -> email.message.Message:
    with zipfile.ZipFile(wheel) as zf:
        (name,) = [n for n in zf.namelist() if n.endswith(".dist-info/METADATA")]
        return email.parser.Parser().parsestr(zf.read(name).decode())


def test_the_wheel_holds_every_package_file_and_nothing_else(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    files = package_files()
    # The dashboard's templates and static files, and py.typed for users of the Python API.
    assert {f for f in files if not f.endswith(".py")} >= {
        "gpuherd/py.typed",
        "gpuherd/api/templates/base.html",
        "gpuherd/api/static/htmx.min.js",
    }
    assert sorted(files - names) == []
    outside = [n for n in names if not n.startswith(("gpuherd/", "gpuherd-"))]
    assert outside == []
    assert [n for n in names if "__pycache__" in n or n.endswith(".pyc")] == []
    # MIT asks for its text with every copy: in the wheel's metadata folder.
    assert [n for n in names if n.endswith(".dist-info/licenses/LICENSE")], sorted(names)[-8:]


def test_the_wheel_says_what_gpuherd_needs(wheel: Path) -> None:
    meta = metadata(wheel)
    assert meta["Requires-Python"] == ">=3.11"
    floors: dict[str, Version] = {}
    for text in meta.get_all("Requires-Dist") or []:
        req = Requirement(text)
        if req.marker is None:
            floors[req.name.lower()] = min(
                (Version(s.version) for s in req.specifier if s.operator == ">="),
                default=Version("0"),
            )
    for name, needed in FLOORS.items():
        assert floors[name] >= needed, f"{name}>={floors[name]}: gpuherd needs {needed}"
    with zipfile.ZipFile(wheel) as zf:
        (entry_points,) = [n for n in zf.namelist() if n.endswith(".dist-info/entry_points.txt")]
        scripts = zf.read(entry_points).decode()
    assert "gpuherd = gpuherd.cli.entry:main" in scripts
    assert "herd = gpuherd.cli.entry:main" in scripts


def test_the_installed_wheel_runs_and_finds_its_dashboard_files(
    wheel: Path, tmp_path: Path
) -> None:
    venv = tmp_path / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=60
    )
    python = venv / "bin" / "python"
    # The venv's own packages first: a PYTHONPATH (a checkout's src) would come before them.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    target = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    # The dependencies are this environment's (where the tests run: CI's venv, which has what
    # pip put there besides the machine's), each folder a path line after the venv's own
    # packages; `--system-site-packages` would borrow only the base interpreter's.
    borrowed = [p for p in sys.path if Path(p).name in ("site-packages", "dist-packages")]
    (Path(target) / "borrowed.pth").write_text("\n".join(borrowed) + "\n")
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", target, str(wheel)],
        capture_output=True,
        text=True,
        timeout=110,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    # Every template loads and every static file is read, from the installed copy.
    check = (
        "import json, gpuherd, gpuherd.api.assets as a, gpuherd.api.views as v\n"
        "names = v.environment().list_templates()\n"
        "[v.environment().get_template(n) for n in names]\n"
        "print(json.dumps([gpuherd.__file__, len(names), sorted(a.ASSETS)]))\n"
    )
    proc = subprocess.run(
        [str(python), "-c", check],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    where, count, assets = json.loads(proc.stdout)
    assert where.startswith(target), where  # the wheel's copy, not the checkout's
    assert count == len(list((PACKAGE / "api" / "templates").glob("*.html")))
    assert assets == sorted(p.name for p in (PACKAGE / "api" / "static").iterdir())
    proc = subprocess.run(
        [str(python), "-m", "gpuherd", "--version"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
    )
    assert proc.returncode == 0 and proc.stdout.startswith("gpuherd, version "), proc
