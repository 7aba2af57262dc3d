"""Bad sweep input: wrong types, huge grids, placeholders missing, unused or too clever, random
files; and hostile values that must reach the program as one argument.

tests/e2e/test_sweep_cli.py already covers unknown keys, a missing placeholder in a file,
empty values, invalid YAML, a non-mapping file and other one-line mistakes;
tests/integration/test_sweeps.py covers 10,100 points needing --yes and `-p` values such as
`; rm -rf ~` arriving intact. This file adds what they do not.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from faults import record, run_cli, scaled
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import forks
from conftest import Herd, wait_for


def sweep(cwd: Path, *args: str, env: dict[str, str] | None = None) -> Any:
    if env is None:
        env = {k: v for k, v in os.environ.items() if k != "GPUHERD_HOME"}
        env["GPUHERD_HOME"] = str(cwd / "no-daemon-here")
    return forks.gpuherd(["sweep", *args], env=env, cwd=cwd, input=None, timeout=60)


def one_error_line(done: Any, status: int = 1) -> str:
    """The one error line of a refusal: of a file, exit 1; of the command line, exit 2."""
    assert done.returncode == status, (done.returncode, done.stdout, done.stderr)
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("gpuherd: error: "), done.stderr
    assert "Traceback" not in done.stderr
    return str(lines[0])


WRONG_TYPES = {
    "command a number": ("command: 5\ngrid:\n  a: [1]\n", "command"),
    "grid values not a list": ("command: echo {a}\ngrid:\n  a: 5\n", "grid"),
    "gpus a word": ("command: echo {a}\ngrid:\n  a: [1]\ngpus: two\n", "gpus"),
    "negative gpus": ("command: echo {a}\ngrid:\n  a: [1]\ngpus: -1\n", "gpus"),
    "samples zero": ("command: echo {a}\ngrid:\n  a: [1, 2]\nsamples: 0\n", "samples"),
    "seed a float": ("command: echo {a}\ngrid:\n  a: [1]\nseed: 1.5\n", "seed"),
    "shuffle a string": ("command: echo {a}\ngrid:\n  a: [1]\nshuffle: 'yes'\n", "shuffle"),
    "timeout nonsense": ("command: echo {a}\ngrid:\n  a: [1]\ntimeout: soon\n", "timeout"),
    "mem nonsense": ("command: echo {a}\ngrid:\n  a: [1]\nmem: lots\n", "mem"),
    "env a list": ("command: echo {a}\ngrid:\n  a: [1]\nenv: [1, 2]\n", "env"),
    "random one bound": ("command: echo {a}\nrandom:\n  a: {uniform: [1]}\nsamples: 2\n", "a"),
    "random two kinds": (
        "command: echo {a}\nrandom:\n  a: {uniform: [0, 1], int: [0, 5]}\nsamples: 2\n",
        "a",
    ),
    "grid an empty list": ("command: echo {a}\ngrid: []\n", "grid"),
    "tab indentation": ("command: echo {a}\ngrid:\n\ta: [1]\n", "YAML"),
}


@pytest.mark.parametrize("case", sorted(WRONG_TYPES))
def test_a_sweep_file_with_a_wrong_type_gives_one_clear_line(tmp_path: Path, case: str) -> None:
    text, names = WRONG_TYPES[case]
    (tmp_path / "bad.yaml").write_text(text)
    line = one_error_line(sweep(tmp_path, "bad.yaml", "--dry-run"))
    assert "bad.yaml" in line and names in line, line


def billion(folder: Path) -> Path:
    """A grid of 10 values in each of 9 parameters: 10**9 points."""
    keys = "abcdefghi"
    spec = {
        "name": "huge",
        "command": "echo " + " ".join(f"{{{k}}}" for k in keys),
        "grid": {k: list(range(10)) for k in keys},
    }
    path = folder / "huge.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


def test_a_billion_point_grid_is_refused_with_its_count(tmp_path: Path) -> None:
    billion(tmp_path)
    began = time.monotonic()
    line = one_error_line(sweep(tmp_path, "huge.yaml", "--dry-run"))
    # Past the cap, --yes cannot help: the line says to narrow it, and offers no --yes.
    assert "1,000,000,000 points" in line and "narrow it" in line, line
    assert "--yes" not in line, line
    line = one_error_line(sweep(tmp_path, "huge.yaml", "--dry-run", "--yes"))
    assert "1,000,000,000 points" in line, line  # a cap even with --yes; never expanded
    # Counted, not expanded: a billion points expanded take many minutes and gigabytes; two
    # refusals take ~0.7 s quiet, 16 s was seen at a load of 12 (a guard, not a measure).
    assert time.monotonic() - began < 60


def test_a_billion_point_grid_never_reaches_the_queue(daemon: Herd) -> None:
    folder = daemon.home.parent
    billion(folder)
    pid = daemon.pid
    for extra in ([], ["--yes"]):
        done = daemon.cli("sweep", "huge.yaml", *extra, check=False, cwd=folder)
        line = one_error_line(done)
        assert "1,000,000,000 points" in line or "1000000000 points" in line, line
    assert daemon.pid == pid and daemon.ls_all() == [] and daemon.json("sweep", "ls") == []


def test_the_advice_for_a_huge_grid_works(tmp_path: Path) -> None:
    # Sampling a grid of more than 1,000,000 points used to expand it first, and was refused
    # ("grid: 1000000000 points, ...; narrow it"); now the indices are drawn, not the grid.
    billion(tmp_path)
    line = one_error_line(sweep(tmp_path, "huge.yaml", "--dry-run"))
    assert "narrow it, or draw some of them (--samples N)" in line, line
    began = time.monotonic()
    done = sweep(tmp_path, "huge.yaml", "--samples", "5", "--seed", "1", "--dry-run")
    assert done.returncode == 0, done.stderr
    commands = done.stdout.splitlines()
    assert len(set(commands)) == 5 and all(len(c.split()) == 10 for c in commands), commands
    assert time.monotonic() - began < 60  # drawn, never listed (a guard: see above)
    again = sweep(tmp_path, "huge.yaml", "--samples", "5", "--seed", "1", "--dry-run")
    assert again.stdout.splitlines() == commands


PLACEHOLDERS = [
    # (template, -p arguments, what must happen)
    ("echo {a.__class__}", ["a", "1"], "refused"),  # no attribute access: no format injection
    ("echo {a[0]}", ["a", "xy"], "refused"),
    ("echo {0}", ["a", "1"], "refused"),
    ("echo {}", ["a", "1"], "refused"),
    ("echo {a} {", ["a", "1"], "refused"),
    ("echo {b}", ["a", "1"], "refused"),  # missing
    ("echo {a} {{b}}", ["a", "1"], "echo 1 {b}"),  # literal braces
    ("echo {a}", ["a", "1", "-p", "c", "2", "3"], "warning"),  # c unused
]


@pytest.mark.parametrize(("template", "params", "expected"), PLACEHOLDERS)
def test_placeholders_missing_unused_or_too_clever(
    tmp_path: Path, template: str, params: list[str], expected: str
) -> None:
    done = sweep(tmp_path, template, "-p", *params, "--dry-run")
    if expected == "refused":  # (a template typed: a mistake of the command line, exit 2)
        line = one_error_line(done, 2)
        assert line.endswith(" (see gpuherd sweep --help)"), line
        assert "placeholder" in line or "format" in line or "brace" in line, line
    elif expected == "warning":
        assert done.returncode == 0, done.stderr
        assert "gpuherd: warning: parameter 'c' does not appear in the command" in done.stderr
        assert done.stdout.splitlines() == ["echo 1", "echo 1"]
    else:
        assert done.returncode == 0, done.stderr
        assert done.stdout.splitlines() == [expected]


# ---- random sweep files: a clean line or a valid dry run, never a traceback --------------------

KEYS = [
    "name", "command", "results_dir", "fixed", "grid", "random", "samples", "seed", "shuffle",
    "exclude", "separators", "gpus", "mem", "priority", "retries", "timeout", "max_parallel",
    "project", "env", "unknown",
]  # fmt: skip
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 10**12),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(["echo {a}", "echo {a} {b} {run_dir}", "{a", "1e-5", "24GiB", "2h", "a"]),
    st.text(max_size=6),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.sampled_from(["a", "b", "choice", "uniform", "int"]), inner, max_size=3),
    ),
    max_leaves=10,
)
DOCUMENTS = st.dictionaries(st.sampled_from(KEYS), VALUES, max_size=6)


def test_random_sweep_files_never_give_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GPUHERD_HOME", str(tmp_path / "no-daemon-here"))
    path = tmp_path / "s.yaml"
    seen = {"ok": 0, "error": 0}

    @settings(
        max_examples=scaled(150, 1000),
        deadline=None,
        derandomize=True,
        database=None,
        phases=[Phase.explicit, Phase.generate, Phase.shrink],
        suppress_health_check=list(HealthCheck),
    )
    @given(document=DOCUMENTS, cut=st.integers(0, 400), extra=st.sampled_from(["", ":", "]", "\t"]))
    def check(document: dict[str, Any], cut: int, extra: str) -> None:
        text = yaml.safe_dump(document, allow_unicode=True)
        if extra:  # sometimes a damaged file: cut short, a stray character appended
            text = text[:cut] + extra
        path.write_text(text)
        result = run_cli(["sweep", str(path), "--dry-run"])
        assert "Traceback" not in result.err, (text, result.err)
        if result.code == 0:
            seen["ok"] += 1
            return
        seen["error"] += 1
        lines = [
            line for line in result.err.split("\n")[:-1] if not line.startswith("gpuherd: warn")
        ]
        assert len(lines) == 1 and lines[0].startswith("gpuherd: error: "), (text, result.err)

    check()
    record("sweep_file_fuzz", cases=seen["ok"] + seen["error"], valid=seen["ok"])


# ---- hostile values from a sweep file reach the program as one argument each -------------------

ARGS = "import json, sys; json.dump(sys.argv[1:], open(sys.argv[-1] + '/args.json', 'w'))"


def test_hostile_values_in_a_sweep_file_arrive_as_one_argument(daemon: Herd) -> None:
    work = daemon.home.parent / "work"
    home = work / "fakehome"
    home.mkdir(parents=True)
    (home / "canary").write_text("still here")
    (work / "args.py").write_text(ARGS)
    values = ["; rm -rf ~", "$(touch pwned)", "`touch pwned`", "a\nb", "x' y \"z", "*", "--help"]
    spec = {
        "name": "hostile",
        "command": f"{sys.executable} args.py {{v}} {{run_dir}}",
        "grid": {"v": values},
        "gpus": 0,
    }
    (work / "hostile.yaml").write_text(yaml.safe_dump(spec))
    env = {**daemon.env, "HOME": str(home)}  # were quoting broken, `rm -rf ~` would hit this
    answer = json.loads(daemon.cli("sweep", "hostile.yaml", "--json", cwd=work, env=env).stdout)
    ids = answer["ids"]
    assert len(ids) == len(values)
    for job_id in ids:
        state = daemon.wait_state(job_id, "succeeded", "failed")["state"]
        assert state == "succeeded", daemon.json("show", str(job_id))["stderr_tail"]

    def rows() -> list[dict[str, Any]]:
        return list(daemon.json("sweep", "status", "hostile")["rows"])

    wait_for(lambda: len(rows()) == len(values), what="the sweep's table")
    got = sorted(json.loads((Path(r["run_dir"]) / "args.json").read_text())[0] for r in rows())
    assert got == sorted(values)
    assert (home / "canary").read_text() == "still here"
    assert not (work / "pwned").exists()
