"""A job whose working folder was removed after it was submitted fails `spawn_error` with a
way out for that job (make the folder again and retry it, or run it elsewhere with `retry
--hold`, `edit --cwd`, `release`), and that way works: it said "submit from an existing folder
or pass --cwd", a new submission's advice."""

from __future__ import annotations

from pathlib import Path

from conftest import Herd


def test_the_advice_for_a_job_whose_folder_is_gone_runs_it(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    herd = shared_daemon
    gone, elsewhere = tmp_path / "gone", tmp_path / "elsewhere"
    gone.mkdir()
    elsewhere.mkdir()
    job = herd.submit("--hold", "--gpus", "0", "--cwd", str(gone), "--", "pwd")
    gone.rmdir()
    herd.cli("release", str(job))
    failed = herd.wait_state(job, "failed")
    assert failed["outcome"] == "spawn_error", failed
    assert failed["message"] == (
        f"working directory {gone} does not exist: make it again, then `gpuherd retry {job}`; "
        f"or run it in another folder: `gpuherd retry --hold {job} && gpuherd edit {job} "
        f"--cwd DIR && gpuherd release {job}`"
    )
    herd.cli("retry", "--hold", str(job))
    herd.cli("edit", str(job), "--cwd", str(elsewhere))
    herd.cli("release", str(job))
    assert herd.wait_state(job, "succeeded", "failed")["state"] == "succeeded"
    assert herd.cli("log", str(job)).stdout == f"{elsewhere}\n"
