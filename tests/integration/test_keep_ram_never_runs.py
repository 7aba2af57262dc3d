"""A job whose --ram can never start once `keep-ram` is kept is refused at once, as one whose
--mem can never fit once `keep-free` is kept: it was queued, and waited for ever (`waiting
for 20.0 GiB of host memory`). By submit, edit, a sweep and the Python API alike; a queued
job that a `config set keep-ram` leaves too little says so in `ls`, as one `keep-free` does.
Sizes are worked out from this machine's memory, which differs between machines."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import gpuherd
from conftest import Herd, started_once
from gpuherd.core.units import format_size, format_size_down
from gpuherd.errors import InvalidValue
from gpuherd.host_memory import host_memory_total

GIB = 2**30
TOTAL = host_memory_total()
KEEP = TOTAL // 2
"""keep-ram, as a size: half of this machine's memory (a bare number is bytes)."""
ROOM = TOTAL - KEEP
ASKED = ROOM + GIB
"""More than what keep-ram leaves, less than the machine has: the old check let it by."""


def _refusal(asked: int = ASKED) -> str:
    most = format_size_down(ROOM)
    return (
        f"asks for {format_size(asked)} of host memory, but this machine has "
        f"{format_size(TOTAL)} ({most} once keep-ram's {format_size(KEEP)} is kept free): "
        f"give a smaller ram (--ram), at most {most}"
    )


@pytest.fixture(scope="module")
def kept(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Herd]:
    """A daemon whose queue is paused (no job starts: `keep-ram` is half the machine), with
    keep-ram set."""
    with started_once(tmp_path_factory, "--fake-gpus", "1") as herd:
        herd.cli("pause")
        herd.cli("config", "set", "keep-ram", str(KEEP))
        yield herd


def test_submit_refuses_a_ram_that_keep_ram_leaves_no_room_for(kept: Herd) -> None:
    refused = kept.cli("submit", "--gpus", "0", "--ram", str(ASKED), "--", "true", check=False)
    assert refused.returncode == 1, refused
    assert refused.stderr == f"gpuherd: error: this job can never run: {_refusal()}\n"
    # The most it names is taken.
    most = format_size_down(ROOM).replace(" ", "")
    kept.submit("--hold", "--gpus", "0", "--ram", most, "--", "true")


def test_edit_a_sweep_and_the_python_api_refuse_it_too(kept: Herd) -> None:
    job = kept.submit("--hold", "--gpus", "0", "--ram", "1GiB", "--", "true")
    edited = kept.cli("edit", str(job), "--ram", str(ASKED), check=False)
    assert edited.returncode != 0, edited
    assert f"job {job} would never run: {_refusal()}" in edited.stderr
    swept = kept.cli(
        "sweep", "true {x}", "-p", "x", "1", "2", "--gpus", "0", "--ram", str(ASKED), check=False
    )
    assert swept.returncode != 0, swept
    assert _refusal() in swept.stderr, swept.stderr
    api = gpuherd.connect(home=kept.home, start=False)
    with pytest.raises(InvalidValue, match=r"can never run: asks for .* of host memory, but "):
        api.submit("true", gpus=0, ram=ASKED, hold=True)


def test_a_queued_job_keep_ram_strands_says_it_never_runs(daemon: Herd) -> None:
    daemon.cli("pause")  # (it stays queued: no start, nor the reason `queue paused` first)
    job = daemon.submit("--gpus", "0", "--ram", str(ASKED), "--", "true")
    daemon.cli("config", "set", "keep-ram", str(KEEP))

    [row] = [j for j in daemon.json("ls") if j["id"] == job]  # (the setting is in effect)
    said = str(row["reason"])
    most = format_size_down(ROOM).replace(" ", "")
    assert said.startswith(f"can never run on this machine: asks for {format_size(ASKED)} of ")
    assert f"(gpuherd edit {job} --ram {most} to ask for what there is" in said, said
    assert daemon.job(job)["state"] == "queued"
