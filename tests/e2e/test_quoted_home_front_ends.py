"""A program written with its `~` quoted (`'~/run.sh'`: the shell expands `~` only unquoted,
looks for a folder named `~`, and fails with `not found`, exit 127) is warned of by every way
a command is given, as `submit` warns of it (program_hints.quoted_home_hint): an `edit` of a
job's command and the dashboard's form said nothing, and their jobs failed as they started;
a sweep says it once, of its template. Real daemon, fake GPUs; the form over HTTP."""

from __future__ import annotations

import html
import re
from pathlib import Path

from test_dashboard_pages import post
from test_program_hints_front_ends import WARNING, cli_warnings

from conftest import Herd

WRITTEN = "'~/run-h341.sh'"
"""The program as written: a file no home folder has (the warning is the same either way)."""


def quoted(written: str, fix: str, who: str = "the job") -> str:
    return (
        f"the program {written} has its ~ quoted, and the shell does not expand ~ inside quotes:"
        f' {who} will fail with "not found"; write the ~ unquoted: {fix}'
    )


def test_an_edit_to_a_quoted_tilde_program_warns_and_the_job_fails_as_said(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    herd = shared_daemon
    [job] = herd.submit_lines(["true"], "--hold", "--gpus", "0", "--cwd", str(tmp_path))
    edited = herd.cli("edit", str(job), "--command", "'~/run-h341.sh' --lr 1")
    assert edited.stdout == f"job {job}: edited (command)\n"
    fix = f"gpuherd edit {job} --command '~/run-h341.sh --lr 1'"
    # Before: nothing said.
    assert edited.stderr == f"gpuherd: warning: job {job}: {quoted(WRITTEN, fix)}\n"
    herd.cli("release", str(job))
    ended = herd.wait_state(job, "succeeded", "failed")
    assert (ended["state"], ended["exit_code"]) == ("failed", 127)  # as it said


def test_the_dashboards_form_warns_of_it_once_for_its_lines_alike(
    shared_daemon: Herd, shared_work: Path
) -> None:
    herd, work = shared_daemon, shared_work
    lines = "'~/run-h341.sh' 1\n'~/run-h341.sh' 2\n~/run-h341.sh 3\n"
    answer = post(herd, "/submit", htmx=False, gpus="0", hold="on", cwd=str(work), commands=lines)
    assert answer.status == 303, answer.body
    where = answer.headers["location"]
    first = int(re.findall(r"submitted=(\d+)-(\d+)", where)[0][0])
    assert where.endswith(f"&missing={first}-{first + 1}")  # before: no missing= at all
    shown = [html.unescape(w) for w in WARNING.findall(herd.page(where))]
    fix = "write ~/run-h341.sh in 'commands'"
    assert shown == [f"warning: {quoted(WRITTEN, fix)}"]


def test_a_sweep_says_it_once_of_its_template(shared_daemon: Herd, shared_work: Path) -> None:
    herd, work = shared_daemon, shared_work
    sweep = ("sweep", "'~/run-h341.sh' --lr {lr}", "-p", "lr", "1", "2", "--name", "tilde-h341")
    swept = herd.cli(*sweep, "--gpus", "0", "--hold", cwd=work)
    fix = "write the sweep's command as '~/run-h341.sh --lr {lr}'"
    assert cli_warnings(swept.stderr) == [
        f"gpuherd: warning: {quoted(WRITTEN, fix, 'every point')}"
    ]
