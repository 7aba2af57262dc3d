"""`gpuherd run --skip-succeeded` when the input's lines moved since the earlier run: a job's
folder is named by its place, so a line inserted at the top put every later job on the folder
of another one, which overwrote the results it was there to keep. Now a folder holding another
job's success is kept (that job is not run, its line says why), and a job that succeeded in
the folder of an earlier place is skipped, naming it.

Jobs are real processes that append a line to `ran.txt` in the run's folder: what ran is read
there, not from what the run says.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import Runs


def ran(runs: Runs) -> list[str]:
    record = runs.cwd / "ran.txt"
    return record.read_text().split() if record.exists() else []


def job(tag: str) -> str:
    return f"echo {tag} >> ran.txt"


def snapshot(out: Path) -> dict[str, tuple[bytes, int]]:
    """Every file under the output folder: its bytes and its modification time (ns)."""
    return {
        str(p.relative_to(out)): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in sorted(out.rglob("job_*/**/*"))
        if p.is_file()
    }


def not_run(number: int, folder: Path, command: str) -> str:
    return (
        f"[{number}] not run: {folder} holds a run of another command that succeeded "
        f"({command}), kept: the input's jobs moved or changed since that run; add new jobs at "
        "the end, or give another --output-dir"
    )


@pytest.mark.parametrize(
    "options", [[], ["--order", "longest-first", "--times-from", "{out}", "--keep-state"]]
)
def test_a_line_inserted_at_the_top_overwrites_nothing(runs: Runs, options: list[str]) -> None:
    out = runs.root / "out"
    jobs = runs.root / "jobs.txt"
    jobs.write_text("".join(job(t) + "\n" for t in "abc"))
    common = ["--fake-gpus", "2", "--output-dir", str(out)]
    first = runs.run(*common, str(jobs))
    assert first.returncode == 0, first.stdout + first.stderr
    kept = snapshot(out)

    jobs.write_text("".join(job(t) + "\n" for t in "xabc"))  # x inserted at the top
    extra = [option.format(out=out) for option in options]
    proc = runs.run(*common, *extra, "--skip-succeeded", str(jobs))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert proc.stdout.splitlines() == [
        not_run(0, out / "job_0", job("a")),
        f"[1] skipped: succeeded before ({out}/job_0)",
        f"[2] skipped: succeeded before ({out}/job_1)",
        f"[3] skipped: succeeded before ({out}/job_2)",
        f"0 succeeded, 0 failed, 3 skipped, 1 not run; logs in {out}",
    ]
    assert sorted(ran(runs)) == ["a", "b", "c"]  # nothing ran again
    assert snapshot(out) == kept  # and no folder was touched, nor made

    jobs.write_text("".join(job(t) + "\n" for t in "abcx"))  # as the line says: at the end
    proc = runs.run(*common, *extra, "--skip-succeeded", str(jobs))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines()[-1] == f"1 succeeded, 0 failed, 3 skipped; logs in {out}"
    assert sorted(ran(runs)) == ["a", "b", "c", "x"]
    assert job("x") in (out / "job_3" / "job.json").read_text()
    assert (out / "herd.db").exists() == bool(options)  # --keep-state: this run's jobs


def test_a_stream_decides_each_line_as_it_arrives_and_identical_lines_run_as_often(
    runs: Runs,
) -> None:
    out = runs.root / "out"
    common = ["--fake-gpus", "1", "--output-dir", str(out)]
    first = runs.run(*common, input=f"{job('a')}\n{job('a')}\n")
    assert first.returncode == 0, first.stdout + first.stderr
    assert ran(runs) == ["a", "a"]

    # x before them, and a third `a`: the two earlier successes stand for two of the three.
    run = runs.start(*common, "--skip-succeeded")
    run.write(job("x") + "\n")
    assert run.expect_line("[0]") == not_run(0, out / "job_0", job("a"))
    run.write(job("a") + "\n")
    assert run.expect_line("[1]") == f"[1] skipped: succeeded before ({out}/job_1)"
    run.write(job("a") + "\n")
    assert run.expect_line("[2]") == f"[2] skipped: succeeded before ({out}/job_0)"
    run.write(job("a") + "\n")
    run.expect_line("[3] started on GPU 0: ")
    status, rest, err = run.finish()
    assert status == 1, rest + err
    assert rest.splitlines()[-1] == f"1 succeeded, 0 failed, 2 skipped, 1 not run; logs in {out}"
    assert ran(runs) == ["a", "a", "a"]


def test_a_line_changed_in_place_keeps_the_success_it_replaced(runs: Runs) -> None:
    out = runs.root / "out"
    common = ["--fake-gpus", "1", "--output-dir", str(out)]
    assert runs.run(*common, input=f"{job('a')}\n{job('b')}\n").returncode == 0
    (out / "job_1" / "SUCCESS").rename(out / "job_1" / "FAILURE")  # as a failed run leaves it
    proc = runs.run(*common, "--skip-succeeded", input=f"{job('a2')}\n{job('b2')}\n")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert proc.stdout.splitlines()[0] == not_run(0, out / "job_0", job("a"))
    assert proc.stdout.splitlines()[-1] == f"1 succeeded, 0 failed, 1 not run; logs in {out}"
    assert ran(runs) == ["a", "b", "b2"]  # a failure's folder is run again, as before
    assert job("a") in (out / "job_0" / "job.json").read_text()


def moved(number: int, folder: Path, command: str, later: Path) -> str:
    return (
        f"[{number}] not run: {folder} holds a run of another command that succeeded "
        f"({command}), kept: this job succeeded in {later}, of a later place: the input has that "
        "run's jobs in other places (a gpuherd sweep --shuffle --dry-run draws a new order each "
        "time: rerun it with the --seed the first one printed); keep each job in its place, or "
        "give another --output-dir"
    )


def test_a_job_that_succeeded_in_a_later_folder_says_so(runs: Runs) -> None:
    # Its line said "add new jobs at the end", of jobs none of which was new: they had only
    # changed places. A line whose job succeeded nowhere keeps the words it had.
    out = runs.root / "out"
    common = ["--fake-gpus", "2", "--output-dir", str(out), "--prefix", "r1"]  # (r10: job 0)
    lines = {tag: job(tag) + "\n" for tag in "abcdx"}
    first = runs.run(*common, input="".join(lines[tag] for tag in "abcd"))
    assert first.returncode == 0, first.stdout + first.stderr
    (out / "r103").mkdir()  # not a job's folder (r1 and 03), nor is a file
    (out / "r1999").write_text("")
    proc = runs.run(*common, "--skip-succeeded", input="".join(lines[tag] for tag in "baxc"))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert proc.stdout.splitlines() == [
        moved(0, out / "r10", job("a"), out / "r11"),
        f"[1] skipped: succeeded before ({out}/r10)",
        not_run(2, out / "r12", job("c")),
        f"[3] skipped: succeeded before ({out}/r12)",
        f"0 succeeded, 0 failed, 2 skipped, 2 not run; logs in {out}",
    ]
    assert sorted(ran(runs)) == ["a", "b", "c", "d"]


def test_a_shuffled_sweep_piped_again_is_skipped_with_the_seed_it_names(runs: Runs) -> None:
    # README's `gpuherd sweep ... --shuffle --dry-run | gpuherd run`: each dry run without
    # --seed drew another order, and a rerun with --skip-succeeded ran none of the jobs that
    # moved, saying "add new jobs at the end". Its lines now name --seed, which works.
    def commands(seed: str) -> str:
        args = ["echo {a} {b} >> ran.txt", "-p", "a", "1", "2", "3", "-p", "b", "x", "y"]
        done = runs.gpuherd("sweep", *args, "--shuffle", "--seed", seed, "--dry-run")
        assert done.returncode == 0, done.stderr
        return done.stdout

    out = runs.root / "out"
    common = ["--fake-gpus", "2", "--output-dir", str(out), "-q"]
    assert commands("1") != commands("2")  # another order
    assert runs.run(*common, input=commands("1")).returncode == 0
    other = runs.run(*common, "--skip-succeeded", input=commands("2"))
    assert other.returncode == 1, other.stdout + other.stderr
    said = [line for line in other.stdout.splitlines() if " not run: " in line]
    assert said and all("rerun it with the --seed the first one printed" in s for s in said)
    again = runs.run(*common, "--skip-succeeded", input=commands("1"))  # as the lines say
    assert again.returncode == 0, again.stdout + again.stderr
    assert again.stdout == f"0 succeeded, 0 failed, 6 skipped; logs in {out}\n"
    points = (runs.cwd / "ran.txt").read_text().splitlines()
    assert sorted(points) == ["1 x", "1 y", "2 x", "2 y", "3 x", "3 y"]  # each ran once
