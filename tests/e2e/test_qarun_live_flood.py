"""`gpuherd run --live` and a job that writes faster than the run shows: at the job's end the
run shows the last lines of what it had not shown yet, and names the bytes it skipped, instead
of printing tens of megabytes in one go (which held the run's loop for seconds: the other
jobs' ends were seen late, their run times counted that wait, and nothing new started).
"""

from __future__ import annotations

import re

from conftest import Runs

LAST = 3_000_000
"""`seq 1 LAST` writes 20.9 MB at once: far more than the polls read before the job ends."""
TAIL = 1024 * 1024
"""The most shown of it at its end (runner_live.FINISH_MOST)."""


def test_a_flood_ends_with_its_last_lines_and_the_count_of_the_bytes_skipped(runs: Runs) -> None:
    (runs.cwd / "jobs.txt").write_text(f"seq 1 {LAST}\n")
    out = runs.root / "out"
    proc = runs.run("--fake-gpus", "1", "--live", "--output-dir", str(out), "jobs.txt")
    assert (proc.returncode, proc.stderr) == (0, ""), proc.stdout[-2000:] + proc.stderr
    shown = [line[5:] for line in proc.stdout.splitlines() if line.startswith("[0]| ")]
    note = re.compile(r"… \(([0-9,]+) bytes not shown: written faster than --live shows them;")
    notes = [i for i, line in enumerate(shown) if note.match(line)]
    assert len(notes) == 1, shown[:3] + shown[-3:]
    at = notes[0]
    assert shown[at].endswith(f" whole in {out}/job_0/stdout.log)")
    before, after = [int(n) for n in shown[:at]], [int(n) for n in shown[at + 1 :]]
    # Whole lines, in order, up to the skip and from it to the last one.
    assert before == list(range(1, len(before) + 1))
    assert after == list(range(after[0], LAST + 1))
    assert sum(len(f"{n}\n") for n in after) <= TAIL
    # The count is exact: the lines between are the bytes it names.
    skipped = int(note.match(shown[at])[1].replace(",", ""))  # type: ignore[index]
    assert skipped == sum(len(f"{n}\n") for n in range(len(before) + 1, after[0]))
    assert proc.stdout.splitlines()[-2].startswith("[0] succeeded in ")
    assert (out / "job_0" / "stdout.log").stat().st_size == sum(
        len(f"{n}\n") for n in range(1, LAST + 1)
    )


def test_one_long_last_line_ending_in_a_newline_is_shown_in_pieces(runs: Runs) -> None:
    # Its newline, the last byte, was taken for the start of a line: nothing of it showed.
    long = 2_000_000
    (runs.cwd / "jobs.txt").write_text(f'head -c {long} /dev/zero | tr "\\0" a; echo\n')
    out = runs.root / "out"
    proc = runs.run("--fake-gpus", "1", "--live", "--output-dir", str(out), "jobs.txt")
    assert (proc.returncode, proc.stderr) == (0, ""), proc.stdout[-2000:] + proc.stderr
    shown = [line[5:] for line in proc.stdout.splitlines() if line.startswith("[0]| ")]
    skipped = long + 1 - TAIL
    assert shown[0] == (
        f"… ({skipped:,} bytes not shown: written faster than --live shows them; whole in "
        f"{out}/job_0/stdout.log)"
    )
    pieces = shown[1:]  # its last TAIL bytes but the newline, in pieces of 16 KiB
    assert len(pieces) == 64 and set("".join(pieces)) == {"a"}, [len(p) for p in pieces]
    assert sum(map(len, pieces)) == TAIL - 1
