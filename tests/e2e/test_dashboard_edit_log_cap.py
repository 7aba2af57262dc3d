"""A job page's *Edit this job* form changes a waiting job's max log size, as `gpuherd edit
--max-log-size` does: typed, `none` or emptied (no cap), a wrong one refused by its box's label.
Over HTTP, as test_dashboard_pages.py."""

from __future__ import annotations

import html
import re

from test_dashboard_pages import post

from conftest import Herd

MiB = 2**20


def edited(herd: Herd, job: int, typed: str) -> str:
    """The form's answer to `typed` in its max log size box, the others as the page shows."""
    page = herd.page(f"/jobs/{job}")
    shown = dict(re.findall(r'name="was\.(\w+)" value="([^"]*)"', page))
    was = {f"was.{name}": value for name, value in shown.items()}
    answer = post(herd, f"/ui/jobs/{job}/edit", **{**shown, "max_log_size": typed}, **was)
    return html.unescape(answer.body)


def test_the_edit_form_sets_and_removes_the_cap(shared_daemon: Herd) -> None:
    herd = shared_daemon
    job = herd.submit("--hold", "--gpus", "0", "--max-log-size", "2MiB", "--", "true")
    assert 'name="was.max_log_size" value="2.0 MiB"' in herd.page(f"/jobs/{job}")
    assert f"job {job}: edited ('max log size' 2.0 MiB -> 10.0 GiB)" in edited(herd, job, "10GiB")
    assert herd.job(job)["max_log_size"] == 10 * 2**30
    said = edited(herd, job, "10")
    assert "'max log size': 10 is 10 bytes: give a unit, e.g. 10GiB; or none (no cap)" in said
    assert f"job {job}: edited ('max log size' 10.0 GiB -> none)" in edited(herd, job, "")
    assert herd.job(job)["max_log_size"] is None
    assert f"job {job}: edited ('max log size' none -> 3.0 MiB)" in edited(herd, job, "3MiB")
    assert f"job {job}: edited ('max log size' 3.0 MiB -> none)" in edited(herd, job, "none")
    assert herd.job(job)["max_log_size"] is None
