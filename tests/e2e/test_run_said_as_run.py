"""`gpuherd run` says what its jobs will not do as written, and shows what runs.

A CUDA_VISIBLE_DEVICES of the shell or of a yielded item's `env` was replaced without a word
(`submit` warns), and job.json recorded the `env` one as if the job had seen it; `--gpus 0
--gpus 1` ran every job on GPU 1; a `# comment` ending in `\\` swallowed the next line into the
shown job, though sh ran it; a job line of bash's (`source`) failed in /bin/sh with no hint;
a SIGHUP with no job running said "killing 0 running jobs"; `--prefix ""` never named the
folders an earlier, longer run left; a job file name that is not UTF-8 was said with
Python's escapes; `--times-from herd_runs` named no run folder in it.
"""

from __future__ import annotations

import json
import os
import signal

import pytest

from conftest import Probe, Runs, job_info

WARNING = "gpuherd: warning: "


@pytest.fixture(autouse=True)
def _plain_environment(runs: Runs) -> None:
    """A shell of its own: one whose CUDA_VISIBLE_DEVICES or GPUHERD_SHELL is set (a GPU
    machine's batch job) gets warnings, or none, of its own."""
    for name in ("CUDA_VISIBLE_DEVICES", "GPUHERD_SHELL"):
        runs.env.pop(name, None)


def warnings(stderr: str) -> list[str]:
    assert "Traceback" not in stderr, stderr
    return [line.removeprefix(WARNING) for line in stderr.splitlines() if line.startswith(WARNING)]


def test_the_shells_visible_devices_are_said_to_be_replaced(runs: Runs, probe: Probe) -> None:
    runs.env["CUDA_VISIBLE_DEVICES"] = "1"
    out = runs.root / "out"
    proc = runs.run("--fake-gpus", "2", "--output-dir", str(out), input=probe.cmd("a") + "\n")
    assert proc.returncode == 0, proc.stderr
    assert warnings(proc.stderr) == [
        "this shell's CUDA_VISIBLE_DEVICES=1 is replaced: the job sees the GPUs gpuherd places "
        "it on; --gpus 1 keeps the jobs on those GPUs"
    ]
    assert probe.by_name()["a"]["gpus"] == "0"  # (what the warning says)
    runs.env["CUDA_VISIBLE_DEVICES"] = "5"  # one the run does not have: named so
    again = runs.run("--fake-gpus", "2", "--output-dir", str(out), input="true\n")
    assert warnings(again.stderr) == [
        "this shell's CUDA_VISIBLE_DEVICES=5 is replaced: the job sees the GPUs gpuherd places "
        "it on; GPU 5 is not configured (configured: 0,1)"
    ]
    # --gpus chose the GPUs (as submit's --only-gpus); a CPU-only job sees none anyway.
    for options in (["--gpus", "0,1"], ["--fake-gpus", "2", "--gpus-per-job", "0"]):
        quiet = runs.run(*options, "--output-dir", str(out), input="true\n")
        assert quiet.returncode == 0 and warnings(quiet.stderr) == [], quiet.stderr


def test_a_yielded_env_sets_no_visible_devices_the_job_never_sees(runs: Runs) -> None:
    yielder = runs.root / "make_jobs.py"
    yielder.write_text(
        "def yielder():\n"
        "    for lr in ('1', '2'):\n"
        "        env = {'CUDA_VISIBLE_DEVICES': '7', 'LR': lr}\n"
        "        yield {'command': 'echo $CUDA_VISIBLE_DEVICES $LR', 'env': env}\n"
    )
    out = runs.root / "out"
    proc = runs.run("--fake-gpus", "2", "--output-dir", str(out), "--yielder", str(yielder))
    assert proc.returncode == 0, proc.stderr
    assert warnings(proc.stderr) == [
        "[0] its yielded env CUDA_VISIBLE_DEVICES=7 is replaced: the job sees the GPUs gpuherd "
        "places it on; GPU 7 is not configured (configured: 0,1) (said once, of the first job "
        "that sets it)"
    ]
    for number, lr in ((0, "1"), (1, "2")):
        folder = out / f"job_{number}"
        assert job_info(folder)["env_overrides"] == {"LR": lr}  # (it recorded the 7 too)
        gpu = job_info(folder)["gpus"][0]
        assert (folder / "stdout.log").read_text() == f"{gpu} {lr}\n"
    # A job.json of before, which recorded it, is the same job still for --skip-succeeded.
    info = job_info(out / "job_0")
    info["env_overrides"] = {"CUDA_VISIBLE_DEVICES": "7", "LR": "1"}
    (out / "job_0" / "job.json").write_text(json.dumps(info))
    rerun = runs.run(
        "--fake-gpus", "2", "--output-dir", str(out), "--skip-succeeded", "--yielder", str(yielder)
    )
    assert rerun.returncode == 0, rerun.stderr
    assert f"[0] skipped: succeeded before ({out}/job_0)" in rerun.stdout.splitlines()


def test_a_line_setting_a_gpu_the_run_lacks_is_said_so(runs: Runs) -> None:
    out = runs.root / "out"
    jobs = "true\nexport CUDA_VISIBLE_DEVICES=5; true\n"
    proc = runs.run("--fake-gpus", "2", "-q", "--output-dir", str(out), input=jobs)
    assert proc.returncode == 0, proc.stderr
    assert warnings(proc.stderr) == [
        "[1] the command sets CUDA_VISIBLE_DEVICES=5, so the job would not run on the GPUs "
        "gpuherd places it on and holds for it, but on ones another job may hold: leave it out "
        "(gpuherd sets it); GPU 5 is not configured (configured: 0,1) (said once, of the first "
        "line that sets it)"
    ]


def test_gpus_given_twice_are_both_used(runs: Runs, probe: Probe) -> None:
    jobs = "".join(probe.cmd(name) + "\n" for name in "ab")
    out = runs.root / "out"
    proc = runs.run("--gpus", "0", "--gpus", "1", "-q", "--output-dir", str(out), input=jobs)
    assert proc.returncode == 0, proc.stderr
    # Two slots free at the start: the two jobs start at once, one on each (it was GPU 1 alone).
    assert sorted(record["gpus"] for record in probe.records()) == ["0", "1"]


def test_a_comment_ending_in_a_backslash_continues_nothing(runs: Runs) -> None:
    jobs = runs.root / "jobs.txt"
    jobs.write_text("echo x # note \\\necho y\n")
    out = runs.root / "out"
    proc = runs.run("--fake-gpus", "1", "--output-dir", str(out), str(jobs))
    assert proc.returncode == 0, proc.stderr
    started = [line for line in proc.stdout.splitlines() if " started " in line]
    assert started == ["[0] started on GPU 0: echo x # note \\", "[1] started on GPU 0: echo y"]
    assert [(out / f"job_{n}" / "stdout.log").read_text() for n in (0, 1)] == ["x\n", "y\n"]


def test_a_bash_word_in_a_job_line_names_gpuherd_shell_once(runs: Runs) -> None:
    (runs.cwd / "env.sh").write_text("export ON=1\n")
    jobs = "source env.sh && echo on=$ON\nsource env.sh && echo again=$ON\n"
    out = runs.root / "out"
    sh = os.path.basename(os.path.realpath("/bin/sh"))
    proc = runs.run("--fake-gpus", "1", "-q", "--output-dir", str(out), input=jobs)
    if sh.startswith("bash"):  # (where /bin/sh is bash, `source` works: nothing to say)
        assert proc.returncode == 0 and warnings(proc.stderr) == [], proc.stderr
        return
    assert proc.returncode == 1
    assert warnings(proc.stderr) == [
        f"[0] `source` is bash's: jobs run in /bin/sh ({sh} here), which fails with `source: "
        "not found`; run them in bash: GPUHERD_SHELL=bash gpuherd run ...; or write `. FILE` "
        "for `source FILE` (said once, of the first line that uses one)"
    ]
    runs.env["GPUHERD_SHELL"] = "bash"  # as the hint says: the jobs run, and nothing is said
    proc = runs.run("--fake-gpus", "1", "-q", "--output-dir", str(out), input=jobs)
    assert proc.returncode == 0 and warnings(proc.stderr) == [], proc.stderr
    assert (out / "job_0" / "stdout.log").read_text() == "on=1\n"


def test_a_sighup_with_no_job_running_kills_nothing(runs: Runs) -> None:
    run = runs.start("--fake-gpus", "1", "--output-dir", str(runs.root / "out"))
    run.write("true\n")  # its input stays open: the run waits for more
    run.expect_line("[0] succeeded")
    run.proc.send_signal(signal.SIGHUP)
    assert run.expect_line("hung up") == "hung up: starting nothing new"
    status, rest, err = run.finish()
    assert status == 129 and "Traceback" not in err, rest + err


def test_an_empty_prefix_names_the_folders_an_earlier_run_left(runs: Runs) -> None:
    out = runs.root / "out"
    for jobs in ("true\ntrue\ntrue\n", "true\n"):
        proc = runs.run(
            "--fake-gpus", "1", "-q", "--prefix", "", "--output-dir", str(out), input=jobs
        )
        assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-2] == (
        f"{out} also holds 1, 2 (from an earlier run of more jobs than this input's 1 job): kept "
        "as they were; remove them if they are not wanted"
    )


def test_a_job_file_name_that_is_not_utf8_is_said_as_the_shell_reads_it(runs: Runs) -> None:
    name = os.fsdecode(b"j\xff.txt")
    proc = runs.run("--fake-gpus", "1", name)
    assert (proc.returncode, proc.stderr) == (
        1,
        "gpuherd: error: cannot read $'j\\xff.txt': No such file or directory: check the path, "
        "or give - to read the jobs from standard input\n",
    )


def test_times_from_the_folder_of_runs_names_a_run_in_it(runs: Runs) -> None:
    herd_runs = runs.cwd / "herd_runs"
    first = runs.run("--fake-gpus", "1", "-q", input="true\n")  # (into herd_runs/<time>)
    assert first.returncode == 0, first.stderr
    (run_folder,) = herd_runs.iterdir()
    proc = runs.run(
        "--fake-gpus", "1", "-q", "--order", "longest-first", "--times-from", "herd_runs",
        "--output-dir", str(runs.root / "out"), input="true\n",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0] == (
        "--order longest-first: no earlier run times in herd_runs (no job folder with an ended "
        "job.json): jobs start in input order; herd_runs holds runs: give one, as --times-from "
        f"herd_runs/{run_folder.name}"
    )
    named = runs.run(
        "--fake-gpus", "1", "-q", "--order", "longest-first",
        "--times-from", f"herd_runs/{run_folder.name}",
        "--output-dir", str(runs.root / "out"), input="true\n",
    )  # fmt: skip
    assert named.returncode == 0, named.stderr
    assert "no earlier run times" not in named.stdout  # (the folder named works as said)
