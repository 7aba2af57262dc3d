"""NO_COLOR on a real terminal (a pseudo-terminal): no style at all, bold and dim included
(the bold headers and the dimmed `cancelled` were still written under NO_COLOR=1)."""

from __future__ import annotations

import re

from conftest import GPUHERD_BIN, Herd, Probe, Runs, on_a_terminal

SGR = b"\x1b["
STYLES = re.compile(rb"\x1b\[[0-9;]*m")
"""Select Graphic Rendition: colour, bold, dim (a live bar also moves the cursor: not styles)."""


def ran_ok(ran: tuple[int, bytes]) -> bytes:
    status, seen = ran
    assert status == 0, seen
    return seen


def without(env: dict[str, str], *names: str) -> dict[str, str]:
    return {k: v for k, v in env.items() if k not in names}


def test_ls_with_no_color_writes_no_escape_sequence(shared_daemon: Herd) -> None:
    project = ["--project", "no-color"]
    cancelled = shared_daemon.submit(*project, "--hold", "true")
    shared_daemon.cli("kill", str(cancelled))
    shared_daemon.submit(*project, "--hold", "true")
    ls = [GPUHERD_BIN, "ls", "--all", *project]
    here = shared_daemon.home.parent
    plain_env = without(shared_daemon.env, "NO_COLOR", "FORCE_COLOR")

    styled = ran_ok(on_a_terminal(ls, plain_env, here))
    assert b"\x1b[1mID\x1b[0m" in styled  # bold headers
    assert b"\x1b[2mcancelled\x1b[0m" in styled and b"\x1b[35mheld\x1b[0m" in styled
    for env in ({**plain_env, "NO_COLOR": "1"}, {**plain_env, "NO_COLOR": "1", "FORCE_COLOR": "1"}):
        shown = ran_ok(on_a_terminal(ls, env, here))
        assert SGR not in shown, shown
        assert b"cancelled" in shown and b"held" in shown


def test_run_with_no_color_styles_nothing_in_its_progress_bar(runs: Runs, probe: Probe) -> None:
    jobs = runs.root / "jobs.txt"
    jobs.write_text(probe.cmd("a") + "\n")
    run = [GPUHERD_BIN, "run", "--fake-gpus", "1", str(jobs), "--output-dir"]
    plain_env = without(runs.env, "NO_COLOR", "FORCE_COLOR")
    styled = ran_ok(on_a_terminal([*run, str(runs.root / "a")], plain_env, runs.cwd))
    assert b"\x1b[1mgpuherd run" in styled

    no_color = {**plain_env, "NO_COLOR": "1"}
    shown = ran_ok(on_a_terminal([*run, str(runs.root / "b")], no_color, runs.cwd))
    assert b"gpuherd run" in shown  # the live bar, drawn with cursor moves alone
    assert STYLES.findall(shown) == [], shown
