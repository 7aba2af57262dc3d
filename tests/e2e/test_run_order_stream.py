"""`gpuherd run --order longest-first` with no earlier run times to order by (a new
--output-dir, a first run): every command is one not seen before, so the order is the input's.
It held a stream (`tail -f -n 0 gpu.queue | gpuherd run --order longest-first ...`) until it
was closed, starting nothing, while saying `jobs start in input order`: now such a stream's
jobs start as their lines come, as without --order."""

from __future__ import annotations

from conftest import Runs


def test_longest_first_with_no_earlier_times_starts_a_streams_lines_as_they_come(
    runs: Runs,
) -> None:
    out = runs.root / "new"
    run = runs.start("--fake-gpus", "1", "--order", "longest-first", "--output-dir", str(out))
    run.write("echo a\n")  # standard input stays open: a queue file that grows
    said = run.expect_line("--order longest-first: no earlier run times")
    assert said.endswith("jobs start in input order"), said
    run.expect_line("[0] succeeded", timeout=20)  # it waited for the input to close
    run.write("echo b\n")
    run.expect_line("[1] succeeded", timeout=20)
    status, rest, err = run.finish()
    assert status == 0, rest + err
    assert rest.splitlines()[-1] == f"2 succeeded, 0 failed; logs in {out}"
    assert "reading the whole input" not in err, err  # it no longer does


def test_longest_first_runs_the_lines_read_before_a_bad_one(runs: Runs) -> None:
    """With earlier run times, --order longest-first reads the whole input first: a bad line
    (a NUL byte) ended it, and the lines read before it were held, never run (`0 succeeded, 0
    failed, 2 not run`), where without --order they run. They now run, longest first."""
    first, out = runs.root / "first", runs.root / "again"
    (runs.cwd / "two.txt").write_text("sleep 0.2\nsleep 0.5\n")
    done = runs.start("--fake-gpus", "1", "-q", "--output-dir", str(first), "two.txt").finish()
    assert done[0] == 0, done
    words = ("--fake-gpus", "1", "--order", "longest-first", "--times-from", str(first))
    run = runs.start(*words, "--output-dir", str(out))
    run.write("sleep 0.2\nsleep 0.5\necho x\0y\n")
    status, rest, err = run.finish()
    assert status == 1, rest + err
    lines = rest.splitlines()
    # (said as the bad line is read: before or after the held lines' starts, as it comes)
    stopped = "input stopped: standard input: line 3 holds a NUL byte"
    assert [line for line in lines if line.startswith(stopped)] != [], rest
    starts = [line.split(":")[0] for line in lines if " started on " in line]
    assert starts == ["[1] started on GPU 0", "[0] started on GPU 0"], rest  # longest first
    assert lines[-1] == f"2 succeeded, 0 failed; logs in {out}", rest
