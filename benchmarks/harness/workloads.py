"""W1-W3 on every tool in turn: the same jobs, the same GPU ids, rotated order, repeated.

Every run is checked: each job ran exactly once, no two overlapping jobs shared a GPU, and
never more than 4 ran at once. A figure from a run that fails the check is kept but the
failure is reported beside it.
"""

from __future__ import annotations

import os
import shutil
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from harness.common import Figure, fresh_dir, percentile, workdir
from harness.jobs import (
    Work,
    check_events,
    check_stamps,
    handoff_gaps,
    lower_bound,
    read_stamps,
    stamped_lines,
    trivial_lines,
    w2_lengths,
    w3_lengths,
)
from harness.tools import HerdRun, Ray, Tool, ToolError


@dataclass
class Sizes:
    w1: int = 2000
    w2: int = 40
    w3: int = 200
    w2_scale: float = 1.0
    """Quick mode shortens the W2 jobs (0.02-0.2 s instead of 0.2-2 s)."""


@dataclass
class Results:
    figures: dict[tuple[str, str], Figure] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)
    extra: dict[str, object] = field(default_factory=dict)
    log: Callable[[str], None] = print

    def fig(self, key: str, row: str, label: str = "") -> Figure:
        if label:
            self.labels.setdefault(row, label)
            self.labels.setdefault(f"{key}|{row}", label)
        return self.figures.setdefault((key, row), Figure())

    def label(self, key: str, row: str) -> str:
        return self.labels.get(f"{key}|{row}", self.labels.get(row, row))

    def failures(self) -> list[str]:
        return [f"{k} {r}: {f}" for (k, r), fig in self.figures.items() for f in fig.failures]


class Bench:
    def __init__(self, sizes: Sizes, results: Results) -> None:
        self.sizes = sizes
        self.results = results
        self.runs = fresh_dir(workdir() / "runs")
        self.len2 = [round(s * sizes.w2_scale, 3) for s in w2_lengths(sizes.w2)]
        self.len3 = w3_lengths(sizes.w3)
        self.count = 0

    def _work(self, workload: str, row: str, lengths: list[float] | None = None) -> Work:
        self.count += 1
        record = self.runs / f"{self.count:04d}-{workload}-{row}.rec"
        if workload == "W1":
            lines = trivial_lines(row, self.sizes.w1, record)
        else:
            lines = stamped_lines(row, lengths or [], record)
        return Work(workload, row, lines, record)

    def once(
        self,
        tool: Tool,
        workload: str,
        row: str,
        lengths: list[float] | None = None,
        label: str = "",
    ) -> None:
        """One run of one workload on one tool, checked, its figure recorded under `row`."""
        work = self._work(workload, row, lengths)
        jobs_file = work.record.with_suffix(".txt")
        jobs_file.write_text("\n".join(work.lines) + "\n")
        key = workload if workload != "W3" else "W3-p50"
        fig = self.results.fig(key, row, label or tool.label)
        try:
            t0, t1 = tool.run(work, jobs_file)
        except (ToolError, OSError) as exc:
            fig.fail(f"run failed: {exc}")
            self.results.log(f"  {workload} {row}: FAILED {exc}")
            return
        finally:
            for note in getattr(tool, "notes", []):
                fig.add(None, note)
            if hasattr(tool, "notes"):
                tool.notes.clear()
        check = check_events if workload == "W1" else check_stamps
        problems = check(work.record, work.n)
        for p in problems:
            fig.fail(p)
        self._figure(workload, row, work, t0, t1, fig, label or tool.label)
        shown = f"{fig.values[-1]:.3f}" if fig.values else "-"
        bad = f"  CORRECTNESS: {'; '.join(problems)}" if problems else ""
        self.results.log(f"  {workload} {row}: {shown}{bad}")
        if not problems:
            work.record.unlink(missing_ok=True)
            jobs_file.unlink(missing_ok=True)

    def _figure(
        self, workload: str, row: str, work: Work, t0: float, t1: float, fig: Figure, label: str
    ) -> None:
        if workload == "W1":
            fig.add(work.n / (t1 - t0))
            return
        stamps = read_stamps(work.record)
        gaps = handoff_gaps(stamps)
        if workload == "W2":
            if stamps:
                fig.add(lower_bound(self.len2) / (max(s.end for s in stamps) - t0))
            if gaps:
                self.results.fig("W2-gap", row, label).add(statistics.median(gaps))
            return
        if gaps:
            fig.add(statistics.median(gaps))
            self.results.fig("W3-p99", row, label).add(percentile(gaps, 0.99))

    # ---- the workloads -----------------------------------------------------------------------

    def w1(self, tool: Tool) -> None:
        if isinstance(tool, Ray):
            with session(tool):
                self.once(tool, "W1", "ray-cold", label="Ray 2.60, cold (first batch)")
                self.results.fig("W1", "ray-cold").add(None, f"ray.init {tool.init_seconds:.1f}s")
                self.once(tool, "W1", "ray-warm", label="Ray 2.60, warm (second batch)")
            return
        self.once(tool, "W1", tool.name)

    def w2(self, tool: Tool) -> None:
        if tool.fresh_each_run:
            with session(tool):
                self.once(tool, "W2", tool.name, self.len2)
            return
        self.once(tool, "W2", tool.name, self.len2)
        if isinstance(tool, HerdRun) and tool.name == "gpuherd-run":
            # The same jobs a second time, ordered by the run times of the first.
            lpt = HerdRun(tool.extra + LONGEST_FIRST, "gpuherd-run-lpt", LPT_LABEL, rerun=True)
            self.once(lpt, "W2", lpt.name, self.len2, lpt.label)

    def w3(self, tool: Tool) -> None:
        if isinstance(tool, Ray):
            with session(tool):
                self.once(tool, "W3", "ray-warmup", self.len3[:8])  # start the workers first
                self.results.figures.pop(("W3-p50", "ray-warmup"), None)
                self.results.figures.pop(("W3-p99", "ray-warmup"), None)
                self.once(tool, "W3", tool.name, self.len3)
            return
        self.once(tool, "W3", tool.name, self.len3)


class session:
    """A tool's server for the length of a block (Ray: its own local cluster)."""

    def __init__(self, tool: Tool) -> None:
        self.tool = tool

    def __enter__(self) -> Tool:
        self.tool.setup()
        return self.tool

    def __exit__(self, *exc: object) -> None:
        self.tool.teardown()


LONGEST_FIRST = ("--order", "longest-first")
LPT_LABEL = "gpuherd run --order longest-first (times from a first run of the same jobs)"


def run_all(bench: Bench, tools: list[Tool], reps: int, workloads: tuple[str, ...]) -> None:
    """Each repetition runs every workload on every tool, the tool order rotated each time."""
    persistent = [t for t in tools if not t.fresh_each_run]
    for t in persistent:
        t.setup()
    try:
        for rep in range(reps):
            order = tools[rep % len(tools) :] + tools[: rep % len(tools)]
            for name in workloads:
                bench.results.log(f"[rep {rep + 1}/{reps}] {name}")
                note_load(bench.results)
                for tool in order:
                    if name not in tool.workloads:
                        continue
                    getattr(bench, name.lower())(tool)
                    time.sleep(0.2)  # let the last job's processes settle
    finally:
        for t in persistent:
            t.teardown()
        shutil.rmtree(workdir() / "herd-run-out", ignore_errors=True)


def note_load(res: Results) -> None:
    """Keep the 1-minute load average: other work on the machine shows in the figures."""
    loads = res.extra.setdefault("load", [])
    assert isinstance(loads, list)
    loads.append(round(os.getloadavg()[0], 2))


def keep_failed_records() -> list[Path]:
    return sorted((workdir() / "runs").glob("*.rec"))
