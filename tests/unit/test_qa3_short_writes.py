"""A disk filling up writes what fits and says so only at the next write: `os.write` returns
fewer bytes than given. job.json and a sweep point's params.json were written with one
`os.write` each, then moved over the file before: on a nearly full disk, a good job.json was
replaced by its first part (cut-off JSON that `--skip-succeeded` and `--times-from` cannot
read), and a sweep submitted params.json files cut short without a word."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from gpuherd import jobfiles
from gpuherd.sweep_folders import write_params
from gpuherd.sweep_specs import expand_points
from gpuherd.sweepfile import parse_sweep

PIECE = 1000
"""The most one write takes, as a disk with that much room left would."""


@pytest.fixture
def short_writes(monkeypatch: pytest.MonkeyPatch) -> None:
    real = os.write

    def write(fd: int, data: bytes | memoryview) -> int:
        return real(fd, bytes(data[:PIECE]))

    monkeypatch.setattr(os, "write", write)


@pytest.mark.usefixtures("short_writes")
def test_job_json_is_written_whole(tmp_path: Path) -> None:
    info = {"command": "python train.py " + "--flag x " * 1000, "gpus": [0]}
    attempt, job = tmp_path / "job_0", tmp_path / "job_0"
    job.mkdir()
    jobfiles.record_start(attempt, job, info)
    assert json.loads((job / "job.json").read_text()) == info
    assert not (job / "job.json.tmp").exists()


@pytest.mark.usefixtures("short_writes")
def test_params_json_is_written_whole(tmp_path: Path) -> None:
    text = f"name: s\nresults_dir: {tmp_path}\ncommand: echo {'x' * 5000} {{a}}\ngrid:\n  a: [1]\n"
    spec = parse_sweep(text, "s.yaml").spec
    (point,) = expand_points(spec)
    write_params(spec, point, None)
    recorded = json.loads(Path(point.run_dir, "params.json").read_text())
    assert recorded["command"] == point.command and len(point.command) > PIECE
