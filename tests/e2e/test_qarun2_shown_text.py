"""What `gpuherd run` prints of text it does not control: a failed job's log tail holding
control bytes, an --output-dir whose name holds a newline, a job file named like an option.

A tail showed NUL bytes as blanks (a job that printed `\\0`s read as one that printed
spaces); a U+0085 or a form feed broke a tail line in two; the run's last line, `logs in
PATH`, spanned two lines for a folder with a newline in its name; `run -jobs.txt` said
"No such option '-j'" of a file that is there.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from conftest import Runs

CONTROLS_TO_STDERR = r"printf 'a\000b\001c\177d\tT\033[31mred\302\205N\014F\377e\n' >&2; exit 3"
"""NUL, ^A, DEL, a tab, a colour, U+0085, a form feed, a byte that is not UTF-8."""


def test_a_failure_tail_shows_control_bytes_visibly_on_one_line(runs: Runs) -> None:
    out = runs.root / "out"
    proc = runs.run("--fake-gpus", "1", "-q", "--output-dir", str(out), input=CONTROLS_TO_STDERR)
    assert proc.returncode == 1, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].endswith(f"see {out}/job_0/stderr.log"), proc.stdout
    # As `cat -v` shows them; the tab to its tab stop, the colour dropped, U+0085 named.
    assert lines[1] == "    a^@b^Ac^?d      Tred<U+0085>N^LF\ufffde", proc.stdout
    assert lines[2].startswith("0 succeeded, 1 failed; logs in "), proc.stdout


def test_live_lines_show_control_bytes_as_the_tail_does(runs: Runs) -> None:
    proc = runs.run("--fake-gpus", "1", "--live", input=r"printf 'x\000y\n'")
    assert proc.returncode == 0, proc.stderr
    assert "[0]| x^@y" in proc.stdout.splitlines(), proc.stdout


def test_a_yielded_command_refused_for_its_nul_shows_the_nul(runs: Runs) -> None:
    (runs.cwd / "make_jobs.py").write_text('def yielder():\n    yield "echo a\\0b\\x01c"\n')
    proc = runs.run("--fake-gpus", "1", "--yielder", "make_jobs.py")
    assert proc.returncode == 1, proc.stderr
    refusal = "a NUL byte in command: remove it (no program can receive it)"
    assert f"[0] could not run: echo a^@b^Ac: {refusal}" in proc.stdout.splitlines(), proc.stdout


def test_an_output_dir_with_a_newline_is_named_on_one_line_as_a_shell_reads_it(
    runs: Runs,
) -> None:
    out = runs.root / "out\nx y"
    proc = runs.run("--fake-gpus", "1", "--output-dir", str(out), input="exit 4\n")
    assert proc.returncode == 1, proc.stderr
    lines = proc.stdout.splitlines()
    word = f"$'{runs.root}/out\\nx y'"
    assert lines[-1] == f"0 succeeded, 1 failed; logs in {word}", proc.stdout
    failed = next(line for line in lines if line.startswith("[0] failed"))
    assert failed.endswith(f"see $'{runs.root}/out\\nx y/job_0/stderr.log'"), proc.stdout
    # What it names is the folder itself: bash reads the word back as the path.
    said = lines[-1].partition("; logs in ")[2]
    read_back = subprocess.run(["bash", "-c", f"printf %s {said}"], capture_output=True)
    assert read_back.stdout == str(out).encode()
    assert Path(out, "job_0", "stderr.log").is_file()


def test_a_job_file_named_like_an_option_says_how_to_pass_it(runs: Runs) -> None:
    (runs.cwd / "-jobs.txt").write_text("true\n")
    proc = runs.run("--fake-gpus", "1", "-jobs.txt")
    assert proc.returncode == 2, proc.stdout
    assert proc.stderr.splitlines() == [
        "gpuherd: error: -jobs.txt names a file, but its leading '-' makes it read as "
        "options: give it after -- (gpuherd run -- -jobs.txt) or as ./-jobs.txt "
        "(see gpuherd run --help)"
    ]
    assert not (runs.cwd / "herd_runs").exists()  # nothing ran
    for ways in (["--", "-jobs.txt"], ["./-jobs.txt"]):  # and each way it names works
        proc = runs.run("--fake-gpus", "1", "-q", *ways)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.startswith("1 succeeded, 0 failed; logs in "), proc.stdout


def test_gpu_hogs_job_file_option_takes_a_file_named_like_an_option(runs: Runs) -> None:
    # --job_file names the file: it runs, as `run -- -jobs.txt` does ("No such option '-j'").
    (runs.cwd / "-jobs.txt").write_text("true\n")
    for args in (["--job_file", "-jobs.txt"], ["--job_file=-jobs.txt"]):
        proc = runs.run("--fake-gpus", "1", "-q", *args)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.startswith("1 succeeded, 0 failed; logs in "), proc.stdout


def test_an_unknown_option_that_is_no_file_is_still_said_as_click_says_it(runs: Runs) -> None:
    proc = runs.run("--fake-gpus", "1", "-jobs.txt")
    assert proc.returncode == 2
    assert "No such option '-j'" in proc.stderr, proc.stderr


def test_an_output_dir_that_is_not_utf8_is_refused_once_before_anything_runs(
    runs: Runs,
) -> None:
    # Each job was refused with a line of its own ("could not run"), the folder made.
    out = os.fsdecode(bytes(runs.root / "out") + b"\xff")
    proc = runs.run("--fake-gpus", "1", "--output-dir", out, input="true\ntrue\n")
    assert proc.returncode == 2, proc.stdout
    word = f"$'{runs.root}/out\\xff'"
    assert proc.stderr.splitlines() == [
        f"gpuherd: error: --output-dir {word}: not UTF-8: give a name in UTF-8 "
        "(see gpuherd run --help)"
    ]
    assert proc.stdout == ""
    assert not os.path.exists(out)


def test_a_gpu_file_saved_with_a_byte_order_mark_is_read(runs: Runs) -> None:
    # Windows editors write one: it was refused as "invalid GPU index '\ufeff0'".
    (runs.cwd / "gpus.txt").write_bytes(b"\xef\xbb\xbf0,1\r\n# two GPUs\r\n")
    proc = runs.run("--fake-gpus", "2", "-q", "--gpu-file", "gpus.txt", input="true\n")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0] == "--gpu-file gpus.txt: using GPUs 0,1", proc.stdout


def test_an_output_dir_refused_is_named_on_one_line_too(runs: Runs) -> None:
    (runs.cwd / "file").write_text("")
    proc = runs.run("--fake-gpus", "1", "--output-dir", "file/a\nb", input="true\n")
    assert proc.returncode == 1, proc.stdout
    assert proc.stderr.splitlines() == [
        "gpuherd: error: --output-dir $'file/a\\nb': cannot create it: Not a directory; give "
        "a folder you can write to"
    ]


def test_a_gpu_file_is_named_on_one_line(runs: Runs) -> None:
    proc = runs.run("--fake-gpus", "2", "--gpu-file", "gpus\n.txt", input="true\n")
    assert proc.returncode == 2, proc.stdout  # a bad option's value (it was 1)
    assert proc.stderr.splitlines() == [
        "gpuherd: error: --gpu-file $'gpus\\n.txt': cannot read it (No such file or directory): "
        "give a text file of GPU indices, such as 0,1 (see gpuherd run --help)"
    ]
