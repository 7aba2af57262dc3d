"""Review fixes: `herd.as_completed` over a job removed (`gpuherd rm`) between two of its
polls goes on with the others (the daemon's refusal of the gone id ended the iteration, the
jobs still to come lost), as for one removed during a poll; a GPU Task Scheduler config whose
`scheduler_config.gpu` is not a list of indices is refused in one line (an int raised
"'int' object is not iterable", a '²' int()'s ValueError)."""

from __future__ import annotations

from pathlib import Path

import pytest

import gpuherd
from conftest import Herd
from gpuherd.errors import HerdError, NotFound
from gpuherd.pyapi import connect


def test_a_job_removed_between_polls_is_yielded_and_the_others_still_come(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    herd = connect(shared_daemon.home, start=False)
    go = tmp_path / "go"
    first = herd.submit("true", gpus=0)
    removed = herd.submit("true", gpus=0, hold=True)
    last = herd.submit(f"sh -c 'while [ ! -e {go} ]; do sleep 0.02; done'", gpus=0)
    yielded = []
    with pytest.warns(gpuherd.WaitWarning, match=f"job {removed.id} is held: waiting until"):
        for job in herd.as_completed([first, removed, last], timeout=30):
            yielded.append(job.id)
            if job.id == first.id:  # between two polls: none is asking the daemon now
                shared_daemon.cli("rm", str(removed.id))
                go.touch()
    assert yielded == [first.id, removed.id, last.id]


def test_a_job_removed_before_the_first_poll_is_yielded_and_the_others_still_come(
    shared_daemon: Herd,
) -> None:
    """Its handle taken, then the job removed: the first poll's refusal of its id ended the
    iteration (NotFound), the other job never yielded."""
    herd = connect(shared_daemon.home, start=False)
    removed = herd.submit("true", gpus=0, hold=True)
    other = herd.submit("true", gpus=0)
    shared_daemon.cli("rm", str(removed.id))
    yielded = [job.id for job in herd.as_completed([removed, other], timeout=30)]
    assert sorted(yielded) == sorted([removed.id, other.id])
    assert shared_daemon.job(other.id)["state"] == "succeeded"


def test_a_handle_of_a_job_that_never_was_is_still_refused(shared_daemon: Herd) -> None:
    """herd.job(ID) makes a handle without asking the daemon: not taken for a job removed."""
    herd = connect(shared_daemon.home, start=False)
    job = herd.submit("true", gpus=0)
    with pytest.raises(NotFound, match=r"no job 987654321\b"):
        list(herd.as_completed([job, herd.job(987654321)], timeout=30))


def test_an_id_that_never_was_is_still_refused(shared_daemon: Herd) -> None:
    herd = connect(shared_daemon.home, start=False)
    job = herd.submit("true", gpus=0)
    with pytest.raises(NotFound, match=r"no job 987654321\b"):
        list(herd.as_completed([job.id, 987654321], timeout=30))


class Gts:  # GPU Task Scheduler's GPUTask protocol
    def __init__(self, config: object, work_dir: str) -> None: ...

    def main(self) -> dict[str, object]:
        return {}


@pytest.mark.parametrize(
    ("gpu", "options", "said"),
    [
        (2, {}, r"^config: scheduler_config\.gpu must be a list.*got int 2$"),
        (2, {"only_gpus": [0]}, r"^config: scheduler_config\.gpu must be a list.*got int 2$"),
        ("12", {}, r"scheduler_config\.gpu must be a list.*got str '12'$"),
        (["²"], {}, r"^scheduler_config\.gpu: '²' is not a GPU index"),
    ],
)
def test_a_gts_gpu_entry_that_is_no_list_of_indices_is_refused_in_one_line(
    shared_daemon: Herd, tmp_path: Path, gpu: object, options: dict[str, object], said: str
) -> None:
    config = {
        "scheduler_config": {"gpu": gpu, "result_root_folder": str(tmp_path)},
        "test_config": [{"seed": [1]}],
    }
    herd = connect(shared_daemon.home, start=False)
    with pytest.raises(HerdError, match=said):
        gpuherd.sweep_from_config(config, task=Gts, herd=herd, dry_run=True, **options)
