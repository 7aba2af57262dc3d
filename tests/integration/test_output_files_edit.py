"""`gpuherd edit --output/--error` of waiting jobs, checked as submit checks them; and what
`log` says of a job whose output file never came to be (its attempt never started) or went
where nothing is kept (`--output /dev/null`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import Herd
from gpuherd.errors import HerdError
from gpuherd.pyapi import connect


def held_in(herd: Herd, work: Path, *args: str) -> int:
    """A held job submitted from the folder `work` (it runs there)."""
    return int(herd.cli("submit", "-q", "--hold", *args, cwd=work).stdout.split()[0])


def test_edit_sets_and_clears_the_files_of_a_waiting_job(
    shared_daemon: Herd, shared_work: Path, tmp_path: Path
) -> None:
    herd = shared_daemon
    job = held_in(herd, shared_work, "echo out; echo err >&2")
    elsewhere = tmp_path / "elsewhere"  # the editor's folder: a relative file is the job's
    elsewhere.mkdir()
    said = herd.cli("edit", str(job), "-o", "o-%j.log", "-e", "e.log", cwd=elsewhere).stdout
    out, err = shared_work / f"o-{job}.log", shared_work / "e.log"
    assert said == (
        f"job {job}: edited (output none -> {shared_work}/o-%j.log, error none -> {err})\n"
    )
    assert f"stderr     {err}\n" in herd.cli("show", str(job)).stdout
    assert herd.cli("edit", str(job), "--clear", "error").stdout == (
        f"job {job}: edited (error {err} -> none)\n"
    )
    herd.cli("release", str(job))
    herd.wait_state(job, "succeeded")
    assert out.read_text() == "out\nerr\n" and not err.exists()  # --output alone: both
    assert herd.cli("log", str(job)).stdout == "out\nerr\n"
    # The Python API edits them too, a Path as submit() takes it; --clear output: the folder.
    api_job = connect(herd.home, start=False).job(held_in(herd, shared_work, "echo py"))
    api_job.edit(output=Path("py.log"))
    assert herd.job(api_job.id)["output"] == str(shared_work / "py.log")
    api_job.edit(clear=["output"])
    herd.cli("release", str(api_job.id))
    herd.wait_state(api_job.id, "succeeded")
    assert herd.cli("log", str(api_job.id)).stdout == "py\n"
    assert not (shared_work / "py.log").exists()


def test_edit_refuses_files_as_submit_does(shared_daemon: Herd, shared_work: Path) -> None:
    herd = shared_daemon
    job = held_in(herd, shared_work, "true")
    missing = shared_work / "nowhere"
    # An absolute file, or a placeholder: the CLI's usage error, in submit's words.
    said = herd.usage_error("edit", str(job), "-o", f"{missing}/x.log")
    assert f"--output {missing}/x.log: the folder {missing} does not exist: create it" in said
    said = herd.usage_error("edit", str(job), "-e", "x-%J.log")
    assert "--error x-%J.log: unknown placeholder %J: use %j (the job's id)" in said
    # A relative one is the job's folder's, which the daemon knows: refused for that job.
    refused = herd.cli("edit", str(job), "-o", "nowhere/x.log", check=False)
    assert refused.returncode == 1
    assert refused.stderr == (
        f"gpuherd: error: job {job}: output (--output) nowhere/x.log: the folder {missing} "
        f"does not exist: create it (mkdir -p {missing}) first\n"
    )
    with_cwd = herd.usage_error("edit", str(job), "--cwd", str(shared_work), "-o", "nowhere/x")
    assert f"--output nowhere/x: the folder {missing} does not exist" in with_cwd
    assert herd.job(job)["output"] is None  # nothing changed
    # (a job that ran takes new files too: test_attempt_output_files.py)


def test_an_edit_giving_several_jobs_one_file_is_refused(
    shared_daemon: Herd, shared_work: Path
) -> None:
    """As for a submission's jobs: each first attempt would empty the file the other writes."""
    herd = shared_daemon
    first, second = (held_in(herd, shared_work, "-n", "same", "true") for _ in range(2))
    ids = f"{first},{second}"
    refused = herd.cli("edit", ids, "-o", "one.log", check=False)
    assert (refused.returncode, refused.stderr) == (
        1,
        f"gpuherd: error: jobs {first} and {second} would both write {shared_work}/one.log, "
        "each emptying it as it starts: put %j (the job's id) or %x (its name) in the file's "
        "name, so each job has its own\n",
    )
    assert herd.cli("edit", ids, "-o", "one-%x.log", check=False).returncode == 1  # one name
    assert herd.job(first)["output"] is None and herd.job(second)["output"] is None
    herd.cli("edit", ids, "-o", "one-%j.log")
    assert herd.job(second)["output"] == str(shared_work / "one-%j.log")


def test_log_of_an_attempt_that_never_started_says_why(
    shared_daemon: Herd, shared_work: Path
) -> None:
    herd = shared_daemon
    (shared_work / "gone").touch()  # a file where the folder %x names would be created
    job = int(
        herd.cli("submit", "-q", "-n", "gone", "-o", "%x/o.log", "true", cwd=shared_work).stdout
    )
    why = herd.wait_state(job, "failed")["message"]
    assert why.startswith(f"cannot create the folder {shared_work}/gone for the file its stdout")
    for args in ((), ("--stderr",), ("-f",)):
        said = herd.cli("log", str(job), *args, check=False)
        assert said.returncode == 1 and said.stdout == ""
        assert said.stderr == f"gpuherd: error: job {job}: attempt 1 never started: {why}\n"


def test_log_of_output_sent_to_dev_null_says_nothing_was_kept(
    shared_daemon: Herd, shared_work: Path
) -> None:
    herd = shared_daemon
    job = int(herd.cli("submit", "-q", "-o", "/dev/null", "echo x", cwd=shared_work).stdout)
    apart = int(herd.cli("submit", "-q", "-e", "/dev/null", "echo kept", cwd=shared_work).stdout)
    herd.wait_state(job, "succeeded")
    herd.wait_state(apart, "succeeded")
    for stream, args in (("stdout", ()), ("stdout", ("-f",)), ("stderr", ("--stderr",))):
        said = herd.cli("log", str(job), *args, check=False)
        assert said.returncode == 1 and said.stdout == ""
        assert said.stderr == (
            f"gpuherd: error: job {job}: its {stream} went to /dev/null (--output): "
            "nothing was kept\n"
        )
    assert herd.cli("log", str(apart)).stdout == "kept\n"
    said = herd.cli("log", str(apart), "--stderr", check=False)
    assert said.stderr.endswith(": its stderr went to /dev/null (--error): nothing was kept\n")
    with pytest.raises(HerdError, match=r"stdout went to /dev/null \(--output\): nothing was"):
        connect(herd.home, start=False).job(job).logs()  # the Python API, in the same words
