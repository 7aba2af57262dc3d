"""`gpuherd run --gpu-file FILE`: the GPUs to use, from a file read again whenever it changes
while the run goes on (gpu-hog's TODO: "Allow changing GPUs available at runtime through a
gpu_file argument").

A GPU taken out of the file finishes its running job and starts nothing new; a GPU added gets
jobs at once; a bad file mid-run keeps the last good set; an empty one makes the run wait.
Jobs are real processes that record the CUDA_VISIBLE_DEVICES they got and wait for a go file
(`Probe` in recording_jobs.py); each step waits on the run's own lines or the jobs' files.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_run_cli import assert_one_error_line

from conftest import Probe, RunProcess, Runs, wait_for


def job_file(runs: Runs, probe: Probe, names: str, **opts: object) -> Path:
    """One job per name, each waiting for the file `go_<name>` (unless opts say otherwise)."""
    lines = [probe.cmd(n, **(opts or {"wait": f"go_{n}"})) for n in names]
    path = runs.root / "jobs.txt"
    path.write_text("".join(line + "\n" for line in lines))
    return path


def start(runs: Runs, fake_gpus: int, gpus: Path, jobs: Path) -> RunProcess:
    """`gpuherd run` of `jobs` on `fake_gpus` fake GPUs, using those `gpus` names, into out/."""
    return runs.start(
        "--fake-gpus",
        str(fake_gpus),
        "--gpu-file",
        str(gpus),
        "--output-dir",
        str(runs.root / "out"),
        str(jobs),
    )


def test_gpus_taken_out_finish_their_job_and_gpus_added_get_jobs_at_once(
    runs: Runs, probe: Probe
) -> None:
    gpus = runs.root / "gpus.txt"
    gpus.write_text("0\n")
    jobs = job_file(runs, probe, "abcd")
    out = runs.root / "out"
    run = start(runs, 3, gpus, jobs)
    assert run.expect_line("--gpu-file") == f"--gpu-file {gpus}: using GPU 0"
    wait_for(lambda: probe.started("a"), what="job a on GPU 0")

    # GPU 0 out, 1 and 2 in (a range, a comment, a line of its own), and one it does not have.
    gpus.write_text("# the other two\n1-2\n7\n")
    assert run.expect_line(f"--gpu-file {gpus}: GPU 7") == (
        f"--gpu-file {gpus}: GPU 7 is not present (the probe sees: 0,1,2): ignored"
    )
    assert run.expect_line(f"--gpu-file {gpus}: now") == f"--gpu-file {gpus}: now GPUs 1,2"
    # The added GPUs get jobs while a still runs on the one taken out.
    wait_for(lambda: probe.started("b") and probe.started("c"), what="b and c on GPUs 1 and 2")

    # a ends on GPU 0: d would start there at once if GPU 0 were still used; it waits for b's.
    probe.touch("go_a")
    run.expect_line("[0] succeeded")
    probe.touch("go_b")
    wait_for(lambda: probe.started("d"), what="job d on the GPU b left")
    for name in "cd":
        probe.touch(f"go_{name}")
    status, rest, err = run.finish()
    assert status == 0, rest + err
    assert rest.splitlines()[-1] == f"4 succeeded, 0 failed; logs in {out}"
    seen = {name: record["gpus"] for name, record in probe.by_name().items()}
    assert seen["a"] == "0"
    assert {seen["b"], seen["c"]} == {"1", "2"}
    assert seen["d"] == seen["b"]


def test_a_bad_file_mid_run_keeps_the_last_good_gpus_and_says_so_until_it_is_good(
    runs: Runs, probe: Probe
) -> None:
    gpus = runs.root / "gpus.txt"
    gpus.write_text("0\n")
    jobs = job_file(runs, probe, "ab")
    run = start(runs, 2, gpus, jobs)
    run.expect_line("--gpu-file")
    wait_for(lambda: probe.started("a"), what="job a on GPU 0")

    gpus.write_text("0,x\n")
    invalid = run.expect_line(f"--gpu-file {gpus}: invalid")
    assert invalid.startswith(f"--gpu-file {gpus}: invalid GPU index 'x' in '0,x': use GPU"), (
        invalid
    )
    assert invalid.endswith("; keeping GPU 0 until the file is valid again"), invalid
    # Still GPU 0 alone: b starts there once a ends (not on GPU 1, which was never named).
    probe.touch("go_a")
    wait_for(lambda: probe.started("b"), what="job b on GPU 0")

    gpus.unlink()
    assert run.expect_line(f"--gpu-file {gpus}: cannot") == (
        f"--gpu-file {gpus}: cannot read it (No such file or directory): give a text file of "
        "GPU indices, such as 0,1; keeping GPU 0 until the file is valid again"
    )
    gpus.write_text("1\n")
    assert run.expect_line(f"--gpu-file {gpus} is") == f"--gpu-file {gpus} is valid again: GPU 1"
    probe.touch("go_b")
    status, rest, err = run.finish()
    assert (status, err) == (0, ""), rest + err
    assert "\n".join(run.lines).count("invalid GPU index") == 1
    assert {name: r["gpus"] for name, r in probe.by_name().items()} == {"a": "0", "b": "0"}


def test_a_file_that_names_no_gpu_makes_the_run_wait_for_one(runs: Runs, probe: Probe) -> None:
    gpus = runs.root / "gpus.txt"
    gpus.write_text("# none yet: GPUs go here when the other user is done\n")
    jobs = job_file(runs, probe, "a", sleep=0)
    run = start(runs, 2, gpus, jobs)
    assert run.expect_line("--gpu-file") == (
        f"--gpu-file {gpus} names no GPU to use: jobs that need a GPU wait until it names one"
    )
    gpus.write_text("1")
    assert run.expect_line("--gpu-file") == f"--gpu-file {gpus}: now GPU 1"
    status, rest, err = run.finish()
    assert status == 0, rest + err
    # Started only once GPU 1 was named: at once it would have had GPU 0, the first free one.
    assert probe.by_name()["a"]["gpus"] == "1"


def start_per_job(
    runs: Runs, probe: Probe, names: str, fake_gpus: int, named: str, per_job: int
) -> tuple[Path, RunProcess]:
    """A run of quick jobs `names` with --gpus-per-job `per_job`, its GPU file naming `named`."""
    gpus = runs.root / "gpus.txt"
    gpus.write_text(named)
    jobs = job_file(runs, probe, names, sleep=0)
    options = ["--fake-gpus", str(fake_gpus), "--gpu-file", str(gpus)]
    return gpus, runs.start(*options, "--gpus-per-job", str(per_job), str(jobs))


def test_a_file_naming_fewer_gpus_than_a_job_needs_says_its_jobs_wait(
    runs: Runs, probe: Probe
) -> None:
    """--gpus-per-job 2 and a file naming one GPU: the jobs wait, and the run says why (they
    waited without a word); once the file names two, the line says so and they start."""
    gpus, run = start_per_job(runs, probe, "a", fake_gpus=3, named="0\n", per_job=2)
    assert run.expect_line("--gpu-file") == (
        f"--gpu-file {gpus}: using GPU 0 (fewer than --gpus-per-job 2: jobs that need 2 wait "
        "until it names 2)"
    )
    gpus.write_text("1,2\n")
    assert run.expect_line("--gpu-file") == f"--gpu-file {gpus}: now GPUs 1,2"
    status, rest, err = run.finish()
    assert status == 0, rest + err
    assert probe.by_name()["a"]["gpus"] == "1,2"  # not started on GPU 0 (with 1) at once


def test_a_file_that_names_no_gpu_holds_back_no_cpu_only_job(runs: Runs, probe: Probe) -> None:
    """With --gpus-per-job 0 the jobs need no GPU and start at once: the run's line about the
    empty file is true of them too (it said "waiting for GPUs in the file")."""
    gpus, run = start_per_job(runs, probe, "ab", fake_gpus=2, named="# none\n", per_job=0)
    assert run.expect_line("--gpu-file") == (
        f"--gpu-file {gpus} names no GPU to use: jobs that need a GPU wait until it names one"
    )
    status, rest, err = run.finish()  # the file never names one: the jobs ran without
    assert (status, err) == (0, ""), rest + err
    assert {name: r["gpus"] for name, r in probe.by_name().items()} == {"a": "", "b": ""}


@pytest.mark.parametrize(
    ("content", "args", "status", "error"),
    [
        ("0", ["--gpus", "1"], 2, "give --gpus or --gpu-file, not both"),
        (
            "0,5",
            [],
            2,
            "--gpu-file GPUS names GPU 5, which this machine does not have (it has GPUs 0-1): "
            "take it out of the file",
        ),
        ("0-", [], 2, "--gpu-file GPUS: invalid GPU index '0-': use GPU indices like 0,1,2"),
        (
            None,
            [],
            2,
            "--gpu-file GPUS: cannot read it (No such file or directory): give a text file of "
            "GPU indices, such as 0,1",
        ),
        (b"0\xff", [], 2, "--gpu-file GPUS: not UTF-8 text: give GPU indices"),
    ],
    ids=["with-gpus", "absent-gpu", "invalid", "missing", "not-text"],
)
def test_a_gpu_file_that_cannot_be_used_is_refused_at_the_start_in_one_line(
    runs: Runs, probe: Probe, content: str | bytes | None, args: list[str], status: int, error: str
) -> None:
    gpus = runs.root / "gpus.txt"
    if content is not None:
        gpus.write_bytes(content.encode() if isinstance(content, str) else content)
    jobs = job_file(runs, probe, "a", sleep=0)
    out = runs.root / "out"
    # (not with --gpus: that pair is refused first, --gpus and --fake-gpus exclude each other)
    fake = [] if "--gpus" in args else ["--fake-gpus", "2"]
    proc = runs.run(*fake, "--gpu-file", str(gpus), *args, "--output-dir", str(out), str(jobs))
    line = assert_one_error_line(proc)
    assert proc.returncode == status
    assert line.startswith(f"gpuherd: error: {error.replace('GPUS', str(gpus))}"), line
    assert not out.exists() and not probe.started("a")


def test_without_a_driver_the_advice_is_one_that_works_with_a_gpu_file(
    runs: Runs, probe: Probe
) -> None:
    """It said "pass --gpus 0,1 to name GPUs", which `run` refuses with --gpu-file, and "or
    --gpus-per-job 0", which then refuses the GPUs the file names as absent."""
    gpus = runs.root / "gpus.txt"
    gpus.write_text("2\n")
    jobs = job_file(runs, probe, "a", sleep=0)
    refused = runs.run("--gpu-file", str(gpus), str(jobs))
    if "no NVIDIA driver found" not in refused.stderr:
        pytest.skip("this machine has an NVIDIA driver")
    line = assert_one_error_line(refused)
    assert refused.returncode == 1
    assert line.endswith(
        ": --gpu-file names GPUs the driver finds; add --fake-gpus 4 to try it without a GPU "
        "(the file then names fake GPUs 0-3)"
    ), line
    assert not probe.started("a")
    # The advice followed: the file's GPU 2 is fake GPU 2.
    status, rest, err = start(runs, 4, gpus, jobs).finish()
    assert (status, err) == (0, ""), rest + err
    assert probe.by_name()["a"]["gpus"] == "2"
