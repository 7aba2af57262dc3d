"""What `gpuherd run` prints of text it does not control, and of a bad --gpu-file.

An error quoting a file name with a newline spanned two lines (`cannot read no` then
`file: ...`); a `started` line showed a control byte of its command as a space; a missing
--gpu-file exited 1 where a folder given there exited 2; a line that sets
CUDA_VISIBLE_DEVICES itself, which `submit` warns of, ran without a word.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import Runs


def test_an_error_quoting_a_newline_is_one_line(runs: Runs) -> None:
    proc = runs.run("--fake-gpus", "1", "no\nfile")
    assert (proc.returncode, proc.stdout) == (1, ""), proc.stderr
    assert proc.stderr == (
        "gpuherd: error: cannot read no⏎file: No such file or directory: check the path, or "
        "give - to read the jobs from standard input\n"
    )

    nul = runs.cwd / "nul\nfile.txt"
    nul.write_bytes(b"echo a\0b\n")
    proc = runs.run("--fake-gpus", "1", str(nul))
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.splitlines() == [
        f"gpuherd: error: {runs.cwd}/nul⏎file.txt: line 1 holds a NUL byte (at character 7): "
        "no program can receive it; remove it"
    ]


def test_a_started_line_shows_control_bytes_as_the_failure_tail_does(runs: Runs) -> None:
    proc = runs.run(
        "--fake-gpus", "1", "--output-dir", str(runs.root / "out"), input="echo a\x01b\n"
    )
    assert proc.returncode == 0, proc.stderr
    assert "[0] started on GPU 0: echo a^Ab" in proc.stdout.splitlines(), proc.stdout


@pytest.mark.parametrize("given", ["missing", "folder", "absent GPU"])
def test_a_bad_gpu_file_is_a_usage_error_whatever_is_wrong(runs: Runs, given: str) -> None:
    gpus = {"missing": runs.root / "nothing.txt", "folder": runs.root, "absent GPU": None}[given]
    if gpus is None:
        gpus = runs.root / "gpus.txt"
        gpus.write_text("7\n")
    out = runs.root / "out"
    proc = runs.run(
        "--fake-gpus", "2", "--gpu-file", str(gpus), "--output-dir", str(out), input="true\n"
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("gpuherd: error: --gpu-file"), proc.stderr
    assert len(proc.stderr.splitlines()) == 1, proc.stderr
    assert not out.exists()


def test_run_warns_once_of_lines_that_set_cuda_visible_devices(runs: Runs) -> None:
    lines = "true\nCUDA_VISIBLE_DEVICES=1 true\nexport CUDA_VISIBLE_DEVICES=0; true\n"
    out = runs.root / "out"
    proc = runs.run("--fake-gpus", "2", "-q", "--output-dir", str(out), input=lines)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines() == [
        "gpuherd: warning: [1] the command sets CUDA_VISIBLE_DEVICES=1, so the job would not "
        "run on the GPUs gpuherd places it on and holds for it, but on ones another job may "
        "hold: leave it out (gpuherd sets it) (said once, of the first line that sets it)"
    ]
    assert all(Path(out, f"job_{n}", "SUCCESS").exists() for n in range(3))
    # CPU-only jobs get no GPU: nothing to take over, nothing said.
    quiet = runs.run(
        "--gpus-per-job", "0", "-q", "--output-dir", str(runs.root / "cpu"), input=lines
    )
    assert (quiet.returncode, quiet.stderr) == (0, "")
