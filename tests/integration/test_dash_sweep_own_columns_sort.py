"""A sweep's metrics named as the table's own columns (`seconds`, `state`, `job_id`, `index`)
and one starting with `-`: the table's own headers sort by their own field, on the sweep page
and in `sweep status --sort`, and each such metric has a key and a label of its own
(`metric:state`, `state (metric)`). Before, the metric took over the column's sort: *Run
time* went by the metric `seconds`, both *State* headers by the metric, *#* put a point
without metrics first, and `?sort=-acc` of a metric `-acc` read as acc descending. Real
daemon, the page asked over its socket as a browser follows the headers' links."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

import pytest

from conftest import Herd, wait_for

NAME = "own"
# Point n (0 to 3) runs longer the larger n is, so its run time and index and job id grow
# with n, and its metrics go the other way. Point 2 writes no metrics.json; point 1 fails.
SCRIPT = """#!/bin/sh
n=$1
sleep "0.$((n * 3))"
if [ "$n" != 2 ]; then
  printf '{"acc": %s, "-acc": %s, "seconds": %s, "state": "%s", "job_id": %s, "index": %s}' \\
    "$n" "$((10 - n))" "$((100 - n))" "s$((9 - n))" "$((50 - n))" "$((20 - n))" > "$2/metrics.json"
fi
[ "$n" != 1 ]
"""


@pytest.fixture(scope="module")
def swept(module_daemon: Herd, tmp_path_factory: pytest.TempPathFactory) -> Herd:
    folder = tmp_path_factory.mktemp("own")
    (folder / "point.sh").write_text(SCRIPT)
    command = "sh point.sh {n} {run_dir}"
    module_daemon.cli("sweep", command, "-p", "n", "0", "1", "2", "3", "--gpus", "0", "--name",
                      NAME, cwd=folder)  # fmt: skip

    def ended() -> bool:
        rows = module_daemon.client.get(f"/sweeps/{NAME}")["rows"]
        return all(r["state"] in ("succeeded", "failed") for r in rows)

    wait_for(ended, 60, "the sweep's 4 points to end")
    return module_daemon


def heads(body: str) -> dict[str, str]:
    """The table's headers: their text (without the sort's arrow) -> their sort link."""
    found = re.findall(r'<th[^>]*><a href="([^"]+)" data-sort="[^"]*">([^<]*)</a></th>', body)
    return {html.unescape(text).rstrip(" ▲▼"): html.unescape(href) for href, text in found}


def sort_of(link: str) -> str:
    """A header link's sort (the plot's choices come after it)."""
    return link.partition("?")[2].partition("&")[0]


def order(body: str) -> list[int]:
    return [int(i) for i in re.findall(r'<tr class="point[^"]*" data-index="(\d+)"', body)]


def status(herd: Herd, *args: str) -> list[dict[str, Any]]:
    rows = json.loads(herd.cli("sweep", "status", NAME, *args, "--json").stdout)["rows"]
    return list(rows)


def test_the_pages_own_headers_sort_by_their_field_and_the_metrics_by_theirs(
    swept: Herd,
) -> None:
    page = swept.page(f"/sweeps/{NAME}")
    links = heads(page)
    assert list(links) == [
        "#", "n", "State", "Job", "Run time",
        "acc", "-acc", "seconds (metric)", "state (metric)", "job_id (metric)", "index (metric)",
    ]  # fmt: skip
    assert sort_of(links["State"]) == "sort=state"
    assert sort_of(links["state (metric)"]) == "sort=metric%3Astate"
    assert sort_of(links["-acc"]) == "sort=metric%3A-acc"

    def by(header: str) -> list[int]:
        return order(swept.page(links[header]))

    # The table's own: by the points' run time, index, job id; the failed point first.
    assert by("Run time") == by("#") == by("Job") == [0, 1, 2, 3]
    assert by("State")[0] == 1
    # The metrics: backwards, and point 2 (no metrics.json) last, where `#` put it first.
    for metric in ("seconds (metric)", "state (metric)", "job_id (metric)", "index (metric)"):
        assert by(metric) == [3, 1, 0, 2], metric
    assert by("-acc") == [3, 1, 0, 2]  # the metric `-acc`, not acc descending
    descending = heads(swept.page(links["-acc"]))["-acc"]
    assert sort_of(descending) == "sort=-metric%3A-acc"
    assert order(swept.page(descending)) == [0, 1, 3, 2]


def test_sweep_status_sort_takes_its_headers_as_the_columns_and_the_metrics_by_kind(
    swept: Herd,
) -> None:
    seconds = [r["seconds"] for r in status(swept, "--sort", "time")]
    assert seconds == sorted(seconds)
    assert [r["index"] for r in status(swept, "--sort", "seconds")] == [0, 1, 2, 3]
    assert [r["index"] for r in status(swept, "--sort", "-job")] == [3, 2, 1, 0]
    assert status(swept, "--sort", "state")[0]["state"] == "failed"
    assert [r["index"] for r in status(swept, "--sort", "index")] == [0, 1, 2, 3]
    for key in ("metric:seconds", "seconds (metric)", "metric:index", "metric:state"):
        assert [r["index"] for r in status(swept, "--sort", key)] == [3, 1, 0, 2], key
    assert [r["index"] for r in status(swept, "--sort", "metric:-acc")] == [3, 1, 0, 2]
    assert [r["index"] for r in status(swept, "--sort", "-acc")] == [3, 1, 0, 2]  # acc, down
    header = swept.cli("sweep", "status", NAME, "--sort", "metric:state").stdout.splitlines()[0]
    assert header.split()[:5] == ["FOLDER", "n", "STATE", "JOB", "TIME"]
    for label in ("seconds (metric)", "state (metric)", "job_id (metric)", "index (metric)"):
        assert label in header
    wrong = swept.cli("sweep", "status", NAME, "--sort", "metric:nope", check=False)
    assert wrong.returncode == 2
    assert "cannot sort by 'metric:nope'" in wrong.stderr
    # (each metric by the key that sorts by it)
    assert "use a metric (acc, metric:-acc, metric:seconds, metric:state," in wrong.stderr


def test_a_point_without_a_metric_never_sorts_by_the_field_of_its_name(tmp_path: Path) -> None:
    """(sweep_sort alone: the point without metrics.json took its own index.)"""
    from gpuherd.sweep_sort import sort_rows

    rows = [
        {"index": i, "folder": f"p{i}", "params": {}, "metrics": m}
        for i, m in ((0, {"index": 5}), (1, {}), (2, {"index": 3}))
    ]
    assert [r["index"] for r in sort_rows(rows, "metric:index", [], ["index"])] == [2, 0, 1]
    assert [r["index"] for r in sort_rows(rows, "index", [], ["index"])] == [0, 1, 2]
