"""A job's folder: its environment, outcome markers, job.json and log tails."""

from __future__ import annotations

import io
import json
import re
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuherd import jobfiles, log_text
from gpuherd.core.model import Attempt, Job, JobSpec, Outcome
from gpuherd.core.states import JobState, OutcomeKind

SUBMITTER_ENV = {
    "PATH": "/usr/bin:/bin",
    "HOME": "/home/u",
    "CONDA_PREFIX": "/opt/conda/envs/x",
    "CUDA_VISIBLE_DEVICES": "7",  # from the submitter's shell: must not leak through
    "CUDA_DEVICE_ORDER": "FASTEST_FIRST",
    "GPUHERD_TOKEN": "secret",
}


def _job(job_id: int, folder: str | None = None) -> Job:
    return Job(
        id=job_id, spec=JobSpec(command="true", cwd="/", folder=folder), state=JobState.QUEUED
    )


def test_a_job_with_its_own_folder_keeps_its_attempts_there(tmp_path: Path) -> None:
    layout = jobfiles.Layout.for_home(tmp_path / "home")
    job = _job(7, folder=str(tmp_path / "results" / "lr=0.1"))
    assert layout.job_dir(job) == tmp_path / "results" / "lr=0.1"
    assert layout.attempt_dir(job, 2) == tmp_path / "results" / "lr=0.1" / "attempt-2"


def make_job(
    home: Path,
    env: dict[str, str] | None = None,
    overrides: dict[str, str] | None = None,
    attempt: int = 1,
) -> tuple[Job, Attempt]:
    job = Job(
        id=12,
        spec=JobSpec(
            command="python train.py",
            cwd="/work",
            env=SUBMITTER_ENV if env is None else env,
            env_overrides=overrides or {},
            name="run",
        ),
        state=JobState.RUNNING,
        attempt=attempt,
    )
    att = Attempt(
        job_id=12,
        number=attempt,
        gpus=(2, 0),
        gpu_uuids=("GPU-2", "GPU-0"),
        dir=str(jobfiles.Layout.for_home(home).attempt_dir(_job(12), attempt)),
        host="box",
        started_at=100.0,
    )
    return job, att


# ---- paths ----------------------------------------------------------------------------------


def test_paths(tmp_path: Path) -> None:
    assert jobfiles.Layout.for_home(tmp_path).job_dir(_job(3)) == tmp_path / "jobs" / "3"
    assert (
        jobfiles.Layout.for_home(tmp_path).attempt_dir(_job(3), 2)
        == tmp_path / "jobs" / "3" / "attempt-2"
    )


# ---- job_env --------------------------------------------------------------------------------


def test_job_env_keeps_the_submitters_environment(tmp_path: Path) -> None:
    job, att = make_job(tmp_path)
    env = jobfiles.job_env(jobfiles.Layout.for_home(tmp_path), job, att)
    assert env["PATH"] == "/usr/bin:/bin"
    assert env["HOME"] == "/home/u"
    assert env["CONDA_PREFIX"] == "/opt/conda/envs/x"


def test_job_env_applies_overrides(tmp_path: Path) -> None:
    job, att = make_job(tmp_path, overrides={"HOME": "/scratch", "SEED": "3"})
    env = jobfiles.job_env(jobfiles.Layout.for_home(tmp_path), job, att)
    assert env["HOME"] == "/scratch"
    assert env["SEED"] == "3"
    assert env["PATH"] == "/usr/bin:/bin"


def test_job_env_sets_exact_gpu_identity(tmp_path: Path) -> None:
    job, att = make_job(tmp_path, overrides={"CUDA_VISIBLE_DEVICES": "5"})
    env = jobfiles.job_env(jobfiles.Layout.for_home(tmp_path), job, att)
    assert env["CUDA_VISIBLE_DEVICES"] == "2,0"
    assert env["CUDA_DEVICE_ORDER"] == "PCI_BUS_ID"


def test_job_env_without_gpus_has_empty_cuda_visible_devices(tmp_path: Path) -> None:
    job, att = make_job(tmp_path)
    att = Attempt(**{**att.__dict__, "gpus": (), "gpu_uuids": ()})
    env = jobfiles.job_env(jobfiles.Layout.for_home(tmp_path), job, att)
    assert "CUDA_VISIBLE_DEVICES" in env
    assert env["CUDA_VISIBLE_DEVICES"] == ""
    assert env["CUDA_DEVICE_ORDER"] == "PCI_BUS_ID"


def test_job_env_sets_gpuherd_variables(tmp_path: Path) -> None:
    job, att = make_job(tmp_path, attempt=3)
    env = jobfiles.job_env(jobfiles.Layout.for_home(tmp_path), job, att)
    assert env["GPUHERD_JOB_ID"] == "12"
    assert env["GPUHERD_ATTEMPT"] == "3"
    assert env["GPUHERD_JOB_DIR"] == str(tmp_path / "jobs" / "12")
    assert env["GPUHERD_ATTEMPT_DIR"] == str(tmp_path / "jobs" / "12" / "attempt-3")
    assert all(isinstance(v, str) for v in env.values())
    home, key = env["GPUHERD_ATTEMPT_KEY"].split(":", 1)
    assert key == "12:3" and len(home) == 12


def test_attempt_keys_tell_homes_and_runs_apart_and_last_across_restarts(tmp_path: Path) -> None:
    home = jobfiles.Layout.for_home(tmp_path / "home")
    assert home.attempt_key(3, 1) == jobfiles.Layout.for_home(tmp_path / "home").attempt_key(3, 1)
    assert home.attempt_key(3, 1) != jobfiles.Layout.for_home(tmp_path / "other").attempt_key(3, 1)
    one, two = (
        jobfiles.Layout.for_run(tmp_path / "out", "job_", tmp_path / name).attempt_key(1, 1)
        for name in ("run-a", "run-b")
    )
    assert one != two  # two runs into one output folder


def test_mplbackend_defaults_to_agg(tmp_path: Path) -> None:
    job, att = make_job(tmp_path, env={"PATH": "/bin"})
    assert jobfiles.job_env(jobfiles.Layout.for_home(tmp_path), job, att)["MPLBACKEND"] == "Agg"


def test_mplbackend_of_the_submitter_is_kept(tmp_path: Path) -> None:
    job, att = make_job(tmp_path, env={"PATH": "/bin", "MPLBACKEND": "TkAgg"})
    assert jobfiles.job_env(jobfiles.Layout.for_home(tmp_path), job, att)["MPLBACKEND"] == "TkAgg"
    job, att = make_job(tmp_path, env={"PATH": "/bin"}, overrides={"MPLBACKEND": "pdf"})
    assert jobfiles.job_env(jobfiles.Layout.for_home(tmp_path), job, att)["MPLBACKEND"] == "pdf"


def test_gpuherd_token_never_reaches_the_job(tmp_path: Path) -> None:
    job, att = make_job(tmp_path)
    assert "GPUHERD_TOKEN" not in jobfiles.job_env(jobfiles.Layout.for_home(tmp_path), job, att)
    job, att = make_job(tmp_path, env={"PATH": "/bin"}, overrides={"GPUHERD_TOKEN": "x"})
    assert "GPUHERD_TOKEN" not in jobfiles.job_env(jobfiles.Layout.for_home(tmp_path), job, att)


def test_job_env_does_not_change_the_spec(tmp_path: Path) -> None:
    env = dict(SUBMITTER_ENV)
    job, att = make_job(tmp_path, env=env, overrides={"A": "1"})
    jobfiles.job_env(jobfiles.Layout.for_home(tmp_path), job, att)
    assert env == SUBMITTER_ENV
    assert dict(job.spec.env_overrides) == {"A": "1"}


# ---- prepare and markers --------------------------------------------------------------------


def test_prepare_creates_the_folder(tmp_path: Path) -> None:
    folder = tmp_path / "jobs" / "1" / "attempt-1"
    jobfiles.prepare(folder)
    assert folder.is_dir()
    jobfiles.prepare(folder)  # twice is fine


def test_prepare_removes_old_markers_and_the_logs_of_a_run_that_ended(tmp_path: Path) -> None:
    folder = tmp_path / "a"
    folder.mkdir()
    for name in ("SUCCESS", "FAILURE", "process", "exit_status", "pid"):
        (folder / name).write_text("old")
    (folder / "stdout.log").write_text("old output")
    jobfiles.prepare(folder)
    for name in ("SUCCESS", "FAILURE", "process", "exit_status", "pid", "stdout.log"):
        assert not (folder / name).exists(), name


def test_prepare_removes_the_logs_of_a_run_killed_before_its_end(tmp_path: Path) -> None:
    """A `gpuherd run` killed outright leaves its jobs' `process` files and logs, no marker:
    the rerun appended to those logs."""
    folder = tmp_path / "a"
    folder.mkdir()
    (folder / "process").write_text("pid 4242\n")
    (folder / "stdout.log").write_text("old output\n")
    (folder / "stderr.log").write_text("Terminated\n")
    jobfiles.prepare(folder)
    assert sorted(p.name for p in folder.iterdir()) == []


def test_prepare_keeps_what_an_attempt_that_never_ran_logged(tmp_path: Path) -> None:
    """A Ray attempt whose node left before it started notes why in stderr.log; the next
    try runs in the same folder, and the note stays above its output."""
    folder = tmp_path / "a"
    folder.mkdir()
    (folder / "pid").write_text("ray:12:1\n")
    (folder / "stderr.log").write_text("gpuherd: Ray node n1 left the cluster\n")
    jobfiles.prepare(folder)
    assert not (folder / "pid").exists()
    assert (folder / "stderr.log").read_text() == "gpuherd: Ray node n1 left the cluster\n"


def start(layout: jobfiles.Layout, job: Job, att: Attempt, pid: int) -> dict[str, object]:
    """What the engine does once an attempt has run for a while: write its start."""
    info = jobfiles.start_info(job, replace(att, pid=pid))
    jobfiles.record_start(Path(att.dir), layout.job_dir(job), info)
    return info


def markers(folder: Path) -> set[str]:
    return {n for n in ("SUCCESS", "FAILURE") if (folder / n).exists()}


@pytest.mark.parametrize(
    ("outcome", "marker"),
    [
        (Outcome(OutcomeKind.EXIT, 0), "SUCCESS"),
        (Outcome(OutcomeKind.EXIT, 1), "FAILURE"),
        (Outcome(OutcomeKind.SIGNAL, signal=9), "FAILURE"),
        (Outcome(OutcomeKind.CUDA_OOM, 1, message="CUDA out of memory"), "FAILURE"),
        (Outcome(OutcomeKind.TIMEOUT, 0), "FAILURE"),
        (Outcome(OutcomeKind.LOST), "FAILURE"),
    ],
)
def test_record_end_writes_one_marker(tmp_path: Path, outcome: Outcome, marker: str) -> None:
    job, att = make_job(tmp_path)
    folder = Path(att.dir)
    jobfiles.prepare(folder)
    info = jobfiles.start_info(job, att)
    jobfiles.record_end(jobfiles.Layout.for_home(tmp_path), job, outcome, 150.0, info)
    assert markers(folder) == {marker}


@pytest.mark.parametrize(
    "outcomes",
    [
        [Outcome(OutcomeKind.EXIT, 1), Outcome(OutcomeKind.EXIT, 0)],
        [Outcome(OutcomeKind.EXIT, 0), Outcome(OutcomeKind.EXIT, 1)],
        [Outcome(OutcomeKind.EXIT, 0), Outcome(OutcomeKind.EXIT, 0)],
    ],
    ids=["fail-then-succeed", "succeed-then-fail", "succeed-twice"],
)
def test_rerun_into_the_same_folder_never_leaves_both_markers(
    tmp_path: Path, outcomes: list[Outcome]
) -> None:
    job, att = make_job(tmp_path)
    folder = Path(att.dir)
    for outcome in outcomes:
        jobfiles.prepare(folder)  # what the engine does before every spawn
        layout = jobfiles.Layout.for_home(tmp_path)
        jobfiles.record_end(layout, job, outcome, 150.0, start(layout, job, att, pid=1))
        assert markers(folder) == {"SUCCESS" if outcome.success else "FAILURE"}


def test_record_start_and_end_write_job_json(tmp_path: Path) -> None:
    job, att = make_job(tmp_path)
    folder = Path(att.dir)
    jobfiles.prepare(folder)
    layout = jobfiles.Layout.for_home(tmp_path)
    first = start(layout, job, att, pid=4321)
    job_json = folder.parent / "job.json"
    started = json.loads(job_json.read_text())
    assert started["id"] == 12
    assert started["pid"] == 4321
    assert started["gpus"] == [2, 0]
    assert started["gpu_uuids"] == ["GPU-2", "GPU-0"]
    assert started["command"] == "python train.py"
    assert started["host"] == "box"
    assert started["attempt"] == 1

    oom = Outcome(OutcomeKind.CUDA_OOM, 1, message="CUDA out of memory")
    jobfiles.record_end(layout, job, oom, 160.0, first)
    info = json.loads(job_json.read_text())
    assert info["ended_at"] == 160.0
    assert info["outcome"] == "cuda_oom"
    assert info["exit_code"] == 1
    assert info["message"] == "CUDA out of memory"
    assert info["pid"] == 4321
    assert not list(folder.parent.glob("*.tmp"))
    assert not list(folder.glob("*.tmp"))


def test_a_short_job_gets_its_start_and_end_in_one_write(tmp_path: Path) -> None:
    layout = jobfiles.Layout.for_home(tmp_path)
    job, att = make_job(tmp_path)
    jobfiles.prepare(Path(att.dir))
    info = jobfiles.start_info(job, replace(att, pid=77))
    jobfiles.record_end(layout, job, Outcome(OutcomeKind.EXIT, 0), 3.0, info)
    written = json.loads((layout.job_dir(job) / "job.json").read_text())
    assert (written["pid"], written["gpus"], written["exit_code"]) == (77, [2, 0], 0)
    assert written["ended_at"] == 3.0 and written["started_at"] == att.started_at


def test_record_end_in_a_missing_folder_does_not_raise(tmp_path: Path) -> None:
    job, _ = make_job(tmp_path)
    layout = jobfiles.Layout.for_home(tmp_path / "gone")
    info = jobfiles.start_info(job, make_job(tmp_path)[1])
    jobfiles.record_end(layout, job, Outcome(OutcomeKind.EXIT, 0), 1.0, info)


# ---- tail -----------------------------------------------------------------------------------


def test_tail_of_a_large_file_returns_only_the_last_bytes(tmp_path: Path) -> None:
    log = tmp_path / "stderr.log"
    body = b"".join(b"line %06d\n" % i for i in range(100_000))  # ~1.2 MB
    log.write_bytes(body)
    assert log_text.tail(log, 1000) == body[-1000:].decode()
    default = log_text.tail(log)
    assert len(default.encode()) == log_text.TAIL_BYTES
    assert default == body[-log_text.TAIL_BYTES :].decode()
    assert default.endswith("line 099999\n")


def test_tail_of_a_small_file_is_the_whole_file(tmp_path: Path) -> None:
    log = tmp_path / "stdout.log"
    log.write_text("a\nb\n")
    assert log_text.tail(log) == "a\nb\n"


def test_tail_of_a_missing_file_is_empty(tmp_path: Path) -> None:
    assert log_text.tail(tmp_path / "nope.log") == ""


def test_tail_that_cuts_a_multibyte_character_does_not_raise(tmp_path: Path) -> None:
    log = tmp_path / "stderr.log"
    log.write_bytes("é".encode() * 100)
    text = log_text.tail(log, 5)  # starts in the middle of a character
    assert text.endswith("éé")
    assert len(text) <= 5


def test_tail_lines(tmp_path: Path) -> None:
    log = tmp_path / "stderr.log"
    log.write_text("".join(f"{i}\n" for i in range(50)))
    assert log_text.tail_lines(log, 3) == ["47", "48", "49"]
    log.write_text("")
    assert log_text.tail_lines(log, 3) == []
    log.write_bytes(b"a\r\nb\r\nc")  # CRLF, and a last line without its newline
    assert log_text.tail_lines(log, 5) == ["a", "b", "c"]


def test_tail_lines_shows_a_redrawn_progress_bar_as_the_one_line_it_leaves(
    tmp_path: Path,
) -> None:
    log = tmp_path / "stderr.log"
    frames = "".join(f"\r{i:3d}%|{'#' * (i // 10)}" for i in range(101))
    log.write_text(f"loading\n{frames}\r\nTraceback (most recent call last):\nValueError: x\n")
    assert log_text.tail_lines(log, 3) == [
        "100%|##########",
        "Traceback (most recent call last):",
        "ValueError: x",
    ]
    log.write_text(f"{frames}\r")  # tqdm's last redraw ends with a carriage return too
    assert log_text.tail_lines(log, 2) == ["100%|##########"]


def test_runner_layout_numbers_from_zero_and_runs_attempt_one_in_the_job_folder(
    tmp_path: Path,
) -> None:
    layout = jobfiles.Layout.for_run(tmp_path, "job_", tmp_path)
    assert layout.job_dir(_job(1)) == tmp_path / "job_0"
    assert layout.attempt_dir(_job(1), 1) == tmp_path / "job_0"
    assert layout.attempt_dir(_job(1), 2) == tmp_path / "job_0" / "attempt-2"
    assert jobfiles.Layout.for_run(tmp_path, "", tmp_path).job_dir(_job(1)) == tmp_path / "0"


def test_attempt_json_is_kept_per_attempt_and_job_json_follows_the_latest(tmp_path: Path) -> None:
    layout = jobfiles.Layout.for_home(tmp_path)
    job1, att1 = make_job(tmp_path, attempt=1)
    jobfiles.prepare(Path(att1.dir))
    jobfiles.record_end(
        layout, job1, Outcome(OutcomeKind.EXIT, 1), 1.0, start(layout, job1, att1, 11)
    )
    job2, att2 = make_job(tmp_path, attempt=2)
    jobfiles.prepare(Path(att2.dir))
    jobfiles.record_end(
        layout, job2, Outcome(OutcomeKind.EXIT, 0), 2.0, start(layout, job2, att2, 22)
    )
    first = json.loads((Path(att1.dir) / "attempt.json").read_text())
    assert (first["pid"], first["exit_code"]) == (11, 1)
    latest = json.loads((layout.job_dir(_job(12)) / "job.json").read_text())
    assert (latest["pid"], latest["exit_code"], latest["attempt"]) == (22, 0, 2)
    assert (Path(att1.dir) / "FAILURE").exists()
    assert (layout.job_dir(_job(12)) / "SUCCESS").exists()
    assert not (layout.job_dir(_job(12)) / "FAILURE").exists()


def test_job_json_and_marker_follow_the_latest_attempt_and_never_change_an_older_one(
    tmp_path: Path,
) -> None:
    layout = jobfiles.Layout.for_home(tmp_path)
    job1, att1 = make_job(tmp_path, attempt=1)
    jobfiles.prepare(Path(att1.dir))
    first = start(layout, job1, att1, pid=1)
    jobfiles.record_end(layout, job1, Outcome(OutcomeKind.EXIT, 3), 5.0, first)
    job2, att2 = make_job(tmp_path, attempt=2)
    jobfiles.prepare(Path(att2.dir))
    second = start(layout, job2, att2, pid=2)
    jobfiles.record_end(layout, job2, Outcome(OutcomeKind.EXIT, 0), 9.0, second)

    job_dir = layout.job_dir(job2)
    old, new = Path(att1.dir), Path(att2.dir)
    assert json.loads((old / "attempt.json").read_text())["exit_code"] == 3
    assert json.loads((new / "attempt.json").read_text())["exit_code"] == 0
    assert (job_dir / "job.json").read_text() == (new / "attempt.json").read_text()
    assert (job_dir / "job.json").samefile(new / "attempt.json")  # a link, not a second file
    assert (old / "FAILURE").exists() and not (old / "SUCCESS").exists()
    assert (job_dir / "SUCCESS").exists() and not (job_dir / "FAILURE").exists()
    assert not list(job_dir.rglob("*.tmp"))


def _write_job_json(folder: Path, text: str) -> None:
    folder.mkdir(parents=True)
    (folder / "job.json").write_text(text)


def test_earlier_run_times_come_from_ended_job_folders_and_skip_the_rest(tmp_path: Path) -> None:
    def ended(command: str, seconds: float) -> str:
        return json.dumps({"command": command, "started_at": 100.0, "ended_at": 100.0 + seconds})

    _write_job_json(tmp_path / "job_0", ended("python train.py --lr 1", 30.0))
    _write_job_json(tmp_path / "job_1", ended("python train.py --lr 2", 5.5))
    _write_job_json(tmp_path / "job_2", ended("python train.py --lr 1", 42.0))  # same command
    _write_job_json(tmp_path / "job_3", json.dumps({"command": "running", "started_at": 1.0}))
    _write_job_json(tmp_path / "job_4", "{not json")
    _write_job_json(tmp_path / "job_5", "[1, 2]")
    _write_job_json(tmp_path / "job_6", json.dumps({"command": 7, "started_at": 1, "ended_at": 2}))
    (tmp_path / "job_7").mkdir()  # no job.json
    (tmp_path / "herd.db").write_text("not a folder")
    assert jobfiles.earlier_run_times(tmp_path) == {
        "python train.py --lr 1": 42.0,  # a command seen twice counts with its longest run
        "python train.py --lr 2": 5.5,
    }


def test_earlier_run_times_of_a_missing_folder_raise_for_the_caller_to_word(
    tmp_path: Path,
) -> None:
    with pytest.raises(FileNotFoundError):
        jobfiles.earlier_run_times(tmp_path / "missing")


# ---- the last lines of a log ----------------------------------------------------------------


def _last_lines_reference(data: bytes, lines: int, drawings: int) -> int:
    """Where the last `lines` lines begin, found in the whole text: the start of the first of
    them, or of the first drawing (after a `\\r`) more than `drawings` bytes back from the end
    of its line, in the last of them that has one."""
    body = data[:-1] if data.endswith(b"\n") else data
    starts = [0, *(m.end() for m in re.finditer(b"\n", body))]
    ends = [*(m.start() for m in re.finditer(b"\n", body)), len(body)]
    for start, end in list(zip(starts, ends, strict=True))[-lines:][::-1]:
        cuts = [i + 1 for i in range(start, end) if body[i] == ord("\r") and end - i - 1 > drawings]
        if cuts:
            return cuts[-1]
    return starts[max(len(starts) - lines, 0)]


@settings(max_examples=300, deadline=None)
@given(
    data=st.lists(
        st.sampled_from([b"a", b"bc", b"\n", b"\n\n", b"\xff", b"\r", b"\r\n"]), max_size=40
    ).map(b"".join),
    lines=st.integers(1, 12),
    block=st.integers(1, 9),
    drawings=st.integers(0, 8),
)
def test_start_of_last_lines_matches_splitting_the_whole_text(
    tmp_path_factory: pytest.TempPathFactory, data: bytes, lines: int, block: int, drawings: int
) -> None:
    path = tmp_path_factory.mktemp("log") / "stdout.log"
    path.write_bytes(data)
    with path.open("rb") as f:
        start = jobfiles.start_of_last_lines(f, lines, block=block, drawings=drawings)
    assert start == _last_lines_reference(data, lines, drawings)


class CountingReads(io.BytesIO):
    def __init__(self, data: bytes) -> None:
        super().__init__(data)
        self.bytes_read = 0

    def read(self, size: int | None = -1, /) -> bytes:
        data = super().read(size)
        self.bytes_read += len(data)
        return data


def test_start_of_last_lines_of_a_large_log_reads_only_its_end() -> None:
    log = CountingReads(b"x" * 99 + b"\n" + b"line\n" * 3 + b"y" * 10_000_000)
    assert jobfiles.start_of_last_lines(log, 1) == 115  # the 10 MB line without a newline
    assert jobfiles.start_of_last_lines(log, 2) == 110
    assert jobfiles.start_of_last_lines(log, 5) == 0
    small = CountingReads(b"old\n" * 1_000_000 + b"new\n")
    assert jobfiles.start_of_last_lines(small, 1) == 4_000_000
    assert small.bytes_read <= 64 * 1024 + 1  # one block (and the final byte), of 4 MB


def test_the_tail_of_a_progress_bar_redrawn_for_days_is_its_last_drawings() -> None:
    # tqdm starts each drawing with \r and ends the line when its loop ends: counted by
    # newlines alone, the bar's whole history (here 5 MB) was its "last line".
    bar = b"".join(b"\r%7d/200000 [#####     ]" % i for i in range(200_000))
    log = CountingReads(b"epoch 1 loss 0.5\n" + bar + b"\nepoch 2 loss 0.4\n")
    start = jobfiles.start_of_last_lines(log, 3)
    tail = log.getvalue()[start:]
    assert tail.endswith(b" 199999/200000 [#####     ]\nepoch 2 loss 0.4\n")
    assert 64 * 1024 - 30 < len(tail) <= 64 * 1024 + 30  # the drawings of its last 64 KiB
    assert tail[:1] == b" " and b"epoch 1" not in tail  # from a drawing's start
    assert log.bytes_read <= 2 * 64 * 1024 + 1  # two blocks (and the final byte), of 5 MB
    short = b"epoch 1\n" + b"".join(b"\r%d/9" % i for i in range(10)) + b"\nepoch 2\n"
    assert jobfiles.start_of_last_lines(io.BytesIO(short), 3) == 0  # a short bar: as it is
