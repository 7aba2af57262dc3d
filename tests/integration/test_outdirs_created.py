"""Folders that the placeholders of `--output` / `--error` name (`runs/%j/out.log`) are created
as each attempt starts, as a Slurm user's `-o runs/%x/%j/train.log` expects; the part before
the first placeholder must exist, and is checked at submission (executors/local_outputs.py,
core/output_files.fixed_folder)."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import Herd, wait_for
from gpuherd.pyapi import connect


def submit_in(herd: Herd, work: Path, *args: str) -> int:
    """`gpuherd submit ARGS` from the folder `work` (relative files are taken from there)."""
    return int(herd.cli("submit", "-q", *args, cwd=work).stdout.split()[0])


def test_a_folder_per_job_is_created_for_output_and_error(
    shared_daemon: Herd, shared_work: Path
) -> None:
    herd = shared_daemon
    (shared_work / "runs").mkdir()
    job = submit_in(herd, shared_work, "-o", "runs/%j/out.log", "echo to stdout")
    nested = submit_in(
        herd, shared_work, "-n", "exp/lr=1", "-o", "runs/%x/%j/train.log",
        "-e", "runs/%x/%j/err/train.err", "echo out; echo err >&2",
    )  # fmt: skip
    herd.wait_state(job, "succeeded")
    herd.wait_state(nested, "succeeded")
    assert (shared_work / "runs" / str(job) / "out.log").read_text() == "to stdout\n"
    folder = shared_work / "runs" / "exp_lr=1" / str(nested)
    assert (folder / "train.log").read_text() == "out\n"
    assert (folder / "err" / "train.err").read_text() == "err\n"
    assert herd.cli("log", str(nested), "--stderr").stdout == "err\n"


def test_each_attempt_gets_the_folder_its_a_names(shared_daemon: Herd, shared_work: Path) -> None:
    herd, work = shared_daemon, shared_work
    (work / "runs").mkdir()
    job = submit_in(
        herd, work, "--retries", "1", "-o", "runs/%j/a%a/out.log",
        'echo "attempt $GPUHERD_ATTEMPT"; exit 3',
    )  # fmt: skip
    herd.wait_state(job, "failed")
    assert herd.job(job)["attempt"] == 2
    for attempt in (1, 2):
        path = work / "runs" / str(job) / f"a{attempt}" / "out.log"
        assert path.read_text() == f"attempt {attempt}\n"
        said = herd.cli("log", str(job), "--attempt", str(attempt)).stdout
        assert said == f"attempt {attempt}\n"


def test_a_missing_fixed_part_is_refused_at_submission(
    shared_daemon: Herd, shared_work: Path
) -> None:
    herd = shared_daemon
    said = herd.usage_error("submit", "--cwd", str(shared_work), "-o", "rnus/%j/out.log", "true")
    rnus = shared_work / "rnus"
    assert said == (
        f"gpuherd: error: --output rnus/%j/out.log: the folder {rnus} does not exist: "
        f"create it (mkdir -p {rnus}) first (see gpuherd submit --help)\n"
    )
    said = herd.usage_error("submit", "--cwd", str(shared_work), "-e", "no/%x/%j.err", "true")
    assert f"--error no/%x/%j.err: the folder {shared_work / 'no'} does not exist" in said
    assert not [job for job in herd.ls_all() if job["cwd"] == str(shared_work)]  # none queued


def test_a_file_in_the_way_fails_the_attempt_saying_so(
    shared_daemon: Herd, shared_work: Path
) -> None:
    herd = shared_daemon
    (shared_work / "runs").mkdir()
    (shared_work / "runs" / "blocked").write_text("not a folder\n")
    job = submit_in(herd, shared_work, "-n", "blocked", "-o", "runs/%x/%j.log", "echo hi")
    ended = herd.wait_state(job, "failed")
    in_the_way = shared_work / "runs" / "blocked"
    why = (
        f"cannot create the folder {in_the_way} for the file its stdout goes to: a file is in "
        f"the way; move it, then `gpuherd retry {job}`"
    )
    assert (ended["outcome"], ended["message"]) == ("spawn_error", why)
    assert f"message    {why}\n" in herd.cli("show", str(job)).stdout
    # (`log` read the file through the file in the way: an internal error, not this)
    said = herd.cli("log", str(job), check=False)
    assert (said.returncode, said.stderr) == (
        1,
        f"gpuherd: error: job {job}: attempt 1 never started: {why}\n",
    )
    assert in_the_way.read_text() == "not a folder\n"  # left as it was
    in_the_way.unlink()
    herd.cli("retry", str(job))
    herd.wait_state(job, "succeeded")
    assert (in_the_way / f"{job}.log").read_text() == "hi\n"


def test_a_job_named_dot_dot_cannot_write_outside_the_folder(
    shared_daemon: Herd, shared_work: Path
) -> None:
    """%x writes a `/` in a name as `_`, but a name may be `..`: the folder it names is refused
    as the attempt starts (the job can be renamed and run), never created or written above."""
    herd = shared_daemon
    (shared_work / "runs").mkdir()
    job = submit_in(herd, shared_work, "-n", "..", "-o", "runs/%x/out.log", "echo escaped")
    ended = herd.wait_state(job, "failed")
    assert ended["outcome"] == "spawn_error"
    assert ended["message"].startswith(
        f"will not write {shared_work}/runs/../out.log, the file its stdout goes to: its "
        f"name's part .. (from a placeholder, %x: the job's name) would leave "
        f"{shared_work}/runs; give the job another name: `gpuherd retry --hold {job}`"
    )
    assert not (shared_work / "out.log").exists()
    herd.cli("retry", "--hold", str(job))
    herd.cli("edit", str(job), "--name", "fine")
    herd.cli("release", str(job))
    herd.wait_state(job, "succeeded")
    assert (shared_work / "runs" / "fine" / "out.log").read_text() == "escaped\n"


def test_sweeps_and_the_python_api_get_their_folders(
    shared_daemon: Herd, shared_work: Path
) -> None:
    herd = shared_daemon
    (shared_work / "runs").mkdir()
    answer = json.loads(
        herd.cli(
            "sweep", "echo lr={lr}", "-p", "lr", "1", "2", "--name", "sw",
            "--output", "runs/%x/out.log", "--json", cwd=shared_work,
        ).stdout
    )  # fmt: skip
    (shared_work / "s.yaml").write_text(
        "name: sf\ncommand: echo b={b}\ngrid: {b: [3]}\noutput: runs/%x/%j/out.log\n"
    )
    filed = json.loads(herd.cli("sweep", "s.yaml", "--json", cwd=shared_work).stdout)
    job = connect(herd.home, start=False).submit(
        "echo from python", cwd=shared_work, output="runs/py-%j/out.log"
    )
    for job_id in [*answer["ids"], *filed["ids"], job.id]:
        herd.wait_state(job_id, "succeeded")
    assert (shared_work / "runs" / "sw_lr=1" / "out.log").read_text() == "lr=1\n"
    assert (shared_work / "runs" / "sw_lr=2" / "out.log").read_text() == "lr=2\n"
    point = shared_work / "runs" / "sf_b=3" / str(filed["ids"][0])
    assert (point / "out.log").read_text() == "b=3\n"
    assert (shared_work / "runs" / f"py-{job.id}" / "out.log").read_text() == "from python\n"
    wait_for(lambda: job.logs() == "from python\n", what="the job's log through the API")
