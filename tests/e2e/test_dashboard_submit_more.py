"""The submit form takes what a job's edit form takes: host memory, retries, retry delay,
timeout, grace and the jobs to wait for, under "More options", each read and refused as the
edit form and `gpuherd submit` do, named by its box's label; a dependency that already ended
badly cancels the jobs at once, and the jobs page says so in the CLI's words. Over HTTP, as
test_dashboard_pages.py (test_dashboard_submit_layout.py drives the form in chromium)."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from test_dashboard_pages import call, post
from test_dashboard_rough_edges import form_error

from conftest import Herd

MORE = re.compile(r'<details class="more-options"( open)?>')


def test_every_job_of_the_form_gets_the_more_options(
    shared_daemon: Herd, shared_work: Path
) -> None:
    herd = shared_daemon
    first, second, third = (herd.submit("--hold", "--gpus", "0", "--", "true") for _ in range(3))
    page = call(herd, "GET", "/submit").body
    assert [m.group(1) for m in MORE.finditer(page)] == [None]  # closed until needed
    answer = post(
        herd,
        "/submit",
        htmx=False,
        commands="echo one\necho two",
        gpus="0",
        cwd=str(shared_work),
        ram="1GiB",
        retries="2",
        retry_delay="30s",
        timeout="2h",
        grace="45s",
        after=f"#{first}",
        after_any=f"{second}",
        after_fail=f"{third}",
    )
    assert answer.status == 303, form_error(answer.body)
    ids = [int(i) for i in re.findall(r"\d+", answer.headers["location"].split("=")[1])]
    jobs = [herd.job(job_id) for job_id in range(ids[0], ids[-1] + 1)]
    assert [job["command"] for job in jobs] == ["echo one", "echo two"]
    for job in jobs:
        got = {k: job[k] for k in ("ram", "retries", "retry_delay", "timeout", "grace")}
        assert got == {
            "ram": 2**30,
            "retries": 2,
            "retry_delay": 30.0,
            "timeout": 7200.0,
            "grace": 45.0,
        }
        assert (job["after"], job["after_any"], job["after_fail"]) == ([first], [second], [third])
        assert job["state"] == "queued"  # waiting for them

    # Blank, each is what `gpuherd submit` gives without its option.
    plain = post(herd, "/submit", htmx=False, commands="true", hold="1", cwd=str(shared_work))
    job = herd.job(int(plain.headers["location"].rpartition("=")[2]))
    cli = herd.job(herd.submit("--hold", "--", "true"))
    keys = ("ram", "retries", "retry_delay", "timeout", "grace", "after", "after_any", "after_fail")
    assert {k: job[k] for k in keys} == {k: cli[k] for k in keys}


WRONG = [
    ("ram", "lots", "'host memory': invalid size 'lots'"),
    ("ram", "0GiB", "'host memory': invalid size '0GiB': must be greater than zero"),
    ("retries", "two", "'retries': 'two' is not a whole number"),
    ("retries", "-1", "'retries' must be 0 or more, got -1"),
    ("retries", "99999999999999999999", "'retries': 99999999999999999999 is too large (at most 2"),
    ("retry_delay", "soon", "'retry delay': invalid duration 'soon'"),
    ("timeout", "forever", "'timeout': invalid duration 'forever'"),
    ("grace", "soon", "'grace': invalid duration 'soon'"),
    ("after", "abc", "'after': invalid job id 'abc'"),
    ("after_any", "x", "'after any end of': invalid job id 'x'"),
    ("after_fail", "99999999999999999999", "'after a failure of': 99999999999999999999 is too"),
]


@pytest.mark.parametrize(("name", "text", "refusal"), WRONG)
def test_a_wrong_one_is_refused_by_its_label_as_the_edit_form_refuses_it(
    shared_daemon: Herd, shared_work: Path, name: str, text: str, refusal: str
) -> None:
    herd = shared_daemon
    fields = {"commands": "true", "hold": "1", "cwd": str(shared_work), name: text}
    answer = post(herd, "/submit", htmx=False, **fields)
    assert answer.status in (400, 422)
    said = form_error(answer.body)
    assert said.startswith(refusal) and "--" not in said, said
    assert f'name="{name}" value="{html.escape(text)}"' in answer.body  # kept to correct it
    assert [m.group(1) for m in MORE.finditer(answer.body)] == [" open"]  # and in view

    # The edit form's words for the same box, to the letter.
    job_id = herd.submit("--hold", "--gpus", "0", "--", "true")
    edited = post(herd, f"/ui/jobs/{job_id}/edit", **{name: text, f"was.{name}": ""})
    assert form_error(edited.body).removeprefix(f"job {job_id}: ") == said  # (the daemon's: its id)


def test_waiting_for_the_success_and_the_failure_of_one_job_is_refused(
    shared_daemon: Herd, shared_work: Path
) -> None:
    herd = shared_daemon
    other = herd.submit("--hold", "--gpus", "0", "--", "true")
    fields = {"commands": "true", "cwd": str(shared_work), "after": str(other)}
    answer = post(herd, "/submit", htmx=False, **fields, after_fail=f"#{other}")
    assert form_error(answer.body) == (
        f"job {other} is in both 'after' and 'after a failure of': a job cannot both succeed "
        "and fail; keep it in one of them"
    )


def test_a_job_waited_for_that_already_failed_cancels_them_with_the_cli_warning(
    shared_daemon: Herd, shared_work: Path
) -> None:
    herd = shared_daemon
    failed = herd.submit("--gpus", "0", "--", "false")
    herd.wait_state(failed, "failed")
    answer = post(
        herd, "/submit", htmx=False, commands="true\ntrue", cwd=str(shared_work), after=str(failed)
    )
    assert answer.status == 303
    where = answer.headers["location"]
    first, last = (int(i) for i in re.findall(r"submitted=(\d+)-(\d+)", where)[0])
    assert where.endswith(f"&cancelled={first}-{last}")
    for job_id in (first, last):
        assert herd.job(job_id)["state"] == "cancelled"
    warnings = re.findall(r'class="flash warning cancelled-warning">(.*?)</div>', herd.page(where))
    cli = herd.cli("submit", "--after", str(failed), "--", "true", cwd=shared_work)
    cli_id = int(cli.stdout.split()[-1])
    # As the CLI prints it (`gpuherd: warning: ...`), for these jobs.
    assert [html.unescape(w) for w in warnings] == [
        f"warning: jobs {first}-{last} are cancelled at once: job {failed}, which they wait "
        f"for, already failed (gpuherd retry {failed} {first}-{last} runs them all again)"
    ]
    assert cli.stderr == (
        f"gpuherd: warning: job {cli_id} is cancelled at once: job {failed}, which it waits "
        f"for, already failed (gpuherd retry {failed} {cli_id} runs both again)\n"
    )

    # A link typed by hand warns of no job that was not cancelled so.
    for forged in (f"submitted={failed}&cancelled={failed}", f"submitted={first}&cancelled=x"):
        assert "cancelled-warning" not in herd.page(f"/jobs?{forged}")


def test_the_forms_boxes_are_refused_as_every_jobs(shared_daemon: Herd, shared_work: Path) -> None:
    # They apply to every command line: "job 1 of the submission: this job can never run".
    fields = {"commands": "echo one\necho two", "gpus": "5", "cwd": str(shared_work)}
    answer = post(shared_daemon, "/submit", htmx=False, **fields)
    assert (answer.status, form_error(answer.body)) == (
        422,
        "this submission can never run: each of its 2 jobs asks for 5 GPUs but gpuherd has only 4"
        ": give fewer 'GPUs', at most 4",
    )
