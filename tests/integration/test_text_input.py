"""Text that is not UTF-8 (as Python gives it: lone surrogates from argv, a path or an
environment) in a job, and NUL bytes in a job file. Both were taken: an internal error from
the store, a job whose `show` failed forever, or a refusal naming "job 2 of the submission"
for line 3 of a file."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import Herd
from gpuherd.errors import HerdError

NOT_UTF8 = os.fsdecode(b"x\xffy")
"""`x\\xffy` as Python reads it from argv or the environment: 'x\\udcffy'."""
AS_TEXT = "gpuherd keeps a job as text"


def refusal(proc: subprocess.CompletedProcess[str]) -> str:
    """The one line a refused command printed (and nothing else)."""
    assert proc.returncode == 1, (proc.returncode, proc.stdout, proc.stderr)
    assert proc.stdout == ""
    assert proc.stderr.startswith("gpuherd: error: ") and proc.stderr.count("\n") == 1
    return proc.stderr.removeprefix("gpuherd: error: ").rstrip("\n")


def test_a_job_with_bytes_that_are_not_utf8_is_refused_and_nothing_is_stored(
    daemon: Herd, tmp_path: Path
) -> None:
    bad_dir = tmp_path / os.fsdecode(b"dir\xfe")
    bad_dir.mkdir()
    said = refusal(daemon.cli("submit", "--", "pwd", cwd=bad_dir, check=False))
    assert said == (
        f"the working directory {tmp_path}/dir\\xfe (cwd) is not UTF-8: run from (or --cwd to) "
        "a folder whose path is UTF-8"
    )
    said = refusal(daemon.cli("submit", "--", "echo", NOT_UTF8, check=False))
    assert said == (
        f"the command holds bytes that are not UTF-8 (\\xff at character 8): {AS_TEXT}; put "
        'those bytes in an environment variable (export V=...; "$V" in the command) or in a file'
    )
    said = refusal(daemon.cli("submit", "--name", NOT_UTF8, "--", "true", check=False))
    assert said == (
        f"name (--name) holds bytes that are not UTF-8 (\\xff at character 2): {AS_TEXT}; "
        "give a name in UTF-8"
    )
    said = refusal(daemon.cli("submit", "--project", NOT_UTF8, "--", "true", check=False))
    assert said.startswith("project (--project) holds bytes that are not UTF-8 (\\xff at")
    said = refusal(daemon.cli("submit", "--env", f"V={NOT_UTF8}", "--", "true", check=False))
    assert said == (
        "env_overrides (--env): the value of V holds bytes that are not UTF-8 (\\xff at "
        f"character 2): {AS_TEXT}; export V in your shell instead of giving --env: your "
        "environment reaches the job byte for byte"
    )
    # A batch from a file: the folder is every job's, refused as the batch's; every client
    # gets the daemon's refusal.
    lines = daemon.cli("submit", "--file", "-", cwd=bad_dir, input="true\ntrue\n", check=False)
    assert refusal(lines).startswith("the 2 jobs' options: the working directory ")
    cwd = str(tmp_path)
    with pytest.raises(HerdError, match=r"^the command holds bytes that are not UTF-8 \(\\xff"):
        daemon.client.post("/jobs", {"jobs": [{"command": f"echo {NOT_UTF8}", "cwd": cwd}]})
    item = {"command": "true", "cwd": cwd, "env_overrides": {NOT_UTF8: "1"}}
    with pytest.raises(HerdError, match=r"^env_overrides \(--env\): the name x\\xffy holds"):
        daemon.client.post("/jobs", {"jobs": [item]})
    item = {"command": "true", "cwd": cwd, "env": {"V": "\ud800"}}  # no byte: JSON's own
    with pytest.raises(HerdError, match=r"^env: the variable V holds a lone surrogate that"):
        daemon.client.post("/jobs", {"jobs": [item]})
    assert daemon.ls_all() == []  # none stored: the `--env` one was, and no `show` worked
    # What the refusal advises: a value in the submitter's environment is kept as it is
    # (a process's environment is bytes), and the job shows.
    env = {**daemon.env, "V": NOT_UTF8}
    job = int(daemon.cli("submit", "-q", "--", 'printf %s "$V"', env=env).stdout)
    assert daemon.wait_state(job, "succeeded", "failed")["state"] == "succeeded"
    assert daemon.json("show", str(job))["command"] == 'printf %s "$V"'
    log = [sys.executable, "-m", "gpuherd", "log", str(job)]
    assert subprocess.run(log, env=daemon.env, capture_output=True, check=True).stdout == b"x\xffy"


def test_an_edit_to_text_that_is_not_utf8_is_refused(shared_daemon: Herd) -> None:
    daemon = shared_daemon
    job = daemon.submit("--hold", "--name", "before", "--", "true")
    said = refusal(daemon.cli("edit", "--name", NOT_UTF8, str(job), check=False))
    assert said == (
        f"job {job}: name (--name) holds bytes that are not UTF-8 (\\xff at character 2): "
        f"{AS_TEXT}; give a name in UTF-8"
    )
    said = refusal(daemon.cli("edit", "--command", f"echo {NOT_UTF8}", str(job), check=False))
    assert said.startswith(
        f"job {job}: the command holds bytes that are not UTF-8 (\\xff at character 7)"
    )
    shown = daemon.json("show", str(job))
    assert (shown["name"], shown["command"]) == ("before", "true")


NUL_FILE = b"echo ok\n# c\necho a\0b\necho z\n"
"""A NUL byte on line 3, job 2 (a comment is no job)."""


def test_a_nul_byte_in_a_job_file_names_its_line_and_nothing_is_submitted(
    daemon: Herd, tmp_path: Path
) -> None:
    jobs = tmp_path / "nul.txt"
    jobs.write_bytes(NUL_FILE)
    said = refusal(daemon.cli("submit", "--file", str(jobs), check=False))
    assert said == (
        f"{jobs}: line 3 holds a NUL byte (at character 7): no program can receive it; remove it"
    )
    assert daemon.ls_all() == []


def test_run_refuses_a_job_file_with_a_nul_byte_before_any_job_starts(
    herd: Herd, tmp_path: Path
) -> None:
    # It said `[1] could not run: echo a b: ...` and ran the other lines.
    jobs = tmp_path / "nul.txt"
    jobs.write_bytes(NUL_FILE)
    out = tmp_path / "out"
    proc = herd.cli("run", "--fake-gpus", "1", "--output-dir", str(out), str(jobs), check=False)
    assert refusal(proc) == (
        f"{jobs}: line 3 holds a NUL byte (at character 7): no program can receive it; remove it"
    )
    assert not out.exists()


def test_a_sweep_with_text_that_is_not_utf8_is_refused_naming_where(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    # The template crashed the CLI (a traceback naming the sweep); a value or a results
    # folder was an internal error in the daemon.
    cases = [
        (["--gpus", "0", f"echo {NOT_UTF8} {{x}}", "-p", "x", "1"], "command"),
        (["--gpus", "0", "echo {x}", "-p", "x", "1", NOT_UTF8], "grids.0.x.1"),
        (["--gpus", "0", "--results-dir", NOT_UTF8, "echo {x}", "-p", "x", "1"], "results_dir"),
    ]
    before = shared_daemon.client.get("/sweeps")
    for args, where in cases:
        proc = shared_daemon.cli("sweep", *args, check=False, cwd=tmp_path)
        said = f"sweep: {where} holds bytes that are not UTF-8 (\\xff at character "
        assert proc.returncode == 1 and said in refusal(proc), (args, proc.stderr)
    assert shared_daemon.client.get("/sweeps") == before  # none was stored


def test_gpuherd_run_from_a_folder_whose_path_is_not_utf8_is_refused_once(
    tmp_path: Path,
) -> None:
    bad_dir = tmp_path / os.fsdecode(b"dir\xfe")
    bad_dir.mkdir()
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "gpuherd", "run", "--fake-gpus", "1", "--output-dir", str(out)],
        input="pwd\npwd\n",  # each said "could not run", and the run went on
        cwd=bad_dir,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert refusal(proc) == (
        f"the working directory {tmp_path}/dir\\xfe (cwd) is not UTF-8: run from (or --cwd to) "
        "a folder whose path is UTF-8"
    )
    assert not out.exists()
