"""The dashboard says that the scheduler fails, atop every page, as `gpuherd daemon status`
does: the error, since when, and where the daemon log is (api/scheduler_banner.py). Before,
its pages showed jobs queued and GPUs idle, and no reason. The banner goes once passes work."""

from __future__ import annotations

import html
import re
import time
from datetime import datetime

from conftest import Herd, wait_for
from scheduler_fault import FAULT, break_passes, fault_env, mend

BANNER = re.compile(r'<div class="flash warning" id="scheduler-failing">(.*?)</div>', re.S)


def banner(page: str) -> str | None:
    """The scheduler's banner on a page (its text as read), None if it has none."""
    found = BANNER.findall(page)
    assert len(found) <= 1, found
    return " ".join(html.unescape(re.sub(r"<[^>]+>", "", found[0])).split()) if found else None


def test_every_page_says_the_scheduler_fails_until_passes_work_again(herd: Herd) -> None:
    herd.env.update(fault_env(herd.home.parent))
    herd.start("--fake-gpus", "1")
    assert banner(herd.page("/")) is None
    assert 'id="scheduler"' in herd.page("/")  # (the place the page fills as it polls)
    waiting = herd.submit("--", "true")
    herd.wait_state(waiting, "succeeded")
    before = int(time.time())
    break_passes(herd)
    stuck = herd.submit("--", "true")  # (a pass for it fails)
    failing = wait_for(
        lambda: herd.json("daemon", "status")["scheduler_failing"], what="the scheduler to fail"
    )
    assert f"({FAULT}); see" in failing, failing

    pages = ["/", "/jobs?state=succeeded", f"/jobs/{waiting}", "/submit", "/gpus", "/sweeps"]
    pages.append("/sweeps/nope")  # (its 404 page)
    for path in [*pages, "/ui/scheduler"]:  # (the fragment the pages poll)
        said = banner(herd.page(path))
        assert said is not None, path
        since = re.fullmatch(
            "Not starting: the scheduler fails since (.{19}) "
            rf"\({re.escape(FAULT)}\): queued jobs wait until a pass works again \(it is "
            r"tried again by itself\)\. Its traceback is in the daemon log, "
            f"{re.escape(str(herd.home / 'daemon.log'))} \\(gpuherd daemon log prints it\\)\\.",
            said,
        )
        assert since is not None, said
        at = datetime.strptime(since[1], "%Y-%m-%d %H:%M:%S").timestamp()
        assert before <= at <= time.time(), said

    mend(herd)  # the next retry works
    assert herd.wait_state(stuck, "succeeded", "failed")["state"] == "succeeded"
    assert herd.json("daemon", "status")["scheduler_failing"] is None
    for path in [*pages, "/ui/scheduler"]:
        assert banner(herd.page(path)) is None, path
