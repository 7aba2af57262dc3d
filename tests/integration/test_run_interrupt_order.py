"""`gpuherd run` says its interruption after the `started` lines of the jobs it waits for.

A Ctrl-C that came as jobs had just started (their starts published, not yet reported)
printed `interrupted: ...; waiting for 2 running jobs to finish` before the `[0] started`
and `[1] started` lines of those two jobs."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from gpuherd.gpus import make_probe
from gpuherd.runner import Runner, RunOptions, items_from_commands


class Said:
    """A Reporter (gpuherd.runner_summary) that keeps what it was told, in order."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def started(self, number: int, gpus: list[int], command: str) -> None:
        self.lines.append(f"[{number}] started")

    def ended(self, number: int, state: str, detail: str, seconds: float, folder: str) -> None:
        self.lines.append(f"[{number}] {state}")

    def retrying(self, number: int, detail: str) -> None:
        self.lines.append(f"[{number}] retrying")

    def skipped(self, number: int, folder: str) -> None:
        self.lines.append(f"[{number}] skipped")

    def notice(self, text: str) -> None:
        self.lines.append(text)

    def submitted(self, count: int) -> None:
        pass

    def output(self, number: int, stream: str, line: str) -> None:
        pass

    def flush(self) -> None:
        pass


def test_the_interruption_is_said_after_the_starts_of_the_jobs_it_waits_for(
    tmp_path: Path,
) -> None:
    probe, slots = make_probe(None, "4")
    said = Said()
    runner = Runner(RunOptions(output_dir=tmp_path / "out"), probe, slots, said)
    publish = runner.engine.changes.publish

    def publish_then_interrupt(*changes: dict[str, Any]) -> None:
        publish(*changes)
        if any(c.get("event") == "start" and c.get("id") == 2 for c in changes):
            # As a Ctrl-C does: a callback on the loop, before the run reads the change.
            asyncio.get_running_loop().call_soon(runner._interrupt)

    runner.engine.changes.publish = publish_then_interrupt  # type: ignore[method-assign]
    source = items_from_commands(["sleep 0.3"] * 3, 1, str(tmp_path), dict(os.environ))
    summary = asyncio.run(asyncio.wait_for(runner.run(source), 30))
    assert summary.interrupted
    notice = next(i for i, line in enumerate(said.lines) if line.startswith("interrupted"))
    started = [line for line in said.lines if line.endswith("started")]
    assert said.lines[:notice] == started, said.lines
    running = {1: "1 running job", 2: "2 running jobs", 3: "3 running jobs"}[len(started)]
    assert f"waiting for {running} to finish" in said.lines[notice], said.lines
