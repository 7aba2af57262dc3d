"""A program the job's shell will not find as written (a file of its folder named without `./`,
which the shell looks for on PATH alone; one name with a space in it) is warned of by every
way in, as `submit` and `edit` warn of it, with the fix written where it was given: Python's
`herd.submit(...)`, a sweep's command (said once, however many points), the dashboard's
'commands' box. Before, the Python API, `sweep` (CLI, file and Python) and the submit form said
nothing, and every job or point failed as it started (`not found`, exit 127). Real daemon,
fake GPUs, real jobs; the form over HTTP."""

from __future__ import annotations

import html
import json
import re
import warnings
from pathlib import Path

from test_dashboard_pages import post

import gpuherd
from conftest import Herd


def script(folder: Path, name: str = "job.sh", executable: bool = True) -> Path:
    path = folder / name
    path.write_text('#!/bin/sh\necho ran "$@"\n')
    path.chmod(0o755 if executable else 0o644)
    return path


def not_on_path(word: str, folder: Path, fix: str, who: str = "the job") -> str:
    return f'{word} is a file in {folder} but not on PATH: {who} will fail with "not found"; {fix}'


def spaced(word: str, fix: str, who: str = "the job") -> str:
    return (
        f"the command's program is {word!r}, one name with spaces in it, which names no program:"
        f' {who} will fail with "not found"; give its words apart ({fix})'
    )


def said(call: object) -> list[str]:
    """The warnings a Python API call (a no-argument callable) gives, as their text."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert callable(call)
        call()
    return [str(warning.message) for warning in caught]


def cli_warnings(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("gpuherd: warning: ")]


def test_python_submit_warns_with_its_own_call_and_the_fix_runs(
    shared_daemon: Herd, shared_work: Path
) -> None:
    herd, work = shared_daemon, shared_work
    script(work)
    api = gpuherd.connect(herd.home)
    # (`--cwd` of the command's own: not respelled `cwd=` as an option of Python's would be)
    jobs = []
    warned = said(lambda: jobs.append(api.submit("job.sh --cwd a > out.txt", gpus=0, cwd=work)))
    assert warned == [not_on_path("job.sh", work, "herd.submit('./job.sh ...') (or sh job.sh)")]
    failed = herd.wait_state(jobs[0].id, "succeeded", "failed")
    assert (failed["state"], failed["exit_code"]) == ("failed", 127)  # as it said
    # The fix, as said (the rest of the command as it was): no warning, and it runs.
    assert (
        said(lambda: jobs.append(api.submit("./job.sh --cwd a > out.txt", gpus=0, cwd=work))) == []
    )
    assert herd.wait_state(jobs[1].id, "succeeded", "failed")["state"] == "succeeded"
    assert (work / "out.txt").read_text() == "ran --cwd a\n"


def test_python_submit_of_a_script_not_executable_or_a_spaced_word(
    shared_daemon: Herd, shared_work: Path
) -> None:
    herd, work = shared_daemon, shared_work
    script(work, "plain.sh", executable=False)
    api = gpuherd.connect(herd.home)
    fix = "herd.submit('sh plain.sh') (or chmod +x plain.sh, then herd.submit('./plain.sh'))"
    assert said(lambda: api.submit(["plain.sh"], gpus=0, hold=True, cwd=work)) == [
        not_on_path("plain.sh", work, fix)
    ]
    # Words given as a list are quoted each: a first one with a space is one program's name.
    words = ["python3 train.py", "--lr", "0.1"]
    assert said(lambda: api.submit(words, gpus=0, hold=True, cwd=work)) == [
        spaced("python3 train.py", "herd.submit('python3 train.py ...')")
    ]


def test_a_sweep_says_it_once_with_the_fix_in_its_command(
    shared_daemon: Herd, shared_work: Path
) -> None:
    herd, work = shared_daemon, shared_work
    script(work)
    swept = herd.cli(
        "sweep", "job.sh --lr {lr}", "-p", "lr", "0.1", "0.2", "0.3", "--name", "bare",
        "--gpus", "0", "--hold", cwd=work,
    )  # fmt: skip
    fix = "write the sweep's command as './job.sh ...' (or sh job.sh)"
    warning = not_on_path("job.sh", work, fix, "every point")
    assert cli_warnings(swept.stderr) == [f"gpuherd: warning: {warning}"]
    # The CLI's dry run (expanded here, no daemon asked) says it too.
    dry = herd.cli("sweep", "job.sh --lr {lr}", "-p", "lr", "0.1", "0.2", "--dry-run", cwd=work)
    assert cli_warnings(dry.stderr) == [f"gpuherd: warning: {warning}"]
    # Submitted again, nothing new to submit: nothing to say of points that are not.
    again = herd.cli(
        "sweep", "job.sh --lr {lr}", "-p", "lr", "0.1", "0.2", "0.3", "--name", "bare",
        "--gpus", "0", "--hold", cwd=work,
    )  # fmt: skip
    assert cli_warnings(again.stderr) == []
    # The fix, as said: no warning, and every point runs.
    mended = herd.cli(
        "sweep", "./job.sh --lr {lr}", "-p", "lr", "0.1", "0.2", "--name", "mended",
        "--gpus", "0", "--json", cwd=work,
    )  # fmt: skip
    assert cli_warnings(mended.stderr) == []
    for job_id in json.loads(mended.stdout)["ids"]:
        assert herd.wait_state(job_id, "succeeded", "failed")["state"] == "succeeded"


def test_a_sweep_file_and_a_python_sweep_say_it_in_the_same_words(
    shared_daemon: Herd, shared_work: Path
) -> None:
    herd, work = shared_daemon, shared_work
    script(work, "plain.sh", executable=False)
    fix = (
        "write the sweep's command as 'SEED={seed} sh plain.sh ...' (or chmod +x plain.sh, then"
        " write the sweep's command as 'SEED={seed} ./plain.sh ...')"
    )
    warning = not_on_path("plain.sh", work, fix, "every point")
    (work / "sweep.yaml").write_text(
        "name: from-file\ncommand: SEED={seed} plain.sh --lr {lr}\n"
        "grid:\n  seed: [1, 2]\n  lr: [0.1]\n"
    )
    from_file = herd.cli("sweep", "sweep.yaml", "--gpus", "0", "--hold", cwd=work)
    assert cli_warnings(from_file.stderr) == [f"gpuherd: warning: {warning}"]

    # A Python sweep of 2,000 points (a dry run: the daemon's own checks) says it once.
    api = gpuherd.connect(herd.home)
    values = {"seed": list(range(2000)), "lr": [0.1]}
    template = "SEED={seed} plain.sh --lr {lr}"
    sweep = lambda: api.sweep(template, values, gpus=0, dry_run=True, cwd=work)  # noqa: E731
    assert said(sweep) == [warning]
    spaced_sweep = lambda: api.sweep(  # noqa: E731
        "'python3 train.py' --lr {lr}", {"lr": [0.1]}, gpus=0, dry_run=True, cwd=work
    )
    fix = "write the sweep's command as 'python3 train.py ...'"
    assert said(spaced_sweep) == [spaced("python3 train.py", fix, "the point")]


WARNING = re.compile(r'class="flash warning missing-script-warning">(.*?)</div>')


def test_the_dashboards_form_says_it_once_for_its_lines_alike(
    shared_daemon: Herd, shared_work: Path
) -> None:
    herd, work = shared_daemon, shared_work
    script(work)
    lines = "job.sh 1\njob.sh 2\n./job.sh 3\n'python3 train.py' --lr 1\n"
    answer = post(herd, "/submit", htmx=False, gpus="0", hold="on", cwd=str(work), commands=lines)
    assert answer.status == 303, answer.body
    where = answer.headers["location"]
    first, last = (int(i) for i in re.findall(r"submitted=(\d+)-(\d+)", where)[0])
    assert where.endswith(f"&missing={first}-{first + 1},{last}")  # not ./job.sh's
    shown = [html.unescape(w) for w in WARNING.findall(herd.page(where))]
    fix = "write ./job.sh in 'commands' (or sh job.sh)"
    apart = "write python3 train.py in 'commands'"
    assert shown == [
        f"warning: {not_on_path('job.sh', work, fix)}",
        f"warning: {spaced('python3 train.py', apart)}",
    ]
