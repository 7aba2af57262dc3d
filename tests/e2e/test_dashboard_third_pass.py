"""The dashboard saying what the CLI says: a lost GPU drained (`gpuherd gpus drain 1`) was
`Configured but not seen by the probe: GPU 1` alone, its row `lost` with a *drain* button, as
though the drain was not taken (the CLI: `1 (draining)`, `lost, draining`); the submit form's
jobs page said nothing of the submission's warnings the CLI prints (`--only-gpus 0,5` on GPUs
0-3, a `--retry-delay` never used); a waiting job's page read `- (asked for 1 GPU)`. Over
HTTP, as test_dashboard_pages.py."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

from test_dashboard_pages import post

from conftest import Herd, wait_for

GPU = {"name": "Fake A100", "memory_total": "80GiB"}


def text(found: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", found)).strip()


def missing_line(page: str) -> str:
    [found] = re.findall(r'<p class="warn"[^>]*>(Configured but not seen.*?)</p>', page, re.S)
    return text(found)


def test_a_lost_gpu_drained_says_so_on_the_pages(herd: Herd, tmp_path: Path) -> None:
    state = tmp_path / "gpus.json"
    state.write_text(json.dumps({"gpus": [GPU, GPU, GPU]}))
    herd.start("--fake-gpus", str(state))
    job = herd.submit("--only-gpus", "1", "sleep 300")  # keeps GPU 1's row once it is lost
    herd.wait_state(job, "running")
    state.write_text(json.dumps({"gpus": [GPU, {"lost": True}, {"lost": True}]}))
    wait_for(lambda: herd.json("gpus")["missing"] == [1, 2], what="GPUs 1-2 to be lost")
    assert missing_line(herd.page("/gpus")) == "Configured but not seen by the probe: GPU 1-2"

    herd.cli("gpus", "drain", "1", "2")
    for path in ("/gpus", "/"):  # (the overview says it under its cards too)
        line = missing_line(herd.page(path))
        assert line == "Configured but not seen by the probe: GPU 1-2 (draining)", path
    page = herd.page("/gpus")
    row = re.search(r'<tr id="gpu-1">(.*?)</tr>', page, re.S)
    assert row is not None
    assert '<span class="pill gpu-lost">lost, draining</span>' in row.group(1)
    # The button undoes the drain, as for a GPU seen: it offered to drain it again.
    assert 'value="enable">enable</button>' in row.group(1)
    assert 'value="drain"' not in row.group(1)

    herd.cli("gpus", "enable", "2")
    page = herd.page("/gpus")
    assert missing_line(page) == "Configured but not seen by the probe: GPU 1-2 (1 draining)"
    herd.cli("gpus", "enable", "1")
    row = re.search(r'<tr id="gpu-1">(.*?)</tr>', herd.page("/gpus"), re.S)
    assert row is not None and '<span class="pill gpu-lost">lost</span>' in row.group(1)
    assert 'value="drain">drain</button>' in row.group(1)
    herd.cli("kill", str(job))


def test_the_submit_forms_jobs_page_says_the_submissions_warnings(
    herd: Herd, tmp_path: Path
) -> None:
    herd.start("--fake-gpus", "4")
    fields = {"commands": "true", "cwd": str(tmp_path), "hold": "on"}
    answer = post(herd, "/submit", htmx=False, **fields, only_gpus="0,5")
    assert answer.status == 303
    where = answer.headers["location"]
    job = int(re.findall(r"submitted=(\d+)", where)[0])
    page = herd.page(where)
    notes = [text(n) for n in re.findall(r'class="flash warning submit-note">(.*?)</div>', page)]
    # As `gpuherd submit` prints them (`gpuherd: warning: ...`).
    assert notes == [
        f"warning: job {job}: --only-gpus 0,5 names GPU 5, which is not configured "
        "(configured: 0,1,2,3) and not on this machine (the probe does not see it): the job "
        "runs only on GPU 0"
    ]

    answer = post(
        herd, "/submit", htmx=False, **{**fields, "commands": "true\ntrue"}, retries="0",
        retry_delay="30s",
    )  # fmt: skip
    where = answer.headers["location"]
    first, last = (int(i) for i in re.findall(r"submitted=(\d+)-(\d+)", where)[0])
    page = herd.page(where)
    notes = [text(n) for n in re.findall(r'class="flash warning submit-note">(.*?)</div>', page)]
    cli = herd.cli("submit", "--hold", "--retries", "0", "--retry-delay", "30s", "--", "true")
    assert notes == [
        f"warning: jobs {first}-{last} are never retried (--retries 0), so their --retry-delay "
        f"30s does nothing: give --retries N with it (while they wait: gpuherd edit "
        f"{first}-{last} --retries 2)"
    ]
    assert "never retried (--retries 0), so its --retry-delay 30s does nothing" in cli.stderr

    # Nothing to say, nothing said; a link typed by hand warns of no job that is not so.
    answer = post(herd, "/submit", htmx=False, **fields, only_gpus="0-3")
    assert "noted=" not in answer.headers["location"]
    assert "submit-note" not in herd.page(answer.headers["location"])
    herd.cli("edit", f"{first}-{last}", "--retries", "2")  # edited since: said no more
    assert "submit-note" not in herd.page(f"/jobs?submitted={first}-{last}&noted={first}-{last}")
    assert "submit-note" not in herd.page(f"/jobs?submitted={job}&noted=x")


def test_a_waiting_jobs_gpus_are_its_ask_alone(herd: Herd) -> None:
    herd.start("--fake-gpus", "4")
    job = herd.submit("--hold", "--gpus", "2", "--", "true")
    page = herd.page(f"/jobs/{job}")
    [gpus] = re.findall(r"<dt>GPUs</dt><dd>(.*?)</dd>", page, re.S)
    assert text(gpus) == "(asked for 2 GPUs)"  # was `- (asked for 2 GPUs)`
    herd.cli("release", str(job))
    herd.wait_state(job, "succeeded")
    [gpus] = re.findall(r"<dt>GPUs</dt><dd>(.*?)</dd>", herd.page(f"/jobs/{job}"), re.S)
    assert text(gpus) == "0,1 (asked for 2 GPUs)"  # one that ran: its GPUs, as before
