"""`gpuherd run` as gpu-hog and simple_gpu_scheduler users come to it: their yielder files and
their habits work, and what goes wrong in them is said in one line that shows where.

Jobs are real processes that record what they saw (see `Probe` in recording_jobs.py).
"""

from __future__ import annotations

import os
import pty
import subprocess

import pytest

from conftest import GPUHERD_BIN, Probe, Runs


def error_lines(stderr: str) -> list[str]:
    assert "Traceback" not in stderr, stderr
    return stderr.splitlines()


def test_yielder_imports_the_modules_beside_it(runs: Runs, probe: Probe) -> None:
    # gpu-hog put the yielder's folder first on sys.path (as `python FILE.py` does), so a
    # yielder that keeps its grid in a module beside it ran there; here it failed to import,
    # from another folder and from its own alike.
    folder = runs.root / "experiments"
    folder.mkdir()
    (folder / "grid.py").write_text("LEARNING_RATES = ['a', 'b']\n")
    (folder / "make_jobs.py").write_text(
        "from grid import LEARNING_RATES\n\n"
        "def yielder():\n"
        "    for lr in LEARNING_RATES:\n"
        f"        yield {probe.cmd('lr')!r} + '_' + lr\n"
    )
    for cwd, name in [(runs.cwd, str(folder / "make_jobs.py")), (folder, "make_jobs.py")]:
        out = runs.root / f"out-{cwd.name}"
        proc = runs.run(
            "--fake-gpus", "2", "--output-dir", str(out), "--job_yielder", name, cwd=cwd
        )
        assert proc.returncode == 0, proc.stderr + proc.stdout
        assert proc.stdout.splitlines()[-1] == f"2 succeeded, 0 failed; logs in {out}"
    assert sorted(record["name"] for record in probe.records()) == ["lr_a", "lr_a", "lr_b", "lr_b"]


def test_yielder_that_raises_says_what_it_raised_and_where(runs: Runs, probe: Probe) -> None:
    # A KeyError said only "'lr'": no word of what went wrong, nor of where.
    path = runs.root / "make_jobs.py"
    path.write_text(
        "def yielder():\n"
        "    config = {'bs': 32}\n"
        f"    yield {probe.cmd('first')!r}\n"
        "    yield 'python train.py --lr ' + config['lr']\n"
    )
    out = runs.root / "out"
    proc = runs.run("--fake-gpus", "1", "--output-dir", str(out), "--yielder", str(path))
    assert proc.returncode == 1, proc.stdout
    assert error_lines(proc.stderr) == [
        f"gpuherd: error: --yielder {path}: yielder() raised KeyError at line 4: 'lr'"
    ]
    assert not out.exists() or list(out.iterdir()) == []
    assert not probe.started("first")


def test_commands_typed_on_the_terminal_are_asked_for(runs: Runs, probe: Probe) -> None:
    # `gpuherd run --gpus 0,1` with no job file (gpu-hog needed --job_file) read the terminal
    # without a word: a run that seemed to hang. Now one line says what it waits for.
    leader, follower = pty.openpty()
    try:
        proc = subprocess.Popen(
            [GPUHERD_BIN, "run", "--fake-gpus", "1", "--output-dir", str(runs.root / "out")],
            stdin=follower,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=runs.cwd,
            env=runs.env,
            text=True,
        )
        os.write(leader, (probe.cmd("typed") + "\n").encode() + b"\x04")  # a line, then Ctrl-D
        out, err = proc.communicate(timeout=60)
    finally:
        os.close(follower)
        os.close(leader)
    assert proc.returncode == 0, err + out
    assert error_lines(err) == [
        "gpuherd: reading commands from the terminal, one a line; Ctrl-D ends the input"
        " (or give a job file: gpuherd run --gpus 0,1 jobs.txt)"
    ]
    assert out.splitlines()[-1].startswith("1 succeeded, 0 failed")
    assert probe.started("typed")
    # Piped in, as simple_gpu_scheduler's users do, the commands come without that line.
    piped = runs.run("--fake-gpus", "1", "-q", input=probe.cmd("piped") + "\n")
    assert piped.returncode == 0 and piped.stderr == "", piped.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["jobs.txt", "--gpus", "0", "1", "2"],
        ["--job_file", "jobs.txt", "--gpus", "0", "1", "2"],
        ["--gpus=0", "1", "2", "jobs.txt"],
    ],
    ids=["file-first", "gpu-hog-job-file", "equals"],
)
def test_gpus_given_apart_work_wherever_they_stand(
    runs: Runs, probe: Probe, args: list[str]
) -> None:
    # `--gpus 0 1 2` (simple_gpu_scheduler's spelling) after the job file was refused: "give
    # one job file (got jobs.txt, 1, 2)". Each job waits until all three have started, so they
    # must run at once, on three different GPUs.
    (runs.cwd / "jobs.txt").write_text("".join(probe.cmd(f"j{n}", barrier=3) + "\n" for n in "abc"))
    out = runs.root / "out"
    proc = runs.run(*args, "--output-dir", str(out))
    assert proc.returncode == 0, proc.stderr + proc.stdout
    assert proc.stdout.splitlines()[-1] == f"3 succeeded, 0 failed; logs in {out}"
    assert sorted(record["gpus"] for record in probe.by_name().values()) == ["0", "1", "2"]


@pytest.mark.parametrize(
    "args",
    [["--job_file"], ["--job_file", "--gpus", "0", "1"], ["--job_file=", "--gpus", "0"]],
    ids=["last", "before-an-option", "empty"],
)
def test_gpu_hog_job_file_without_its_file_is_one_line_naming_it(
    runs: Runs, args: list[str]
) -> None:
    # gpu-hog's own flag was said not to exist (`No such option '--job_file'. Did you mean
    # '--gpu-file'?`), took `--gpus` for its file (`got ./--gpus, 0, 1`), or read a file ''.
    proc = runs.run("--fake-gpus", "2", *args)
    assert proc.returncode == 2, proc.stdout
    assert proc.stderr.splitlines() == [
        "gpuherd: error: --job_file: no value given: give the job file after it"
        " (see gpuherd run --help)"
    ]


YIELDER = "the yielder's Python file"


@pytest.mark.parametrize(
    ("args", "wanted"),
    [
        (["--yielder", "--gpus", "0"], YIELDER),
        (["--job_yielder", "--gpus=0", "1"], YIELDER),
        (["--yielder", "--output-dir", "out"], YIELDER),
        (["--yielder"], YIELDER),
        (["--output-dir", "--gpus", "0"], "the output folder"),
        (["--gpu-file", "--gpus", "0"], "the GPU file"),
    ],
    ids=["gpus", "gpu-hog-spelling", "output-dir", "last", "output-dir-alone", "gpu-file"],
)
def test_file_option_without_its_file_is_one_line_naming_it(
    runs: Runs, args: list[str], wanted: str
) -> None:
    # Click took the next option for the file: `--yielder --gpus 0` said "unexpected argument
    # 0: did you mean --gpus?", `--yielder --output-dir out` "give a job file or --yielder,
    # not both": mistakes the user did not make.
    proc = runs.run("--fake-gpus", "2", *args)
    assert proc.returncode == 2, proc.stdout
    assert error_lines(proc.stderr) == [
        f"gpuherd: error: {args[0]}: no value given: give {wanted} after it"
        " (see gpuherd run --help)"
    ]
    assert not (runs.cwd / "out").exists()
