"""Odd input said as it was typed and refused where docs/api.md says it is, over a real
daemon: an escape sequence in a value the CLI's error line quotes shows as `\\x1b` (it was
dropped, and the line named another setting, another folder), a NUL byte in a listing's
filter is a 422 (it was a 200 with no job), an unknown path or method under /ui/ and
/static/ answers `{"error": ...}` (it was FastAPI's `{"detail": ...}`), and a sweep's seed
past 64 bits is refused (it was taken and recorded)."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest

from conftest import Herd, paused_with_a_held_job

ESC = "\x1b"
RAW_CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f]")


@pytest.fixture(scope="module")
def herd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Herd]:
    with paused_with_a_held_job(tmp_path_factory) as herd:
        yield herd


def _one_safe_line(said: str) -> str:
    """The error line, checked: one line, and no control character reaches the terminal."""
    assert len(said.splitlines()) == 1, said
    assert not RAW_CONTROL.search(said.rstrip("\n")), repr(said)
    return said


def test_a_setting_typed_with_an_escape_sequence_is_named_as_typed(herd: Herd) -> None:
    said = _one_safe_line(herd.usage_error("config", "set", f"re{ESC}[31mtries", "1"))
    # was `unknown setting 'retries'`: the very setting it refused, it seemed
    assert said.startswith("gpuherd: error: unknown setting 're\\x1b[31mtries': use one of "), said
    value = _one_safe_line(herd.usage_error("config", "set", "retries", f"{ESC}[31m1"))
    assert value.startswith("gpuherd: error: retries: invalid count '\\x1b[31m1': "), value


def test_an_output_folder_with_an_escape_sequence_is_advised_as_typed(herd: Herd) -> None:
    folder = f"{herd.home.parent}/no{ESC}[31mdir"
    said = _one_safe_line(
        herd.usage_error("submit", "--hold", "-o", f"{folder}/x.log", "--", "true")
    )
    shown = folder.replace(ESC, "\\x1b")
    # was `the folder .../no does not exist: create it (mkdir -p '.../no') first`
    assert f"the folder {shown} does not exist: create it (mkdir -p $'{shown}') first" in said
    advised = re.search(r"\(mkdir -p (.*)\) first", said)
    assert advised is not None, said
    subprocess.run(["bash", "-c", f"mkdir -p {advised.group(1)}"], check=True)
    made = [p.name for p in herd.home.parent.iterdir() if p.name.startswith("no")]
    assert made == [f"no{ESC}[31mdir"], made  # the folder typed, not `no`
    herd.submit("--hold", "-o", f"{folder}/x.log", "--", "true")  # (now it is taken)


def _get(herd: Herd, path: str) -> tuple[int, dict[str, str], Any]:
    status, heads, body = herd.request("GET", path)
    return status, heads, json.loads(body)


@pytest.mark.parametrize(
    ("key", "give"),
    [
        ("project", "a project"),
        ("name", "a name or a pattern like 'resnet-*'"),
        ("sweep", "a sweep's name (gpuherd sweep ls lists them)"),
    ],
)
@pytest.mark.parametrize("value", ["%00", "a%00b"])
def test_a_listing_filter_with_a_nul_byte_is_refused(
    herd: Herd, key: str, give: str, value: str
) -> None:
    status, _, answer = _get(herd, f"/api/v1/jobs?{key}={value}&all=true")
    # was 200, {"jobs": [], ...}: "no job of that project", it read
    line = (
        f"{key} (--{key}) holds a NUL byte, which no job's {key} can: give {give}, or leave it out"
    )
    assert (status, answer) == (422, {"error": line})


def test_a_listing_filter_without_a_nul_still_lists(herd: Herd) -> None:
    named = herd.submit("--hold", "--name", "plain", "--", "true")
    status, _, answer = _get(herd, "/api/v1/jobs?name=pl*&all=true")
    assert status == 200 and [job["id"] for job in answer["jobs"]] == [named], answer


@pytest.mark.parametrize(
    ("method", "path", "status", "line"),
    [
        ("GET", "/static/", 404, "no such endpoint: GET /static/ (the dashboard is at /)"),
        ("GET", "/static/a%2fb", 404, "no such endpoint: GET /static/a/b (the dashboard is at /)"),
        ("GET", "/ui/nope", 404, "no such endpoint: GET /ui/nope (the dashboard is at /)"),
        ("GET", "/ui/queue/explode", 405, "GET is not allowed on /ui/queue/explode: use POST"),
        ("POST", "/static/plot.js", 405, "POST is not allowed on /static/plot.js: use GET"),
    ],
)
def test_the_dashboards_unknown_paths_and_methods_answer_in_the_one_error_shape(
    herd: Herd, method: str, path: str, status: int, line: str
) -> None:
    got, heads, body = herd.request(method, path)
    # was {"detail": "Not Found"} or {"detail": "Method Not Allowed"}
    assert (got, json.loads(body)) == (status, {"error": line})
    assert heads["content-type"] == "application/json"
    if status == 405:
        assert heads["allow"] == line.rsplit("use ", 1)[1]


def _sweep(herd: Herd, seed: int) -> tuple[int, Any]:
    spec = {"name": "s", "command": "echo {x}", "grids": [{"x": [1, 2, 3]}], "shuffle": True}
    body = json.dumps({"spec": {**spec, "seed": seed}, "cwd": str(herd.home.parent)})
    status, _, answer = herd.request("POST", "/api/v1/sweeps", body)
    return status, json.loads(answer)


@pytest.mark.parametrize(
    ("seed", "why"),
    [
        (10**26, "is too large (at most 2**63 - 1)"),
        (2**63, "is too large (at most 2**63 - 1)"),
        (-(2**63) - 1, "is too small (at least -2**63)"),
    ],
)
def test_a_sweep_seed_past_64_bits_is_refused(herd: Herd, seed: int, why: str) -> None:
    # was 200: the sweep submitted, and the seed recorded
    assert _sweep(herd, seed) == (422, {"error": f"invalid sweep: seed: {seed} {why}"})
    assert herd.client.get("/sweeps")["sweeps"] == []


def test_a_sweep_seed_of_64_bits_is_taken(herd: Herd) -> None:
    status, answer = _sweep(herd, 2**63 - 1)
    try:
        assert status == 200 and answer["seed"] == 2**63 - 1, answer
    finally:
        herd.cli("sweep", "rm", "s")
