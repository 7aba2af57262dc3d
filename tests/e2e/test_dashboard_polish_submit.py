"""The submit form warns of a script its jobs run that is not there from their folder
(`python nosuch.py`), as `gpuherd submit` does, in its words, on the jobs page it leads to
(before: queued without a word, and every job failed at run time). Over HTTP, as
test_dashboard_submit_more.py."""

from __future__ import annotations

import html
import re
from pathlib import Path

from test_dashboard_pages import post

from conftest import Herd

WARNING = re.compile(r'class="flash warning missing-script-warning">(.*?)</div>')


def submitted_page(herd: Herd, work: Path, **fields: str) -> tuple[str, list[str]]:
    """Submit the form (no GPU) from `work`: the jobs page's URL it leads to, and its
    missing-script warnings."""
    answer = post(herd, "/submit", htmx=False, gpus="0", cwd=str(work), **fields)
    assert answer.status == 303, answer.body
    where = answer.headers["location"]
    return where, [html.unescape(w) for w in WARNING.findall(herd.page(where))]


def cli_warnings(herd: Herd, work: Path, *command: str) -> list[str]:
    """What `gpuherd submit` warns of for `command`, without its `gpuherd: ` prefix."""
    said = herd.cli("submit", "--gpus", "0", "--", *command, cwd=work).stderr
    return [line.removeprefix("gpuherd: ") for line in said.splitlines()]


def test_a_script_not_there_is_warned_of_in_the_clis_words(
    shared_daemon: Herd, shared_work: Path
) -> None:
    herd = shared_daemon
    where, warnings = submitted_page(herd, shared_work, commands="python nosuch.py")
    (job,) = (int(i) for i in re.findall(r"submitted=(\d+)", where))
    assert where.endswith(f"&missing={job}")
    cli = cli_warnings(herd, shared_work, "python", "nosuch.py")
    assert cli == [
        f"warning: nosuch.py does not exist in {shared_work} (the job's working directory): the"
        " job will fail unless it is made before it starts; check the path or pass --cwd"
    ]
    assert warnings == cli  # before: none

    # Of two jobs, one runs it: said of that one, as `submit --file` says it.
    (shared_work / "there.py").write_text("")
    where, warnings = submitted_page(herd, shared_work, commands="python there.py\n./train.sh")
    there, train = (int(i) for i in re.findall(r"submitted=(\d+)-(\d+)", where)[0])
    assert where.endswith(f"&missing={train}")
    assert warnings == [
        f"warning: ./train.sh does not exist in {shared_work} (the jobs' working directory): the"
        " job that runs it will fail unless it is made before it starts; check the path or pass"
        " --cwd"
    ]

    # Said from the queue, not the URL: a link typed by hand warns of no script that is there.
    for forged in (f"submitted={there}&missing={there}", f"submitted={there}&missing=x"):
        assert "missing-script-warning" not in herd.page(f"/jobs?{forged}")


def test_the_forms_folder_and_environment_changes_are_the_ones_checked(
    shared_daemon: Herd, shared_work: Path, tmp_path: Path
) -> None:
    herd = shared_daemon
    (shared_work / "train.py").write_text("")
    where, warnings = submitted_page(herd, shared_work, commands="python train.py")
    assert (warnings, "missing=" in where) == ([], False)  # there: nothing to say

    # bash looks for its script on the job's PATH too: the form's PATH finds it.
    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "run.sh").write_text("true\n")
    (tools / "run.sh").chmod(0o755)
    env = f"PATH={tools}:/usr/bin:/bin"
    where, warnings = submitted_page(herd, shared_work, commands="bash run.sh", env=env)
    assert (warnings, "missing=" in where) == ([], False)
    _, warnings = submitted_page(herd, shared_work, commands="bash run.sh")
    assert warnings == [
        f"warning: run.sh does not exist in {shared_work} (the job's working directory): the"
        " job will fail unless it is made before it starts; check the path or pass --cwd"
    ]
