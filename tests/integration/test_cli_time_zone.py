"""`ls` and `show` say a held job's --begin time and a retry's wait in the CLI's time zone,
not the daemon's: a daemon started by systemd runs in UTC while its user's shell may not."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.conftest import Herd, wait_for

CLI_ZONE = "Asia/Tokyo"  # UTC+9 all year: never the daemon's (UTC) clock


def _said(at: float, zone: str) -> str:
    """`at` as format_moment says it now in `zone`: the CLI's own words, asked of a process
    in that zone (this one's is the test machine's)."""
    code = "import time; from gpuherd.core.when import format_moment as f"
    code += f"; print(f({at!r}, time.time()))"
    env = {**os.environ, "TZ": zone}
    return subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    ).stdout.strip()


def test_begin_and_retry_at_are_said_in_the_clis_zone(herd: Herd) -> None:
    herd.env["TZ"] = "UTC"  # the daemon's (systemd leaves TZ unset: UTC)
    herd.start("--fake-gpus", "4")
    there = {**herd.env, "TZ": CLI_ZONE}
    begin = herd.submit("--begin", "+3h", "true")
    retried = herd.submit("--retries", "1", "--retry-delay", "3h", "false")
    waiting = wait_for(lambda: herd.job(retried).get("retry_at"), 30, "the retry's wait")
    held = herd.job(begin)["begin"]
    said_begin = f"held until {_said(held, CLI_ZONE)} (--begin)"
    said_retry = f"retrying at {_said(waiting, CLI_ZONE)} (--retry-delay 3h)"
    listed = herd.cli("ls", env=there).stdout
    assert said_begin in listed and said_retry in listed, listed
    shown = herd.cli("show", str(begin), env=there).stdout
    assert f"state      held — {said_begin}" in shown, shown
    shown = herd.cli("show", str(retried), env=there).stdout
    assert f"queued — {said_retry}" in shown, shown
    # The daemon's own words are in UTC: the CLI in UTC says them as they are.
    in_utc = herd.cli("ls", env={**herd.env, "TZ": "UTC"}).stdout
    assert f"held until {_said(held, 'UTC')} (--begin)" in in_utc, in_utc


def test_the_daemons_answers_say_moments_in_the_clis_zone(herd: Herd) -> None:
    # `edit --begin 23:30` typed in Tokyo was read back as the UTC daemon's `-> 14:30`.
    herd.env["TZ"] = "UTC"
    herd.start("--fake-gpus", "4")
    there = {**herd.env, "TZ": CLI_ZONE}
    held = herd.submit("--hold", "true")
    edited = herd.cli("edit", str(held), "--begin", "23:30", env=there).stdout
    begin = herd.job(held)["begin"]
    assert _said(begin, CLI_ZONE).endswith("23:30"), begin
    assert f"(begin none -> {_said(begin, CLI_ZONE)}: held until then" in edited, edited
    # The job's history keeps the daemon's zone, as before: read by anyone, from anywhere.
    [event] = [e for e in herd.json("show", str(held))["events"] if e["event"] == "edit"]
    assert event["detail"].startswith(f"begin none -> {_said(begin, 'UTC')}: held"), event
    retried = herd.submit("--retries", "1", "--retry-delay", "3h", "false")
    waiting = wait_for(lambda: herd.job(retried).get("retry_at"), 30, "the retry's wait")
    refused = herd.cli("retry", str(retried), env=there, check=False).stderr
    assert f"waiting out its --retry-delay until {_said(waiting, CLI_ZONE)}:" in refused, refused
    shorter = herd.cli("edit", str(retried), "--retry-delay", "2h", env=there).stdout
    assert f"retrying at {_said(waiting - 3600, CLI_ZONE)})" in shorter, shorter
    # A client that sends no zone (curl, a browser) is answered in the daemon's, as before.
    refused = herd.cli("retry", str(retried), env={**herd.env, "TZ": "UTC"}, check=False).stderr
    assert f"--retry-delay until {_said(waiting - 3600, 'UTC')}:" in refused, refused
