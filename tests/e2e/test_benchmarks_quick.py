"""The benchmark harness's smoke mode, so it never rots: `python benchmarks/run.py --quick`.

gpuherd only, small sizes: it must finish, pass its own correctness checks (every job ran
once, never two jobs on one GPU at a time) and print its figures. The figures themselves are
not asserted: speed is measured, not tested (see benchmarks/README.md).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_quick_benchmark_runs_checks_and_prints_its_figures() -> None:
    proc = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "run.py"), "--quick"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=110,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "CORRECTNESS" not in proc.stdout + proc.stderr
    out = proc.stdout
    assert "figures:" in out
    keys = ("W1 ", "W2 ", "W2-gap", "W3-p50", "W5-batch", "W6 ", "W7-plan", "W7-pass", "W8 ")
    for key in keys:
        assert any(line.strip().startswith(key.strip()) for line in out.splitlines()), (key, out)
    for row in ("gpuherd-run", "gpuherd-daemon"):
        assert f"W1           {row}" in out, out


def table_of(script: str, *args: str, column: int) -> tuple[dict[str, str], str]:
    """Run a benchmarks/ script (it must succeed); its Markdown table's rows by their first
    cell, each the cell at `column`, and its whole output."""
    proc = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / script), *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    rows = [line.rstrip(" |").split(" | ") for line in proc.stdout.splitlines()]
    cells = {row[0].lstrip("| "): row[column] for row in rows if row[0].startswith("| ")}
    return cells, proc.stdout


def test_the_handoff_breakdown_runs_and_finds_every_stage() -> None:
    # benchmarks/handoff.py wraps engine steps by name: a renamed step must fail here, not
    # silently drop out of its table.
    stages, out = table_of("handoff.py", "--jobs", "6", column=-1)
    for stage in ("the ended attempt recorded", "placement pass", "in all: end -> next start"):
        assert stages[stage] == "5", out


def test_the_w2_budget_runs_and_accounts_for_the_slowest_slot() -> None:
    steps, out = table_of("w2_budget.py", "--reps", "1", "--scale", "0.1", column=1)
    # A utilisation: of the lower bound to the makespan, never above 1 (a speed is not
    # asserted: jobs of 20-200 ms on a loaded machine gave 0.41, under a bound of 0.5 here).
    assert 0 < float(steps["figure"]) <= 1.0, out
    # 40 jobs on 4 GPUs: the slowest slot ran several of them, each handed over once.
    assert int(steps["jobs on the slot"]) >= 5, out
    assert float(steps["hand-offs"]) > 0, out


def test_the_daemon_handoff_breakdown_runs_and_finds_every_stage() -> None:
    # benchmarks/handoff_daemon.py wraps the daemon's steps by name (handoff.py's, and the
    # executor's look at an exit): a renamed step must fail here, not leave its stage empty.
    # Jobs of 60-600 ms: a hand-off is kept only when no other slot's job started or ended
    # meanwhile, and at x0.1 (20-200 ms) a machine at load 16 kept none.
    stages, out = table_of(
        "handoff_daemon.py", "--reps", "1", "--scale", "0.3", "--pairs", "2", column=-1
    )
    for stage in (
        "the job's end -> the executor sees the exit",
        "the exit concluded (group, reap) -> the engine told",
        "the ended attempt recorded",
        "placement pass",
        "posix_spawn",
        "in all: end -> next start",
        "gpuherd's job shell: in all: end -> next start",
    ):
        assert int(stages[stage]) > 0, out
