"""A pickled task (one defined interactively) is its user's alone: the copy a job keeps in
its folder for its retries is 0600, and a job refuses to unpickle a file another user could
have written (not theirs, writable by others, a link), in one line of its stderr. Unpickling
runs code: in a `folder=` or a results folder others can write, such a file would be their
code, run as the job's user."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_notebook_tasks import run

from conftest import Herd, started_once
from gpuherd import worker, worker_pickled


@pytest.fixture(scope="module")
def herd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Herd]:
    with started_once(tmp_path_factory, "--fake-gpus", "2") as started:
        yield started


RETRIED_WITH_ITS_PICKLE_CHANGED = """
@gpuherd.task(gpus=0, retries=1)
def flaky(x, run_dir):
    kept = Path(run_dir) / "task-function.pkl"
    if int(os.environ["GPUHERD_ATTEMPT"]) == 1:
        Path(NOTES, "mode").write_text(oct(kept.stat().st_mode & 0o777))
        CHANGE(kept)  # as another user who can write the job's folder would
        raise RuntimeError("first attempt fails")
    return x

job = flaky.submit(x=21)
state = job.wait(timeout=60)
print(json.dumps({"state": state, "attempts": job.info()["attempt"], "dir": job.info()["job_dir"],
                  "stderr": job.logs("stderr"), "mode": Path(NOTES, "mode").read_text()}))
"""


def retried(herd: Herd, tmp_path: Path, change: str) -> dict[str, object]:
    code = f"NOTES = {str(tmp_path)!r}\n{change}\n{RETRIED_WITH_ITS_PICKLE_CHANGED}"
    answer: dict[str, object] = run(herd, tmp_path, code)
    return answer


def test_the_kept_pickle_is_0600_and_a_retry_refuses_one_others_can_write(
    herd: Herd, tmp_path: Path
) -> None:
    answer = retried(herd, tmp_path, "def CHANGE(kept):\n    kept.chmod(0o666)\n")
    assert answer["mode"] == "0o600"  # (it may hold the closure's secrets)
    assert (answer["state"], answer["attempts"]) == ("failed", 2)
    (line,) = str(answer["stderr"]).splitlines()  # attempt 2's: the task never ran
    kept = Path(str(answer["dir"])) / "task-function.pkl"
    assert line == (
        f"gpuherd worker: refusing to load the pickled task: {kept} is writable by others "
        "(mode 0666), so someone else could have put code of theirs in it, to run as you; "
        "keep the job's folder writable by you alone, and submit the task again"
    )


def test_a_retry_refuses_a_pickle_replaced_by_a_link(herd: Herd, tmp_path: Path) -> None:
    change = (
        "def CHANGE(kept):\n"
        "    copy = kept.with_name('planted.pkl')\n"
        "    copy.write_bytes(kept.read_bytes())\n"
        "    kept.unlink()\n"
        "    kept.symlink_to(copy)\n"
    )
    answer = retried(herd, tmp_path, change)
    assert (answer["state"], answer["attempts"]) == ("failed", 2)
    (line,) = str(answer["stderr"]).splitlines()
    assert "task-function.pkl is a symbolic link, so someone else could" in line


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
def test_a_pickle_another_user_owns_is_refused(tmp_path: Path) -> None:
    staged = tmp_path / "staged.pkl"
    staged.write_bytes(worker_pickled.header("f", "3") + b"not loaded")
    staged.chmod(0o600)
    os.chown(staged, 65534, 65534)
    with pytest.raises(worker_pickled.PickledTaskError) as refused:
        worker_pickled.read_function_file(str(staged), str(tmp_path))
    assert f"{staged} belongs to another user (uid 65534), not to you (uid 0)" in str(refused.value)
    assert not (tmp_path / worker_pickled.KEPT_FUNCTION_FILE).exists()  # nothing moved


def test_a_result_is_never_written_through_a_link_planted_as_its_tmp(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("mine\n")
    (tmp_path / "result.json.tmp").symlink_to(victim)
    worker.write_metrics(str(tmp_path), {"loss": 1})
    assert victim.read_text() == "mine\n"
    assert (tmp_path / "result.json").read_text() == '{\n  "loss": 1\n}\n'
    assert not (tmp_path / "result.json.tmp").is_symlink()


def test_a_fifo_planted_as_the_kept_pickle_is_refused_at_once(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / worker_pickled.KEPT_FUNCTION_FILE, 0o600)
    with pytest.raises(worker_pickled.PickledTaskError, match="is not a regular file"):
        worker_pickled.read_function_file(str(tmp_path / "gone.pkl"), str(tmp_path))


def test_the_kept_params_are_0600(tmp_path: Path) -> None:
    staged = tmp_path / "staged.json"
    staged.write_text('{"token": "secret"}')
    assert worker.read_params_file(str(staged), str(tmp_path)) == {"token": "secret"}
    kept = tmp_path / worker.KEPT_PARAMS_FILE
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
