"""A job's page, over the Unix socket: a failure whose last stderr line is long, a progress
line begun before the page's tail (both as `gpuherd show` prints them), a job removed from
its own page going to the jobs list, and a sweep point's sweep and metrics."""

from __future__ import annotations

import html
import re
import shlex
from pathlib import Path

from test_dashboard_pages import call, post

from conftest import Herd

FAILING = "import sys; sys.stderr.write({text}); raise ValueError('bad batch: ' + {line})"


def _python(code: str) -> str:
    return "python3 -c " + shlex.quote(code)


def _between(page: str, start: str, end: str) -> str:
    at = page.index(start) + len(start)
    return html.unescape(page[at : page.index(end, at)])


def _box(page: str, stream: str) -> str:
    """The text of a log's box as the page was drawn."""
    return _between(page, f'<pre id="log-{stream}"', "</pre>").partition(">")[2]


def _failure(page: str) -> list[str]:
    """The last lines of its stderr at the top of the page ([] without the block)."""
    if 'id="job-failure"' not in page:
        return []
    block = page[page.index('id="job-failure"') :]
    return _between(block, '<pre class="log">', "</pre>").split("\n")


def _shown(herd: Herd, job_id: int) -> list[str]:
    """`gpuherd show`'s last lines of stderr."""
    out = herd.cli("show", str(job_id)).stdout
    return [line[2:] for line in out.split("last lines of stderr\n")[1].splitlines()]


def test_a_failure_whose_last_line_is_long_shows_its_end(shared_daemon: Herd) -> None:
    """A last line longer than the page's 64 KiB tail showed the stderr box "(empty)" and no
    lines at the top; one of 7 KB (longer than the 4 KiB the top read) no lines at the top."""
    herd = shared_daemon
    jobs = {}
    for count in (10000, 900):
        line = f"', '.join(['0.1234'] * {count})"
        jobs[count] = herd.submit(
            "--gpus", "0", "--", _python(FAILING.format(text="''", line=line))
        )
    for job_id in jobs.values():
        herd.wait_state(job_id, "failed")

    huge = "ValueError: bad batch: " + ", ".join(["0.1234"] * 10000)  # 80 KB
    page = call(herd, "GET", f"/jobs/{jobs[10000]}").body
    assert _box(page, "stderr") == "…" + huge[-(64 * 1024 - 1) :] + "\n"  # its end, cut
    assert _failure(page) == ["…" + huge[-499:]]  # 500 characters
    assert _shown(herd, jobs[10000]) == ["…" + huge[-(64 * 1024 - 1) :]]  # as `show` prints it

    long = "ValueError: bad batch: " + ", ".join(["0.1234"] * 900)  # 7 KB
    page = call(herd, "GET", f"/jobs/{jobs[900]}").body
    assert _box(page, "stderr").endswith("<module>\n" + long + "\n")
    traceback = ["Traceback (most recent call last):", '  File "<string>", line 1, in <module>']
    assert _failure(page) == [*traceback, "…" + long[-499:]]  # and the end of the long line
    assert _shown(herd, jobs[900]) == [*traceback, long]  # (show prints it whole)
    fragment = call(herd, "GET", f"/ui/jobs/{jobs[900]}").body  # its head drawn again, live
    assert _failure(fragment) == _failure(page)


def test_a_progress_line_begun_before_the_tail_shows_its_last_drawing(shared_daemon: Herd) -> None:
    """The page dropped the tail's first line, begun before it: a progress bar redrawn there
    lost its last drawing, which lies wholly in the tail (after its last `\\r`); `gpuherd
    show` printed it."""
    herd = shared_daemon
    bar = "''.join('\\r%5d|%s' % (i, '#' * 20) for i in range(6000)) + '\\n'"
    job = herd.submit("--gpus", "0", "--", _python(FAILING.format(text=bar, line="'x'")))
    herd.wait_state(job, "failed")
    page = call(herd, "GET", f"/jobs/{job}").body
    last = f"{5999:5d}|{'#' * 20}"
    tail = _box(page, "stderr").split("\n")
    assert tail[0] == last and tail[-2:] == ["ValueError: bad batch: x", ""]
    assert 'id="log-stderr-cut"' in page and 'id="log-stderr-cut" hidden' not in page
    assert _failure(page)[0] == last and _failure(page)[-1] == "ValueError: bad batch: x"
    assert _shown(herd, job) == _failure(page)  # page and CLI agree


def test_a_job_removed_from_its_page_goes_to_the_jobs_list(shared_daemon: Herd) -> None:
    """The page said `job N: removed`, then `no job N`, and stayed, its buttons and downloads
    live-looking: now the browser goes to /jobs, which says `job N: removed`."""
    herd = shared_daemon
    jobs = [herd.submit("--gpus", "0", "--", "true") for _ in range(4)]
    for job_id in jobs:
        herd.wait_state(job_id, "succeeded")
    first, second, third, fourth = jobs
    own = post(herd, "/ui/jobs/act", ids=str(first), action="rm", next=f"/jobs/{first}")
    assert own.headers["hx-redirect"] == f"/jobs?removed={first}"
    plain = post(herd, "/ui/jobs/act", False, ids=str(second), action="rm", next=f"/jobs/{second}")
    assert plain.status == 303 and plain.headers["location"] == f"/jobs?removed={second}"
    page = call(herd, "GET", f"/jobs?removed={first}").body
    assert f'<div class="flash ok" id="removed">job {first}: removed</div>' in page
    # From the jobs list (or another job's page): answered there, as before.
    listed = post(herd, "/ui/jobs/act", ids=str(third), action="rm", next="/jobs")
    assert "hx-redirect" not in listed.headers and f"job {third}: removed" in listed.body
    # A job there is (a URL typed, kept) is not said to be removed.
    assert 'id="removed"' not in call(herd, "GET", f"/jobs?removed={fourth}").body
    running = herd.submit("--gpus", "0", "--", "sleep 60")
    herd.wait_state(running, "running")  # refused: its page stays, and says why
    refused = post(herd, "/ui/jobs/act", ids=str(running), action="rm", next=f"/jobs/{running}")
    assert "hx-redirect" not in refused.headers and 'class="flash error"' in refused.body


def test_a_sweep_points_page_links_its_sweep_and_shows_its_metrics(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    """`gpuherd show` says `sweep NAME`; the page said nothing of it, nor of its metrics."""
    herd = shared_daemon
    script = tmp_path / "train.py"  # metrics of 0.123456789 failing, then 0.9 succeeding
    script.write_text(
        "import json, os, sys\n"
        "again = os.path.exists(sys.argv[3])\n"
        "acc = 0.9 if again else 0.123456789\n"
        "metrics = {'acc': acc, 'lr': float(sys.argv[2]), 'opt': 'adam'}\n"
        "with open(os.path.join(sys.argv[1], 'metrics.json'), 'w') as f:\n"
        "    json.dump(metrics, f)\n"
        "sys.exit(0 if again else 1)\n"
    )
    flag = tmp_path / "second-run"
    command = f"python3 {script} {{run_dir}} {{lr}} {flag}"
    args = ("sweep", command, "--gpus", "0", "--name", "lr-grid", "-p", "lr", "0.5")
    herd.cli(*args, "--results-dir", str(tmp_path / "res"))
    (first,) = [j["id"] for j in herd.all_jobs() if j["sweep"] == "lr-grid"]
    herd.wait_state(first, "failed")
    flag.touch()
    herd.cli(*args, "--results-dir", str(tmp_path / "res"))  # the failed point runs again
    (second,) = [j["id"] for j in herd.all_jobs() if j["sweep"] == "lr-grid" and j["id"] != first]
    herd.wait_state(second, "succeeded")

    def metrics(job_id: int) -> dict[str, str]:
        page = call(herd, "GET", f"/jobs/{job_id}").body
        assert '<dt>Sweep</dt><dd><a id="job-sweep" href="/sweeps/lr-grid">lr-grid →</a>' in page
        table = _between(page, '<table class="env" id="job-metrics">', "</table>")
        return dict(re.findall(r"<tr><td><code>(.*?)</code></td><td>(.*?)</td></tr>", table))

    # As the sweep's table shows them (6 digits); the earlier run's its own (previous-runs/1).
    assert metrics(second) == {"acc": "0.9", "lr": "0.5", "opt": "adam"}
    assert metrics(first) == {"acc": "0.123457", "lr": "0.5", "opt": "adam"}
    sweep = call(herd, "GET", "/sweeps/lr-grid").body
    assert '<td class="num metric" data-metric="acc">0.9</td>' in sweep
    alone = herd.submit("--gpus", "0", "--", "true")  # no sweep's: no rows of one
    herd.wait_state(alone, "succeeded")
    page = call(herd, "GET", f"/jobs/{alone}").body
    assert 'id="job-sweep"' not in page and 'id="job-metrics"' not in page
