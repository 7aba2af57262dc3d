"""`gpuherd run` through the installed console script: what users of simple_gpu_scheduler and
gpu-hog type, what they see, and every kind of bad input (one error line, no traceback, no job).

Jobs are real processes that record what they saw (see `Probe` in recording_jobs.py).
"""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import GPUHERD_BIN, Probe, Runs, on_a_terminal

REPO = Path(__file__).resolve().parents[2]
ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]")
STARTED = re.compile(r"^\[(\d+)\] started on GPUs? ([\d,]+): (.*)$")


def job_folders(out: Path) -> list[str]:
    return sorted(p.name for p in out.iterdir() if p.is_dir()) if out.exists() else []


def assert_one_error_line(proc: subprocess.CompletedProcess[str], *names: str) -> str:
    """A mistake: non-zero exit, one `gpuherd: error:` line naming what was wrong."""
    assert proc.returncode != 0, proc.stdout
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("gpuherd: error: "), lines[0]
    for name in names:
        assert name in lines[0], lines[0]
    return lines[0]


# ---- the README examples -------------------------------------------------------------------


@pytest.mark.parametrize("gpus", [["0", "1", "2"], ["0,1,2"]], ids=["spaces", "commas"])
def test_simple_gpu_scheduler_example_runs_three_jobs_on_three_distinct_gpus(
    runs: Runs, probe: Probe, gpus: list[str]
) -> None:
    # `simple_gpu_scheduler --gpus 0 1 2 < gpu_commands.txt`; each job waits until all three
    # have started, so they must run at once, on three different GPUs.
    lines = [probe.cmd(f"run_{n}", barrier=3) for n in (1, 2, 3)]
    out = runs.root / "out"
    proc = runs.run("--gpus", *gpus, "--output-dir", str(out), input="\n".join(lines) + "\n")
    assert proc.returncode == 0, proc.stderr + proc.stdout
    assert "Traceback" not in proc.stderr
    seen = probe.by_name()
    assert sorted(seen) == ["run_1", "run_2", "run_3"]
    assert all(r["exit"] == 0 for r in seen.values())
    assert sorted(r["gpus"] for r in seen.values()) == ["0", "1", "2"]
    # What the terminal said matches what the jobs saw.
    started = [m.groups() for m in map(STARTED.match, proc.stdout.splitlines()) if m]
    assert sorted(started) == [(str(n), seen[f"run_{n + 1}"]["gpus"], lines[n]) for n in range(3)]
    assert proc.stdout.splitlines()[-1] == f"3 succeeded, 0 failed; logs in {out}"
    assert job_folders(out) == ["job_0", "job_1", "job_2"]


def test_readme_try_it_example_succeeds(runs: Runs) -> None:
    # `gpuherd run --fake-gpus 2 examples/commands.txt`, from the repository root.
    out = runs.root / "runs"
    proc = runs.run("--fake-gpus", "2", "--output-dir", str(out), "examples/commands.txt", cwd=REPO)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    assert proc.stdout.splitlines()[-1] == f"4 succeeded, 0 failed; logs in {out}"
    assert job_folders(out) == ["job_0", "job_1", "job_2", "job_3"]
    for n in range(4):
        folder = out / f"job_{n}"
        assert (folder / "SUCCESS").exists() and not (folder / "FAILURE").exists()
        assert (folder / "metrics.json").exists()  # the toy wrote into $GPUHERD_JOB_DIR
    assert "short run done" in (out / "job_3" / "stdout.log").read_text()  # && ran


@pytest.mark.parametrize("dash", [[], ["-"]], ids=["stdin", "dash-is-stdin"])
def test_python_dash_m_gpuherd_run_works_too(runs: Runs, probe: Probe, dash: list[str]) -> None:
    out = runs.root / "out"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "gpuherd",
            "run",
            "--fake-gpus",
            "1",
            "--output-dir",
            str(out),
            *dash,
        ],
        input=probe.cmd("only") + "\n",
        cwd=runs.cwd,
        env=runs.env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert list(probe.by_name()) == ["only"]


def test_space_separated_gpus_then_a_job_file(runs: Runs, probe: Probe) -> None:
    # `gpuherd run --gpus 0 1 jobs.txt`: the indices end where the file name begins.
    jobs = runs.root / "jobs.txt"
    jobs.write_text("".join(probe.cmd(n, barrier=2) + "\n" for n in "ab"))
    proc = runs.run("--gpus", "0", "1", str(jobs), "--output-dir", str(runs.root / "out"))
    assert proc.returncode == 0, proc.stderr
    assert sorted(r["gpus"] for r in probe.by_name().values()) == ["0", "1"]


def test_a_gpu_hog_command_line_runs_as_it_is(runs: Runs, probe: Probe) -> None:
    # `hog --job_file foo.txt --gpus 1,2,3`, with gpu-hog's other spellings too.
    jobs = runs.root / "foo.txt"
    jobs.write_text("".join(probe.cmd(n, barrier=2) + "\n" for n in "ab"))
    out = runs.root / "out"
    proc = runs.run("--job_file", str(jobs), "--gpus", "0,1", f"--output_dir={out}")
    assert proc.returncode == 0, proc.stderr
    assert sorted(r["gpus"] for r in probe.by_name().values()) == ["0", "1"]
    assert sorted(p.name for p in out.iterdir()) == ["job_0", "job_1"]
    (runs.root / "y.py").write_text(f"def yielder():\n    yield {probe.cmd('c')!r}\n")
    proc = runs.run(
        "--job_yielder", str(runs.root / "y.py"), "--gpus", "0", "--output_dir", str(out)
    )
    assert proc.returncode == 0, proc.stderr
    assert "c" in probe.by_name()


def test_gpus_per_job_0_runs_cpu_only_jobs(runs: Runs, probe: Probe) -> None:
    # More than the one GPU, all at once; more than one per core too, which --max-parallel
    # allows (tests/integration/test_cpu_jobs.py: without it, one per core).
    text = "".join(probe.cmd(n, barrier=3) + "\n" for n in "abc")
    proc = runs.run(
        "--fake-gpus",
        "1",
        "--gpus-per-job",
        "0",
        "--max-parallel",
        "3",
        "--output-dir",
        str(runs.root / "out"),
        input=text,
    )
    assert proc.returncode == 0, proc.stderr
    assert [r["gpus"] for r in probe.by_name().values()] == ["", "", ""]
    assert "[0] started on no GPU: " in proc.stdout


def test_a_job_on_several_gpus_says_gpus(runs: Runs, probe: Probe) -> None:
    # It said "started on GPU 0,1".
    proc = runs.run(
        "--fake-gpus", "2", "--gpus-per-job", "2", "--output-dir", str(runs.root / "out"),
        input=probe.cmd("a") + "\n",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0] == f"[0] started on GPUs 0,1: {probe.cmd('a')}"
    assert probe.by_name()["a"]["gpus"] == "0,1"


@pytest.mark.skipif(
    shutil.which("nvidia-smi") is not None, reason="a GPU driver is installed: auto-detects"
)
def test_without_gpu_options_and_no_driver_it_says_what_to_pass(runs: Runs, probe: Probe) -> None:
    out = runs.root / "out"
    proc = runs.run("--output-dir", str(out), input=probe.cmd("never") + "\n")
    assert_one_error_line(proc, "--gpus", "--fake-gpus")
    assert not out.exists()
    assert not probe.started("never")


# ---- output: folders, lines, state -----------------------------------------------------------


def test_default_output_dir_is_herd_runs_timestamp_in_the_working_folder(
    runs: Runs, probe: Probe
) -> None:
    proc = runs.run("--fake-gpus", "1", input=probe.cmd("a") + "\n")
    assert proc.returncode == 0, proc.stderr
    (stamp,) = list((runs.cwd / "herd_runs").iterdir())
    assert re.fullmatch(r"\d{8}-\d{6}", stamp.name), stamp.name
    assert (stamp / "job_0" / "SUCCESS").exists()
    assert probe.by_name()["a"]["job_dir"] == str(stamp / "job_0")
    assert proc.stdout.splitlines()[-1].endswith(f"logs in {stamp}")


def test_a_run_never_takes_the_default_folder_of_a_run_started_the_same_second(
    runs: Runs, probe: Probe
) -> None:
    # Taken already: the folders of every second this run could start in (two runs started
    # together used to share one and write into each other's job folders).
    now = time.time()
    taken = [time.strftime("%Y%m%d-%H%M%S", time.localtime(now + s)) for s in range(-1, 30)]
    for name in taken:
        (runs.cwd / "herd_runs" / name).mkdir(parents=True, exist_ok=True)
    proc = runs.run("--fake-gpus", "1", input=probe.cmd("a") + "\n")
    assert proc.returncode == 0, proc.stderr
    (fresh,) = [p for p in (runs.cwd / "herd_runs").iterdir() if any(p.iterdir())]
    assert fresh.name.endswith("-2") and fresh.name.removesuffix("-2") in taken, fresh.name
    assert probe.by_name()["a"]["job_dir"] == str(fresh / "job_0")


def test_plain_lines_when_not_a_terminal_and_status_1_when_a_job_fails(
    runs: Runs, probe: Probe
) -> None:
    out = runs.root / "out"
    lines = [probe.cmd("good"), probe.cmd("bad", exit=3)]
    proc = runs.run("--fake-gpus", "1", "--output-dir", str(out), input="\n".join(lines) + "\n")
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "\x1b" not in proc.stdout  # no progress bar, no colours in a pipe
    text = proc.stdout.splitlines()
    assert text[0] == f"[0] started on GPU 0: {lines[0]}"
    assert re.fullmatch(r"\[0\] succeeded in [\d.]+s", text[1]), text[1]
    assert f"[1] started on GPU 0: {lines[1]}" in text
    failed = [line for line in text if line.startswith("[1] failed")]
    assert len(failed) == 1 and f"see {out / 'job_1'}/stderr.log" in failed[0], text
    assert "exit 3" in failed[0]
    assert text[-1] == f"1 succeeded, 1 failed; logs in {out}"
    assert (out / "job_0" / "SUCCESS").exists() and not (out / "job_0" / "FAILURE").exists()
    assert (out / "job_1" / "FAILURE").exists() and not (out / "job_1" / "SUCCESS").exists()


def test_a_failure_shows_the_last_stderr_lines_of_its_last_attempt(runs: Runs) -> None:
    """Up to 5 lines, as a terminal shows them (a progress bar is its last drawing), for the
    first 10 failures; the rest get their one line (a sweep gone wrong must stay readable)."""
    out = runs.root / "out"
    script = (
        "echo \"warning $N\" >&2; printf 'bar\\r50%%\\r100%%\\n' >&2; "
        'echo "ValueError: job $N attempt $GPUHERD_ATTEMPT" >&2; exit 1'
    )
    lines = [f"N={n}; {script}" for n in range(12)]
    proc = runs.run(
        "--fake-gpus", "2", "-q", "--retries", "1", "--output-dir", str(out),
        input="\n".join(lines) + "\n",
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    text = proc.stdout.splitlines()
    failures = [
        i for i, line in enumerate(text) if re.match(r"\[\d+\] failed \(exit 1\) after", line)
    ]
    assert len(failures) == 12, text
    for shown, at in enumerate(failures):
        number = int(text[at][1 : text[at].index("]")])
        assert text[at].endswith(f"see {out / f'job_{number}'}/attempt-2/stderr.log"), text[at]
        tail = text[at + 1 : at + 4]
        expected = [f"    warning {number}", "    100%", f"    ValueError: job {number} attempt 2"]
        assert (tail == expected) == (shown < 10), (shown, tail)


def test_quiet_prints_only_what_went_wrong_and_the_summary(runs: Runs, probe: Probe) -> None:
    out = runs.root / "out"
    lines = [probe.cmd("good"), probe.cmd("bad", exit=3), probe.cmd("also-good")]
    proc = runs.run("--fake-gpus", "2", "-q", "--output-dir", str(out), input="\n".join(lines))
    assert proc.returncode == 1, proc.stderr
    failed, summary = proc.stdout.splitlines()
    assert failed.startswith("[1] failed (exit 3) after "), failed
    assert failed.endswith(f"see {out / 'job_1'}/stderr.log"), failed
    assert summary == f"2 succeeded, 1 failed; logs in {out}"
    assert sorted(probe.by_name()) == ["also-good", "bad", "good"]  # all three ran


def test_progress_bar_on_a_terminal(runs: Runs, probe: Probe) -> None:
    jobs = runs.root / "jobs.txt"
    jobs.write_text(probe.cmd("a") + "\n" + probe.cmd("b") + "\n")
    out = runs.root / "out"
    status, seen = on_a_terminal(
        [GPUHERD_BIN, "run", "--fake-gpus", "2", "--output-dir", str(out), str(jobs)],
        runs.env,
        runs.cwd,
    )
    text = ANSI.sub(b"", seen).decode()
    assert status == 0, text
    assert "gpuherd run" in text and "2/2" in text  # the live bar, counting the jobs
    assert "[0] started on GPU" in text and "[1] succeeded in" in text
    assert f"2 succeeded, 0 failed; logs in {out}" in text
    assert "Traceback" not in text


def test_run_state_dies_with_the_run_unless_kept(runs: Runs, probe: Probe) -> None:
    gone = runs.run(
        "--fake-gpus", "1", "--output-dir", str(runs.root / "a"), input=probe.cmd("a") + "\n"
    )
    assert gone.returncode == 0, gone.stderr
    assert list(runs.tmp.iterdir()) == []  # the temporary database went with the run
    assert not (runs.root / "a" / "herd.db").exists()

    kept = runs.run(
        "--fake-gpus",
        "1",
        "--output-dir",
        str(runs.root / "b"),
        "--keep-state",
        input=probe.cmd("b") + "\n",
    )
    assert kept.returncode == 0, kept.stderr
    assert list(runs.tmp.iterdir()) == []
    db = runs.root / "b" / "herd.db"
    with sqlite3.connect(db) as connection:
        assert connection.execute("select count(*) from jobs").fetchone() == (1,)
    connection.close()


# ---- --yielder ---------------------------------------------------------------------------------


def write_yielder(runs: Runs, body: str, name: str = "make_jobs.py") -> Path:
    path = runs.root / name
    path.write_text(body)
    return path


def test_yielder_strings_and_dicts_all_run_with_their_env_gpus_and_name(
    runs: Runs, probe: Probe
) -> None:
    yielder = write_yielder(
        runs,
        f"""
def yielder():
    yield {probe.cmd("plain")!r}
    yield {{"command": {probe.cmd("fancy")!r}, "name": "fancy-job", "gpus": 2,
           "env": {{"PROBE_LR": "0.1", "PROBE_N": 3}}}}
    for n in range(2):
        yield {probe.cmd("gen")!r} + "_" + str(n)
""",
    )
    out = runs.root / "out"
    proc = runs.run("--fake-gpus", "2", "--output-dir", str(out), "--yielder", str(yielder))
    assert proc.returncode == 0, proc.stderr + proc.stdout
    seen = probe.by_name()
    assert sorted(seen) == ["fancy", "gen_0", "gen_1", "plain"]
    assert seen["fancy"]["probe_env"] == {"PROBE_LR": "0.1", "PROBE_N": "3"}
    assert seen["plain"]["probe_env"] == {}  # one job's env is not another's
    assert sorted(seen["fancy"]["gpus"].split(",")) == ["0", "1"]
    assert len(seen["plain"]["gpus"].split(",")) == 1
    info = json.loads((out / "job_1" / "job.json").read_text())
    assert info["name"] == "fancy-job"
    assert info["env_overrides"] == {"PROBE_LR": "0.1", "PROBE_N": "3"}


def test_yielder_that_raises_gets_one_line_and_starts_nothing(runs: Runs, probe: Probe) -> None:
    yielder = write_yielder(
        runs,
        f"""
def yielder():
    yield {probe.cmd("first")!r}
    raise RuntimeError("the sweep config is broken")
""",
    )
    out = runs.root / "out"
    proc = runs.run("--fake-gpus", "1", "--output-dir", str(out), "--yielder", str(yielder))
    assert_one_error_line(proc, "the sweep config is broken")
    assert job_folders(out) == []
    assert not probe.started("first")


@pytest.mark.parametrize(
    ("body", "names"),
    [
        pytest.param(None, ["missing.py", "no such file"], id="missing-file"),
        pytest.param("def make():\n    yield 'true'\n", ["yielder()"], id="no-yielder-function"),
        pytest.param("yielder = 3\n", ["yielder is 3 (int), not a function"], id="not-a-function"),
        pytest.param("def yielder(:\n", ["SyntaxError"], id="syntax-error"),
        pytest.param("raise ImportError('no torch')\n", ["no torch"], id="import-fails"),
        pytest.param("def yielder():\n    yield 42\n", ["int", "command"], id="yields-an-int"),
        # The keys a dict may give are named: "unknown keys: gpu" alone did not say 'gpus'.
        pytest.param(
            "def yielder():\n    yield {'command': 'true', 'gpu': 1}\n",
            ["unknown keys: gpu: yield a command string or a dict with 'command'", "'gpus'"],
            id="unknown-key",
        ),
        # A dict without 'command' was "item 0 is dict: yield ... a dict with 'command'".
        pytest.param(
            "def yielder():\n    yield {'cmd': 'true'}\n",
            ["yielder item 0 is a dict without 'command': yield a command string or a dict"],
            id="dict-without-command",
        ),
        # Taken as they were: a name of 5 failed with a traceback, a command of 5 ran as `5`.
        pytest.param(
            "def yielder():\n    yield 'true'\n    yield {'command': 'echo hi', 'name': 5}\n",
            ["yielder item 1: 'name' is int: give a string"],
            id="name-an-int",
        ),
        pytest.param(
            "def yielder():\n    yield {'command': 5}\n",
            ["yielder item 0: 'command' is int: give the command as a string"],
            id="command-an-int",
        ),
        pytest.param(
            "def yielder():\n    yield {'command': 'true', 'env': {'A': None}}\n",
            ["yielder item 0: 'env' value of 'A' is NoneType: give a string or a number"],
            id="env-value-none",
        ),
        # Was a job that could not run, told `gpus (--gpus) must be between 0 and 64`: in
        # `gpuherd run`, --gpus is the list of GPUs to use.
        pytest.param(
            "def yielder():\n    yield {'command': 'true', 'gpus': -1}\n",
            ["yielder item 0: 'gpus' is -1: give a number of GPUs from 0 to 64"],
            id="gpus-negative",
        ),
        pytest.param(
            "def yielder():\n    yield {'command': 'true', 'gpus': 65}\n",
            ["yielder item 0: 'gpus' is 65: give a number of GPUs from 0 to 64"],
            id="gpus-too-many",
        ),
    ],
)
def test_bad_yielder_gets_one_clear_line(runs: Runs, body: str | None, names: list[str]) -> None:
    path = runs.root / "missing.py" if body is None else write_yielder(runs, body)
    out = runs.root / "out"
    proc = runs.run("--fake-gpus", "1", "--output-dir", str(out), "--yielder", str(path))
    assert_one_error_line(proc, *names)
    assert job_folders(out) == []


def test_bad_yielder_message_names_the_file_once(runs: Runs) -> None:
    proc = runs.run("--fake-gpus", "1", "--yielder", "nothere.py")
    line = assert_one_error_line(proc, "nothere.py")
    assert line.count("nothere.py") == 1, line


def test_yielded_job_that_can_never_fit_is_counted_apart_with_its_reason(
    runs: Runs, probe: Probe
) -> None:
    # Refused before it was queued: not a job that failed, but one that could not run here.
    yielder = write_yielder(
        runs,
        f"""
def yielder():
    yield {{"command": {probe.cmd("huge")!r}, "gpus": 3}}
    yield {probe.cmd("fine")!r}
    yield {probe.cmd("broken", exit=2)!r}
""",
    )
    out = runs.root / "out"
    proc = runs.run("--fake-gpus", "2", "--output-dir", str(out), "--yielder", str(yielder))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stdout.splitlines()
    # (The command may be cut short in the line: the probe's paths are long under xdist.)
    refused = [line for line in lines if line.startswith("[") and "could not run" in line]
    assert len(refused) == 1 and refused[0].startswith("[0] could not run: "), lines
    assert refused[0].endswith(
        "this job can never run: asks for 3 GPUs but gpuherd has only 2"
        ": give fewer gpus (--gpus-per-job), at most 2"  # (run's --gpus names the GPUs)
    )
    assert lines[-1] == f"1 succeeded, 1 failed, 1 could not run; logs in {out}"
    assert sorted(probe.by_name()) == ["broken", "fine"]
    assert job_folders(out) == ["job_1", "job_2"]


def test_a_run_whose_every_job_could_not_run_says_so_and_fails(runs: Runs, probe: Probe) -> None:
    # Each job's own request (a run-wide --mem that large is refused before any job runs:
    # test_run_refused_up_front.py).
    yielder = write_yielder(
        runs,
        f"""
def yielder():
    yield {{"command": {probe.cmd("a")!r}, "gpus": 3}}
    yield {{"command": {probe.cmd("b")!r}, "gpus": 3}}
""",
    )
    out = runs.root / "out"
    proc = runs.run("--fake-gpus", "2", "--output-dir", str(out), "--yielder", str(yielder))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert [line.split(":")[0] for line in lines[:-1]] == [
        "[0] could not run",
        "[1] could not run",
    ], lines
    assert all("asks for 3 GPUs but gpuherd has only 2" in line for line in lines[:-1]), lines
    assert lines[-1] == f"0 succeeded, 0 failed, 2 could not run; logs in {out}"
    assert probe.records() == []


def test_yielder_yielding_nothing_says_so(runs: Runs) -> None:
    path = write_yielder(runs, "def yielder():\n    return iter(())\n")
    out = runs.root / "out"
    proc = runs.run("--fake-gpus", "1", "--output-dir", str(out), "--yielder", str(path))
    assert proc.returncode == 0, proc.stderr
    assert "nothing to run" in proc.stdout
    assert "Traceback" not in proc.stderr
    assert job_folders(out) == []


# ---- bad input ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text", ["", "\n\n", "# only a comment\n\n   \n# another\n"], ids=["empty", "blank", "comments"]
)
def test_empty_input_runs_nothing_and_says_so(runs: Runs, text: str) -> None:
    out = runs.root / "out"
    proc = runs.run("--fake-gpus", "2", "--output-dir", str(out), input=text)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "nothing to run" in proc.stdout
    assert job_folders(out) == []


def test_empty_job_file_runs_nothing_and_says_so(runs: Runs) -> None:
    jobs = runs.root / "jobs.txt"
    jobs.write_text("")
    proc = runs.run("--fake-gpus", "2", "--output-dir", str(runs.root / "out"), str(jobs))
    assert proc.returncode == 0, proc.stderr
    assert "nothing to run" in proc.stdout


def test_unreadable_job_files_get_one_line(runs: Runs) -> None:
    missing = runs.root / "nope.txt"
    proc = runs.run("--fake-gpus", "1", "--output-dir", str(runs.root / "out"), str(missing))
    assert_one_error_line(proc, "nope.txt")
    assert job_folders(runs.root / "out") == []

    folder = runs.root / "a_folder"
    folder.mkdir()
    proc = runs.run("--fake-gpus", "1", "--output-dir", str(runs.root / "out"), str(folder))
    assert_one_error_line(proc, "a_folder")
    assert job_folders(runs.root / "out") == []


def test_a_job_file_that_is_not_text_is_refused_before_any_job_starts(
    runs: Runs, probe: Probe
) -> None:
    # Its lines ran in sh, garbage and all; `submit --file` refused it already.
    jobs = runs.root / "jobs.bin"
    jobs.write_bytes(probe.cmd("first").encode() + b"\n\x7fELF\xff\xfe\x00\n")
    out = runs.root / "out"
    proc = runs.run("--fake-gpus", "1", "--output-dir", str(out), str(jobs))
    assert_one_error_line(proc, f"{jobs} is not text (line 2 holds a NUL byte, as a program")
    assert proc.returncode == 1
    assert not out.exists()
    assert not probe.started("first")


def test_a_byte_order_mark_does_not_become_part_of_the_first_command(
    runs: Runs, probe: Probe
) -> None:
    jobs = runs.root / "jobs.txt"
    jobs.write_bytes(b"\xef\xbb\xbf" + probe.cmd("first").encode() + b"\r\n")
    proc = runs.run("--fake-gpus", "1", "--output-dir", str(runs.root / "out"), str(jobs))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines()[0] == f"[0] started on GPU 0: {probe.cmd('first')}"
    assert sorted(probe.by_name()) == ["first"]


@pytest.mark.parametrize("source", ["<&-", "/dev/zero"], ids=["stdin-closed", "endless"])
def test_input_that_cannot_be_read_fails_the_run_without_calling_it_interrupted(
    runs: Runs, source: str
) -> None:
    # Both said "input stopped: " ('NoneType' object is not iterable, or nothing after the
    # memory ran out) and exited 130, as for a Ctrl-C.
    proc = subprocess.run(
        ["sh", "-c", f'exec "$0" run --fake-gpus 1 --output-dir out {source}', GPUHERD_BIN],
        cwd=runs.cwd,
        env=runs.env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    if source == "<&-":  # seen before anything starts
        assert proc.stderr == (
            "gpuherd: error: standard input is closed: give a job file, or pipe the jobs in "
            "(< jobs.txt)\n"
        )
        assert proc.stdout == ""
    else:  # a device is read as a stream: seen as it is read
        assert proc.stdout.splitlines()[0] == (
            "input stopped: /dev/zero: line 1 is longer than 128 KiB, more than a command can "
            "be: put it in a script file and run that"
        )
    assert list(runs.tmp.iterdir()) == []


def test_a_stream_stops_at_its_first_bad_line_and_the_run_fails(runs: Runs, probe: Probe) -> None:
    run = runs.start("--fake-gpus", "2", "--output-dir", str(runs.root / "out"))
    run.write(probe.cmd("first", wait="go") + "\n")
    run.expect_line("[0] started")
    assert run.proc.stdin is not None
    run.proc.stdin.write(b"echo \xff\n" + probe.cmd("late").encode() + b"\n")
    run.proc.stdin.flush()
    said = run.expect_line("input stopped: ")
    assert said == (
        "input stopped: standard input is not UTF-8 text (byte 0xff at line 2): if it holds "
        "commands, save it as UTF-8 (from Latin-1: iconv -f LATIN1 -t UTF-8)"
    )
    probe.touch("go")  # the job that runs goes on to its end
    status, rest, err = run.finish()
    assert status == 1, rest + err  # a failure, not an interruption (130)
    assert "[0] succeeded" in rest
    assert sorted(probe.by_name()) == ["first"]
    assert not probe.started("late")


BAD_OPTIONS = [
    pytest.param(["--gpus", "a,b"], ["'a'"], id="gpus-not-numbers"),
    pytest.param(["--gpus", "0,-1"], ["-1"], id="gpus-negative"),
    # An OverflowError from SQLite, after the run's state folder was made (and left).
    pytest.param(["--gpus", "0", "99999999999999999999"], ["at most 4095"], id="gpus-too-big"),
    pytest.param(["--gpus", "0,1", "--gpus-per-job", "5"], ["5", "2"], id="gpus-per-job-too-many"),
    pytest.param(
        ["--fake-gpus", "2", "--gpus-per-job", "3"],
        ["--gpus-per-job 3, but only 2 GPUs are given: give more, or fewer per job"],
        id="fake-gpus-per-job",
    ),
    pytest.param(
        ["--fake-gpus", "1", "--gpus-per-job", "2"],
        ["--gpus-per-job 2, but only 1 GPU is given"],  # (was "1 GPU(s) are given")
        id="one-gpu-per-job",
    ),
    pytest.param(["--gpus", "0", "--fake-gpus", "1"], ["--fake-gpus"], id="gpus-and-fake"),
    pytest.param(["--fake-gpus", "zero"], ["zero"], id="bad-fake-spec"),
    pytest.param(["--fake-gpus", "1", "--timeout", "2x"], ["2x"], id="bad-timeout"),
    pytest.param(["--fake-gpus", "1", "--retries", "-1"], ["-1"], id="negative-retries"),
    pytest.param(["--fake-gpus", "1", "--max-parallel", "0"], ["0"], id="max-parallel-0"),
    pytest.param(["--fake-gpus", "1", "jobs.txt", "more.txt"], ["more.txt"], id="two-files"),
    pytest.param(["--fake-gpus", "1", "--yielder", "y.py", "jobs.txt"], ["--yielder"], id="both"),
    pytest.param(["--fake-gpus", "1", "--times-from", "."], ["--order"], id="times-alone"),
    pytest.param(
        ["--fake-gpus", "1", "--order", "longest-first", "--times-from", "nope"],
        ["--times-from nope"],
        id="times-from-missing",
    ),
    pytest.param(["--fake-gpus", "1", "--order", "shortest"], ["shortest"], id="bad-order"),
    pytest.param(
        ["--fake-gpus", "1", "--prefix", "p" * 201],
        ["--prefix is too long (201 bytes): give at most 200 bytes"],
        id="prefix-too-long",
    ),
    pytest.param(  # 126 characters, 252 bytes: it said "at most 200 characters"
        ["--fake-gpus", "1", "--prefix", "é" * 126],
        ["--prefix is too long (252 bytes): give at most 200 bytes (a letter outside ASCII"],
        id="prefix-too-long-in-bytes",
    ),
    # GPU memory for jobs that get no GPU: refused, as `submit -g 0 --mem` is.
    pytest.param(
        ["--fake-gpus", "1", "--gpus-per-job", "0", "--mem", "1GiB"],
        ["--mem with --gpus-per-job 0: a CPU-only job gets no GPU memory"],
        id="cpu-only-mem",
    ),
    pytest.param(
        ["--fake-gpus", "1", "--mem", "10"], ["--mem 10 is 10 bytes: give a unit"], id="mem-unit"
    ),
    # Click said "'1.5' is not a valid integer range."
    pytest.param(
        ["--fake-gpus", "2", "--gpus-per-job", "1.5"],
        ["--gpus-per-job takes a whole number of GPUs, not '1.5': e.g. --gpus-per-job 2"],
        id="gpus-per-job-fraction",
    ),
    # submit's output files typed to run: click said "No such option '-o'." and, for
    # --output, "Did you mean '--output-dir'?", which takes a folder, not a file.
    pytest.param(
        ["--fake-gpus", "1", "-o", "x-%j.log", "jobs.txt"],
        ["No such option '-o': use --output-dir DIR: gpuherd run keeps each job's stdout"],
        id="submit-output",
    ),
    pytest.param(
        ["--fake-gpus", "1", "--error=x.log", "jobs.txt"],
        ["No such option '--error': use --output-dir DIR", "are gpuherd submit's"],
        id="submit-error",
    ),
]


@pytest.mark.parametrize(("args", "names"), BAD_OPTIONS)
def test_bad_options_get_one_line_before_any_job_starts(
    runs: Runs, probe: Probe, args: list[str], names: list[str]
) -> None:
    (runs.cwd / "jobs.txt").write_text(probe.cmd("never") + "\n")
    (runs.cwd / "more.txt").write_text(probe.cmd("never") + "\n")
    (runs.cwd / "y.py").write_text(f"def yielder():\n    yield {probe.cmd('never')!r}\n")
    out = runs.root / "out"
    proc = runs.run(*args, "--output-dir", str(out), input=probe.cmd("never") + "\n")
    line = assert_one_error_line(proc, *names)
    # A usage mistake, as click's own are: exit 2 and the command's --help named (the ones
    # checked by hand, --prefix, --times-from, --gpus-per-job, were exit 1 without it).
    assert proc.returncode == 2 and line.endswith(" (see gpuherd run --help)"), line
    assert proc.stdout == ""
    assert not out.exists()
    assert list(runs.tmp.iterdir()) == []  # no state folder either
    assert not probe.started("never")


# ---- job folders stay in --output-dir; bad folders; what reaches the terminal -----------------


@pytest.mark.parametrize(
    "prefix",
    [
        pytest.param("../victim", id="up"),
        pytest.param("{root}/abs/victim", id="absolute"),
        pytest.param("a/b", id="sub-folder"),
        pytest.param(".", id="dot"),
        pytest.param("..", id="dot-dot"),
    ],
)
def test_prefix_that_is_a_path_is_refused_and_writes_nothing(
    runs: Runs, probe: Probe, prefix: str
) -> None:
    # `--prefix ../victim` put job 0 in out/../victim0, overwriting what was there.
    prefix = prefix.format(root=runs.root)
    victim = runs.root / "victim0"
    victim.mkdir()
    (victim / "stdout.log").write_text("precious\n")
    out = runs.root / "out"
    args = ["--fake-gpus", "2", "--output-dir", str(out), "--prefix", prefix]
    proc = runs.run(*args, input=probe.cmd("never") + "\n")
    assert_one_error_line(proc, f"--prefix {prefix}", "--output-dir")
    assert proc.returncode == 2  # a usage mistake (it was 1)
    assert proc.stdout == ""
    assert not out.exists()
    assert not probe.started("never")
    assert sorted(p.name for p in victim.iterdir()) == ["stdout.log"]
    assert (victim / "stdout.log").read_text() == "precious\n"
    assert not (runs.root / "abs").exists()
    assert not (runs.cwd / "a").exists()


def test_empty_prefix_names_job_folders_by_number_inside_output_dir(runs: Runs) -> None:
    out = runs.root / "out"
    proc = runs.run("--fake-gpus", "2", "--output-dir", str(out), "--prefix", "", input="true\n")
    assert proc.returncode == 0, proc.stderr + proc.stdout
    assert job_folders(out) == ["0"]


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        pytest.param("{file}/sub", "Not a directory", id="under-a-file"),
        pytest.param("/dev/null/x", "Not a directory", id="under-dev-null"),
        pytest.param("/proc/gpuherd-test", "No such file or directory", id="in-proc"),
    ],
)
def test_output_dir_that_cannot_be_made_gets_one_line_naming_it(
    runs: Runs, probe: Probe, make: str, reason: str
) -> None:
    file = runs.root / "a_file.txt"
    file.write_text("")
    folder = make.format(file=file)
    proc = runs.run("--fake-gpus", "2", "--output-dir", folder, input=probe.cmd("never") + "\n")
    assert_one_error_line(proc, f"--output-dir {folder}", reason)
    assert proc.stdout == ""
    assert not probe.started("never")


def test_empty_output_dir_is_refused_not_taken_as_the_working_folder(
    runs: Runs, probe: Probe
) -> None:
    proc = runs.run("--fake-gpus", "2", "--output-dir", "", input=probe.cmd("never") + "\n")
    assert_one_error_line(proc, "--output-dir is empty")
    assert proc.returncode == 2  # a usage mistake (it was 1)
    assert list(runs.cwd.iterdir()) == []
    assert not probe.started("never")


def test_escape_sequences_and_control_characters_in_commands_are_never_printed_raw(
    runs: Runs,
) -> None:
    # Colours, a terminal title (OSC) and a bell in a comment: shown, never replayed.
    jobs = runs.root / "jobs.txt"
    jobs.write_bytes(b"true # \x1b[31mRED\x1b[0m \x1b]0;TITLE\x07 end\n")
    proc = runs.run("--fake-gpus", "2", "--output-dir", str(runs.root / "out"), str(jobs))
    assert proc.returncode == 0, proc.stderr + proc.stdout
    shown = proc.stdout + proc.stderr
    assert not re.search(r"[\x00-\x09\x0b-\x1f\x7f]", shown), repr(shown)
    started = [line for line in proc.stdout.splitlines() if line.startswith("[0] started")]
    assert len(started) == 1 and "RED" in started[0] and "end" in started[0], shown
    # A NUL byte: the file is refused by its line before anything runs, the NUL not echoed.
    jobs.write_bytes(b"true # \x1b[31mRED\x1b[0m\necho a\x00b\n")
    proc = runs.run("--fake-gpus", "2", "--output-dir", str(runs.root / "out2"), str(jobs))
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    shown = proc.stdout + proc.stderr
    assert not re.search(r"[\x00-\x09\x0b-\x1f\x7f]", shown), repr(shown)
    assert "line 2 holds a NUL byte" in proc.stderr and "started" not in proc.stdout, shown


@pytest.mark.parametrize(
    ("body", "call"),
    [
        pytest.param("import sys\nsys.exit(3)\n", "sys.exit(3)", id="on-import"),
        pytest.param(
            "import sys\ndef yielder():\n    yield 'true'\n    sys.exit(3)\n",
            "sys.exit(3)",
            id="while-yielding",
        ),
        pytest.param(
            "def yielder():\n    raise SystemExit('stop\\nnow')\n",
            "sys.exit('stop\\nnow')",
            id="with-a-message",
        ),
    ],
)
def test_yielder_that_exits_gets_one_line_not_its_exit_status(
    runs: Runs, probe: Probe, body: str, call: str
) -> None:
    path = write_yielder(runs, body.replace("'true'", repr(probe.cmd("never"))))
    out = runs.root / "out"
    proc = runs.run("--fake-gpus", "1", "--output-dir", str(out), "--yielder", str(path))
    line = assert_one_error_line(proc, f"--yielder {path}", "exited", call)
    assert proc.returncode == 1, line
    assert job_folders(out) == []
    assert not probe.started("never")


def test_yielder_error_message_is_one_clean_line(runs: Runs) -> None:
    path = write_yielder(
        runs, "def yielder():\n    raise ValueError('bad\\nconfig \\x1b[31mred')\n"
    )
    proc = runs.run("--fake-gpus", "1", "--yielder", str(path))
    line = assert_one_error_line(proc, "bad", "config", "red")
    assert "\x1b" not in line
