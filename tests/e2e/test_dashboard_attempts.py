"""A job page showing an older attempt (`/jobs/N?attempt=K`) gives that attempt's facts."""

from __future__ import annotations

import re

from conftest import Herd

# Each attempt ends with its own status (attempt 1: exit 3, attempt 2: exit 4).
ENDS = "exit $((GPUHERD_ATTEMPT + 2))"


def facts(body: str) -> dict[str, str]:
    """The page's facts list, as {term: text} (the attempts table below it left out)."""
    found = re.search(r'<dl class="facts">(.*?)</dl>', body, re.S)
    assert found, body
    pairs = re.findall(r"<dt>(.*?)</dt>\s*<dd[^>]*>(.*?)</dd>", found.group(1), re.S)
    return {term: re.sub(r"<[^>]+>", "", text).strip() for term, text in pairs}


def test_an_older_attempts_page_shows_its_pid_times_and_end(shared_daemon: Herd) -> None:
    daemon = shared_daemon
    job_id = daemon.submit("--gpus", "0", "--", "sh", "-c", ENDS)
    daemon.wait_state(job_id, "failed")
    daemon.cli("retry", str(job_id))
    daemon.wait_state(job_id, "failed")
    first, second = daemon.job(job_id)["attempts"]
    assert first["pid"] != second["pid"]

    older = facts(daemon.page(f"/jobs/{job_id}?attempt=1"))
    assert older["Attempt"] == "1 of 2"
    assert older["PID"] == str(first["pid"])
    assert older["Exit status"] == "exit 3"
    assert older["Run time"] != "-"

    latest = facts(daemon.page(f"/jobs/{job_id}"))
    assert latest["Attempt"] == "2 of 2"
    assert latest["PID"] == str(second["pid"])
    assert latest["Exit status"] == "exit 4"
