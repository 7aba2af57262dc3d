"""Sweeps as a researcher uses them, against a real daemon (4 fake GPUs): what a QA pass
found wrong. Every wait has a timeout."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import Herd, kill_jobs_under, stays, wait_for
from gpuherd import pyapi
from gpuherd.client import Client
from gpuherd.core.sweep_names import default_sweep_name
from gpuherd.errors import HerdError
from gpuherd.pyapi import connect, make_spec
from gpuherd.pyapi_types import WrongValue

# Writes what it was given to its --out folder's metrics.json, as a training script does.
TRAIN = r"""
import argparse, json, os
p = argparse.ArgumentParser()
p.add_argument("--tag")
p.add_argument("--out")
a = p.parse_args()
with open(os.path.join(a.out, "metrics.json"), "w") as f:
    json.dump({"tag_seen": a.tag, "out_seen": a.out}, f)
"""


@pytest.fixture
def work(shared_daemon: Herd) -> Iterator[Path]:
    folder = shared_daemon.home.parent / "work"
    folder.mkdir(exist_ok=True)
    (folder / "train.py").write_text(TRAIN)
    try:
        yield folder
    finally:
        kill_jobs_under(folder)


def sweep(herd: Herd, work: Path, *args: str) -> Any:
    return json.loads(herd.cli("sweep", *args, "--json", cwd=work).stdout)


def wait_done(herd: Herd, ids: list[int], timeout: float = 30) -> None:
    wait_for(
        lambda: herd.client.get("/jobs/wait", ids=ids, timeout=5)["done"],
        timeout,
        f"jobs {ids} to finish",
    )


def test_quoted_placeholders_pass_values_and_folders_unchanged(
    shared_daemon: Herd, work: Path
) -> None:
    # Quotes around a placeholder, out of habit: the value arrived with quotes in it, and
    # "{run_dir}" named a folder with quotes (its name holds a `~`), so no metrics were found.
    tags = ["hello world", "it's", "plain"]
    answer = sweep(
        shared_daemon,
        work,
        'python3 train.py --tag "{tag}" --out "{run_dir}"',
        "-p",
        "tag",
        *tags,
        "--name",
        "quoted",
        "--results-dir",
        "my results/quoted",
        "--gpus",
        "0",
    )
    wait_done(shared_daemon, answer["ids"])
    rows = shared_daemon.json("sweep", "status", "quoted")["rows"]
    assert [r["state"] for r in rows] == ["succeeded"] * 3
    assert [r["metrics"] for r in rows] == [
        {"tag_seen": tag, "out_seen": row["run_dir"]} for tag, row in zip(tags, rows, strict=True)
    ]


def test_a_resubmission_without_max_parallel_keeps_the_cap(shared_daemon: Herd, work: Path) -> None:
    # Adding values to a capped sweep dropped its cap: every point, old and new, started.
    daemon = shared_daemon
    template = "sleep 60 # {i}"
    capped = sweep(
        daemon, work, template, "--name", "capped", "--max-parallel", "1", "-p", "i", "1"
    )
    more = daemon.cli("sweep", template, "--name", "capped", "-p", "i", "1", "2", "3", cwd=work)
    assert "2 new, 0 failed rerun, 0 done skipped, 1 already queued" in more.stdout
    ids = live_ids(daemon, "capped")
    assert len(ids) == 3

    def running() -> int:
        return sum(daemon.job(i)["state"] == "running" for i in ids)

    wait_for(lambda: running() == 1, 15, "one point running")
    stays(lambda: running() == 1, 1.0, "one point running, with four GPUs free")
    reasons = {daemon.job(i)["reason"] for i in ids if daemon.job(i)["state"] == "queued"}
    assert reasons == {"waiting: sweep capped runs 1 at a time (--max-parallel)"}
    # Both answers say which cap holds.
    assert capped["max_parallel"] == 1
    assert "at most 1 of its points run at once (--max-parallel; kept" in more.stdout
    daemon.cli("kill", *map(str, ids))


def live_ids(herd: Herd, sweep_name: str) -> list[int]:
    jobs = herd.client.get("/jobs", all=True, sweep=sweep_name)["jobs"]
    return [j["id"] for j in jobs if j["state"] in ("queued", "held", "running", "paused")]


@pytest.mark.parametrize("cap", [0, -1])
def test_a_cap_that_runs_nothing_is_refused(shared_daemon: Herd, work: Path, cap: int) -> None:
    # max_parallel=0 from Python was taken: no point ever started, and sweep.wait() never
    # returned.
    herd = connect(shared_daemon.home, start=False)
    with pytest.raises(HerdError, match=f"max_parallel {cap}: no point of the sweep could ever"):
        herd.sweep("true {x}", {"x": [1, 2]}, name="zero", cwd=work, max_parallel=cap, gpus=0)
    assert not [s for s in herd.sweeps() if s["name"] == "zero"]


def test_fixed_given_in_python_overrides_a_sweep_files(shared_daemon: Herd, work: Path) -> None:
    # herd.sweep("sweep.yaml", fixed=...) dropped `fixed` without a word (the docs say the
    # arguments given override the file's).
    (work / "fx.yaml").write_text(
        "command: echo {lr} {epochs} {seed}\nfixed: {epochs: 200, seed: 1}\ngrid: {lr: [0.1]}\n"
    )
    herd = connect(shared_daemon.home, start=False)
    dry = herd.sweep(work / "fx.yaml", fixed={"epochs": 1}, name="trial", cwd=work, dry_run=True)
    assert dry.commands == ["echo 0.1 1 1"]
    spec = make_spec("s", "echo {lr}", {"lr": [1]}, None)
    with pytest.raises(TypeError, match="in the SweepSpec's grids, or params, not both"):
        herd.sweep(spec, {"lr": [2]}, cwd=work, dry_run=True)
    assert herd.sweep(spec, cwd=work, dry_run=True).commands == ["echo 1"]


def test_a_dry_run_draws_with_the_seed_the_sweep_recorded(shared_daemon: Herd, work: Path) -> None:
    # The CLI's dry run chose a seed of its own: it listed other points than the sweep runs.
    args = ["echo {x} {y}", "-p", "x", *"123", "-p", "y", *"456", "--samples", "3"]
    answer = sweep(shared_daemon, work, *args, "--name", "drawn", "--hold", "--gpus", "0")
    assert answer["seed_chosen"]
    rows = shared_daemon.json("sweep", "status", "drawn")["rows"]
    drawn = [f"echo {r['params']['x']} {r['params']['y']}" for r in rows]
    for _ in range(3):  # (one chance in 84 that a fresh seed draws these three, in order)
        dry = shared_daemon.cli("sweep", *args, "--name", "drawn", "--dry-run", cwd=work)
        assert dry.stdout.splitlines() == drawn
        assert f"seed {answer['seed']} (recorded for sweep drawn" in dry.stderr
    said = sweep(shared_daemon, work, *args, "--name", "drawn", "--dry-run")
    assert (said["commands"], said["seed"], said["seed_chosen"]) == (drawn, answer["seed"], False)
    shared_daemon.cli("sweep", "rm", "drawn")


def test_order_is_taken_from_python_and_checked(shared_daemon: Herd, work: Path) -> None:
    # Python had no `order` (`--order longest-first`), and HTTP took any text, then ran the
    # sweep in its given order without a word.
    herd = connect(shared_daemon.home, start=False)
    dry = herd.sweep("echo {x}", {"x": [1, 2]}, cwd=work, order="longest-first", dry_run=True)
    assert dry.commands == ["echo 1", "echo 2"]  # (no run times yet: the order given)
    wrong = r"^order 'fastest': give 'given' or 'longest-first'$"
    with pytest.raises(WrongValue, match=wrong):  # (a HerdError and a ValueError)
        herd.sweep("echo {x}", {"x": [1, 2]}, cwd=work, order="fastest")
    # Refused by the client, as `--order fastest` is: a daemon that went away is asked nothing
    # (before, only the daemon checked it: "no daemon is running").
    away = pyapi.Herd(Client(work / "no-daemon-here"))
    with pytest.raises(HerdError, match=wrong):
        away.sweep("echo {x}", {"x": [1, 2]}, cwd=work, order="fastest")
    with pytest.raises(HerdError, match=wrong):
        herd.client.post(
            "/sweeps",
            {"spec": {"name": "o", "command": "echo 1"}, "cwd": str(work), "dry_run": True}
            | {"options": {"order": "fastest"}},
        )


def test_a_sweeps_name_alone_is_refused_and_says_how_to_see_that_sweep(
    shared_daemon: Herd, work: Path
) -> None:
    # `gpuherd sweep seen`, meaning `gpuherd sweep status seen`, submitted a one-point sweep
    # whose job ran the command `seen`, and failed.
    answer = sweep(shared_daemon, work, "echo {x}", "-p", "x", "1", "--name", "seen", "--gpus", "0")
    wait_done(shared_daemon, answer["ids"])
    needs = (
        "give a command template with {placeholders} and -p NAME VALUES... "
        '("python train.py --lr {lr}" -p lr 0.1 0.01), or a sweep file'
    )
    for args, said in [
        (
            ["seen"],
            f"sweep seen: {needs}; to see the existing sweep seen: gpuherd sweep status seen",
        ),
        (["python train.py", "--dry-run"], f"sweep 'python train.py': {needs}"),
    ]:
        refused = shared_daemon.cli("sweep", *args, check=False, cwd=work)
        assert (refused.returncode, refused.stdout) == (2, "")
        assert refused.stderr == f"gpuherd: error: {said} (see gpuherd sweep --help)\n"
    names = {row["name"] for row in shared_daemon.json("sweep", "ls")}
    assert not {default_sweep_name("seen"), default_sweep_name("python train.py")} & names
    (row,) = shared_daemon.json("sweep", "status", "seen")["rows"]
    assert (row["job_id"], row["state"]) == (answer["ids"][0], "succeeded")
    shared_daemon.cli("sweep", "rm", "seen")
