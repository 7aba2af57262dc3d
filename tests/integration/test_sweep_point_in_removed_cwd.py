"""A sweep point whose folder is inside its --cwd (the default results/NAME), that folder
removed before the point starts, fails as any job whose working folder is gone does
(`spawn_error`, with the way out). Making the point's folder made its missing parents, the
working folder with them: the point ran there, new and empty, reading none of its files."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from conftest import Herd


def test_a_point_does_not_bring_back_its_removed_working_folder(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    herd = shared_daemon
    project = tmp_path / "project"
    project.mkdir()
    (project / "data.csv").write_text("1,2\n")
    args = ("cat data.csv && touch ran_here # {x}", "-p", "x", "1", "--name", "cwd-gone")
    swept = herd.cli("sweep", *args, "--hold", "--gpus", "0", "--json", cwd=project)
    [job] = json.loads(swept.stdout)["ids"]
    assert (project / "results" / "cwd-gone" / "x=1").is_dir()
    shutil.rmtree(project)
    herd.cli("release", str(job))
    failed = herd.wait_state(job, "failed", "succeeded")
    assert (failed["state"], failed["outcome"]) == ("failed", "spawn_error"), failed
    assert failed["message"] == (
        f"working directory {project} does not exist: make it again, then `gpuherd retry {job}`; "
        f"or run it in another folder: `gpuherd retry --hold {job} && gpuherd edit {job} "
        f"--cwd DIR && gpuherd release {job}`"
    )
    assert not project.exists()
    # The way out it gives works: its results folder is made again in the folder made again.
    project.mkdir()
    (project / "data.csv").write_text("1,2\n")
    herd.cli("retry", str(job))
    assert herd.wait_state(job, "succeeded", "failed")["state"] == "succeeded"
    assert (project / "ran_here").exists()
    assert (project / "results" / "cwd-gone" / "x=1" / "SUCCESS").exists()
