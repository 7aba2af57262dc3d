"""`--gpus` takes ranges, as `--only-gpus` does (`1-3`, `0,2-3`), for `gpuherd run` and
`gpuherd daemon start` alike (they share the GPU spec's parser); a range is its indices
written out, so a repeated index is still another slot (`0-1,0`: two on GPU 0).

`gpuherd run --gpus 1-3` was refused: "invalid GPU index '1-3'".

Jobs are real processes that record what they saw (see `Probe` in recording_jobs.py).
"""

from __future__ import annotations

import pytest

from conftest import Herd, Probe, Runs

HINT = "use GPU indices like 0,1,2, 1-3 or 0 1 2 (nvidia-smi numbering; repeat one for 2 slots)"


def jobs_at_once(probe: Probe, count: int) -> str:
    """`count` job lines that each wait until all have started: they must run at once."""
    return "".join(probe.cmd(f"j{n}", barrier=count) + "\n" for n in range(count))


@pytest.mark.parametrize(
    ("gpus", "seen"),
    [
        (["1-3"], ["1", "2", "3"]),
        (["0,2-3"], ["0", "2", "3"]),
        (["0-1", "3"], ["0", "1", "3"]),  # simple_gpu_scheduler's words, one a range
        (["0-1,0"], ["0", "0", "1"]),  # a repeat in a range is another slot, as in 0,0,1
    ],
    ids=["range", "index-and-range", "words", "repeat"],
)
def test_run_takes_gpu_ranges(runs: Runs, probe: Probe, gpus: list[str], seen: list[str]) -> None:
    (runs.cwd / "jobs.txt").write_text(jobs_at_once(probe, len(seen)))
    out = runs.root / "out"
    # After the job file, where a word that is no GPU index would be taken for another file.
    proc = runs.run("jobs.txt", "--gpus", *gpus, "--output-dir", str(out))
    assert proc.returncode == 0, proc.stderr + proc.stdout
    assert proc.stdout.splitlines()[-1] == f"{len(seen)} succeeded, 0 failed; logs in {out}"
    assert sorted(record["gpus"] for record in probe.by_name().values()) == seen


@pytest.mark.parametrize(
    ("gpus", "error"),
    [
        (["3-1"], "--gpus: invalid range '3-1': write it as 1-3"),
        (["0", "3-1"], "--gpus: invalid range '3-1' in '0,3-1': write it as 1-3"),
        (["0-4096"], "--gpus: GPU 4096 in '0-4096' is not a GPU index: at most 4095"),
        (["1-"], f"--gpus: invalid GPU index '1-': {HINT}"),
        (["x"], f"--gpus: invalid GPU index 'x': {HINT}"),  # the hint said no range
    ],
    ids=["reversed", "reversed-among-words", "too-large", "open-ended", "no-index"],
)
def test_run_refuses_a_bad_range_in_one_line(runs: Runs, gpus: list[str], error: str) -> None:
    (runs.cwd / "jobs.txt").write_text("echo never\n")
    out = runs.root / "out"
    proc = runs.run("--gpus", *gpus, "jobs.txt", "--output-dir", str(out))
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr.startswith(f"gpuherd: error: {error}"), proc.stderr
    assert len(proc.stderr.splitlines()) == 1, proc.stderr
    assert not out.exists()


def test_daemon_start_takes_the_same_ranges(herd: Herd) -> None:
    assert "--gpus: invalid range '3-1': write it as 1-3" in herd.usage_error(
        "daemon", "start", "--gpus", "3-1"
    )
    assert f"--gpus: invalid GPU index 'x': {HINT}" in herd.usage_error(
        "daemon", "start", "--gpus", "x"
    )
    assert not herd.is_up()
    herd.start("--gpus", "0-1,0,3-4")
    slots = {gpu["index"]: gpu["slots"] for gpu in herd.json("gpus")["gpus"]}
    assert slots == {0: 2, 1: 1, 3: 1, 4: 1}
