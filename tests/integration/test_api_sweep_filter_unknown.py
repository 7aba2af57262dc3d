"""`GET /api/v1/jobs?sweep=NAME` of a name no sweep (and no job) has is a 404 naming it, in
every client: the API and the Python API answered an empty list, where `ls --sweep` refused
it (its own check), so `kill` of that list stopped nothing, unsaid. A sweep whose filter
matches no job now (its jobs ended, or another state asked) is still an empty list, and the
dashboard's `?sweep=` keeps its own note."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

import gpuherd
from conftest import Herd, started_once
from gpuherd.errors import NotFound

TYPO = "no sweep named 'lr-sweeep' (did you mean 'lr-sweep'?): `gpuherd sweep ls` lists the sweeps"


@pytest.fixture(scope="module")
def herd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Herd]:
    with started_once(tmp_path_factory, "--fake-gpus", "2") as herd:
        folder = tmp_path_factory.mktemp("sweep")
        herd.cli(
            "sweep", "true {x}", "-p", "x", "1", "2", "--name", "lr-sweep", "--hold", cwd=folder
        )
        yield herd


def get(herd: Herd, query: str) -> tuple[int, object]:
    status, _, answer = herd.request("GET", "/api/v1/jobs?" + query)
    return status, json.loads(answer)


@pytest.mark.parametrize(
    "query",
    ["sweep=lr-sweeep", "sweep=lr-sweeep&ids_only=true", "sweep=lr-sweeep&all=true&limit=1"],
)
def test_a_sweep_no_sweep_has_is_a_404_over_http(herd: Herd, query: str) -> None:
    assert get(herd, query) == (404, {"error": TYPO})


def test_a_sweep_no_sweep_has_is_refused_by_the_python_api(herd: Herd) -> None:
    api = gpuherd.connect(herd.home, start=False)
    with pytest.raises(NotFound) as raised:
        api.jobs(sweep="lr-sweeep", all=True)
    assert str(raised.value) == TYPO
    assert len(api.jobs(sweep="lr-sweep", all=True)) == 2


def test_a_known_sweep_that_matches_no_job_is_an_empty_list(herd: Herd) -> None:
    status, answer = get(herd, "sweep=lr-sweep&state=running")
    assert status == 200 and isinstance(answer, dict) and answer["jobs"] == []
    status, answer = get(herd, "sweep=lr-sweep&state=running&ids_only=true")
    assert status == 200 and isinstance(answer, dict) and answer["ids"] == []


def test_ls_says_the_daemons_line_and_exits_1(herd: Herd) -> None:
    for form in ([], ["-q"]):
        typo = herd.cli("ls", "--sweep", "lr-sweeep", *form, check=False)
        assert (typo.returncode, typo.stdout) == (1, ""), form
        assert typo.stderr == f"gpuherd: error: {TYPO}\n", form


def test_the_dashboards_sweep_filter_keeps_its_note(herd: Herd) -> None:
    status, _, page = herd.request("GET", "/jobs?sweep=nope")
    assert status == 200
    assert "no sweep &#39;nope&#39;: the only sweep is lr-sweep" in page.decode()
