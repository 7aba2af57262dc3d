"""The dashboard's submit and edit forms take a job's output and error files, checked as
`submit --output` checks them and refused in the words of their boxes; a job page says why a
log has nothing to show, as `gpuherd log` does. Over HTTP, as test_dashboard_pages.py."""

from __future__ import annotations

import html
import re
from pathlib import Path

from test_dashboard_pages import post

from conftest import Herd


def test_the_submit_form_takes_output_and_error_files(
    shared_daemon: Herd, shared_work: Path
) -> None:
    herd, missing = shared_daemon, shared_work / "nowhere"
    fields = {"commands": "echo out; echo err >&2", "gpus": "0", "cwd": str(shared_work)}
    bad = post(herd, "/submit", htmx=False, **fields, output="nowhere/x.log")
    assert bad.status == 422 and 'value="nowhere/x.log"' in bad.body  # shown again
    [said] = re.findall(r'id="submit-error">(.*?)</div>', bad.body)
    assert html.unescape(said) == (
        f"'output file' nowhere/x.log: the folder {missing} does not exist: create it "
        f"(mkdir -p {missing}) first"
    )
    answer = post(herd, "/submit", htmx=False, **fields, output="o-%j.log", error="e.log")
    assert answer.status == 303
    job = int(answer.headers["location"].rpartition("=")[2])
    herd.wait_state(job, "succeeded")
    assert (shared_work / f"o-{job}.log").read_text() == "out\n"
    assert (shared_work / "e.log").read_text() == "err\n"


def test_the_edit_form_sets_and_clears_them(shared_daemon: Herd, shared_work: Path) -> None:
    herd = shared_daemon
    job = int(herd.cli("submit", "-q", "--hold", "echo hi", cwd=shared_work).stdout)
    page = herd.page(f"/jobs/{job}")
    shown = dict(re.findall(r'name="was\.(\w+)" value="([^"]*)"', page))
    assert shown["output"] == shown["error"] == ""
    was = {f"was.{name}": value for name, value in shown.items()}
    path = f"/ui/jobs/{job}/edit"
    bad = post(herd, path, **{**shown, "output": "nowhere/x.log"}, **was)
    # (the form is the job's own: its refusals start with the box, not the job)
    assert '">&#39;output file&#39; nowhere/x.log: the folder ' in bad.body
    edited = post(herd, path, **{**shown, "output": "o.log"}, **was)
    said = f"job {job}: edited ('output file' none -> {shared_work}/o.log)"
    assert said in html.unescape(edited.body)
    page = herd.page(f"/jobs/{job}")
    assert f'name="was.output" value="{shared_work}/o.log"' in page
    shown = dict(re.findall(r'name="was\.(\w+)" value="([^"]*)"', page))
    was = {f"was.{name}": value for name, value in shown.items()}
    cleared = post(herd, path, **{**shown, "output": ""}, **was)  # emptied: cleared
    said = f"job {job}: edited ('output file' {shared_work}/o.log -> none)"
    assert said in html.unescape(cleared.body)
    assert herd.job(job)["output"] is None


def test_a_job_page_says_why_a_log_is_empty_as_log_does(
    shared_daemon: Herd, shared_work: Path
) -> None:
    herd = shared_daemon
    dropped = int(herd.cli("submit", "-q", "-o", "/dev/null", "echo x", cwd=shared_work).stdout)
    (shared_work / "gone").touch()  # a file where the folder %x names would be created
    unopened = int(
        herd.cli("submit", "-q", "-n", "gone", "-o", "%x/o.log", "true", cwd=shared_work).stdout
    )
    herd.wait_state(dropped, "succeeded")
    herd.wait_state(unopened, "failed")
    expected = {
        (dropped, "stdout"): f"job {dropped}: its stdout went to /dev/null (--output): nothing",
        (dropped, "stderr"): f"job {dropped}: its stderr went to /dev/null (--output): nothing",
        (unopened, "stdout"): f"job {unopened}: attempt 1 never started: cannot create the ",
    }
    for (job, stream), start in expected.items():
        flag = ("--stderr",) if stream == "stderr" else ()
        said = herd.cli("log", str(job), *flag, check=False).stderr
        [shown] = re.findall(f'id="log-{stream}-none">(.*?)</p>', herd.page(f"/jobs/{job}"))
        assert said == f"gpuherd: error: {html.unescape(shown)}\n"
        assert html.unescape(shown).startswith(start)


def test_a_job_page_names_the_files_its_output_went_to_as_show_does(
    shared_daemon: Herd, shared_work: Path
) -> None:
    # The page showed the log but not where it was: `show` named the files, the page did not.
    herd = shared_daemon
    args = ["-q", "--retries", "1", "-o", "o-%j-%a.log", "-e", "e-%j.log", "echo x; exit 1"]
    job = int(herd.cli("submit", *args, cwd=shared_work).stdout)
    both = int(herd.cli("submit", "-q", "--hold", "-o", "both.log", "true", cwd=shared_work).stdout)
    plain = int(herd.cli("submit", "-q", "echo plain", cwd=shared_work).stdout)
    herd.wait_state(job, "failed")
    herd.wait_state(plain, "succeeded")

    def named(page: str) -> dict[str, str]:
        return dict(re.findall(r'id="log-(std\w+)-file">(.*?)</code>', herd.page(page)))

    latest = {"stdout": f"{shared_work}/o-{job}-2.log", "stderr": f"{shared_work}/e-{job}.log"}
    assert named(f"/jobs/{job}") == latest
    assert named(f"/jobs/{job}?attempt=1")["stdout"] == f"{shared_work}/o-{job}-1.log"
    shown = herd.cli("show", str(job)).stdout
    assert all(f"{stream:<11}{path}\n" in shown for stream, path in latest.items()), shown
    # Before its start: where the first attempt's will go, stderr with stdout.
    to = f"{shared_work}/both.log"
    assert named(f"/jobs/{both}") == {"stdout": to, "stderr": f"{to} (with stdout)"}
    assert named(f"/jobs/{plain}") == {}  # in its folder: the download link is the way
