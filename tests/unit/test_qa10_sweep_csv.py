"""`sweep status --csv` of a sweep whose parameter is named like one of the point's own
columns (`-p state a b`, `-p seconds 1`): each header names one column, or a script's
csv.DictReader keeps only the last of two `state` columns."""

from __future__ import annotations

import csv
from typing import Any

from gpuherd.cli import sweep_render


def test_a_parameter_named_like_a_column_of_the_point_is_told_apart(capsys: Any) -> None:
    row = {
        "folder": "state=a,seconds=1",
        "params": {"state": "a", "seconds": 1},
        "state": "held",
        "job_id": 4,
        "seconds": None,
        "metrics": {"state": "x"},
    }
    table = {"varying": ["state", "seconds"], "metric_keys": ["state"], "rows": [row]}
    sweep_render.status_csv(table)
    read = list(csv.DictReader(capsys.readouterr().out.splitlines()))
    assert read == [
        {
            "folder": "state=a,seconds=1",
            "state (param)": "a",
            "seconds (param)": "1",
            "state": "held",
            "job_id": "4",
            "seconds": "",
            "state (metric)": "x",
        }
    ]
