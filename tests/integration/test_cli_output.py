"""`ls`, `show`, `submit` and `log` through the real CLI: what they print, and what they load."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

from conftest import Herd

# Loaded by no command people run many times a minute (each costs milliseconds to import).
HEAVY = {"rich", "asyncio", "pydantic", "fastapi", "yaml", "psutil", "gpuherd.api", "sqlite3"}
OTHER_COMMANDS = {
    f"gpuherd.cli.{name}"
    for name in ("queue_cmds", "gpu_cmds", "config_cmds", "daemon_cmds", "run_cmd", "ui_cmd")
} | {f"gpuherd.cli.{name}" for name in ("sweep_cmds", "sweep_args", "sweep_render", "ray_cmds")}

LOADED = """
import json, sys
from gpuherd.cli.main import main
try:
    main(sys.argv[1:])
except SystemExit as exc:
    assert not exc.code, exc.code
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""


def loaded_by(herd: Herd, *args: str) -> set[str]:
    proc = subprocess.run(
        [sys.executable, "-c", LOADED, *args],
        env=herd.env,
        cwd=herd.home.parent,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return set(json.loads(proc.stderr.splitlines()[-1]))


def test_the_frequent_commands_load_nothing_heavy(shared_daemon: Herd) -> None:
    daemon = shared_daemon
    job_id = daemon.submit("--", "echo", "hello")
    daemon.wait_state(job_id, "succeeded")
    job = str(job_id)
    for args in (["ls"], ["submit", "-q", "--hold", "--", "true"], ["show", job], ["log", job]):
        loaded = loaded_by(daemon, *args)
        assert "gpuherd.cli.job_cmds" in loaded, args
        heavy = {m for m in loaded if m.split(".")[0] in HEAVY or m.startswith("gpuherd.api")}
        assert not heavy, (args, heavy)
        assert not OTHER_COMMANDS & loaded, (args, OTHER_COMMANDS & loaded)
    # What only the daemon, sweeps or `daemon start` and `backup` use: each cost every call
    # that loaded it milliseconds (core.model's dataclasses ~10, sqlite3 and tempfile ~5).
    for args in (["ls"], ["show", job], ["wait", job], ["kill", job], ["daemon", "status"]):
        loaded = loaded_by(daemon, *args)
        unused = {"gpuherd.core.model", "gpuherd.core.sweep_spec", "sqlite3", "subprocess"}
        assert not unused & loaded, (args, unused & loaded)


def test_ls_and_show_print_job_text_as_it_is(shared_daemon: Herd) -> None:
    """Brackets are not markup (`[/]` used to crash ls), escapes and newlines cannot garble."""
    daemon = shared_daemon
    command = "echo [red]hi[/red] [/] \x1b[31mred\x1b[0m"
    job_id = daemon.submit("--hold", "--name", "[bold]x", "--", command)
    listing = daemon.cli("ls").stdout.splitlines()
    assert listing[0].split() == ["ID", "STATE", "NAME", "GPUS", "PRIO", "TIME", "INFO", "COMMAND"]
    row = next(line for line in listing if line.startswith(f"{job_id} "))
    shown_command = ["echo", "[red]hi[/red]", "[/]", "red"]
    assert row.split() == [str(job_id), "held", "[bold]x", "(1)", "0", "held", *shown_command]
    assert "\x1b" not in "".join(listing)
    assert all(line == line.rstrip() for line in listing)
    shown = daemon.cli("show", str(job_id)).stdout.splitlines()
    assert shown[0] == f"job        {job_id} ([bold]x)"
    assert "command    echo [red]hi[/red] [/] red" in shown
    assert "state      held" in shown  # the reason only when it adds to the state


def test_sweep_status_and_ls_print_sweep_text_as_it_is(shared_daemon: Herd) -> None:
    """`[/]` in a value or name used to crash them (rich markup); escapes cannot garble."""
    daemon = shared_daemon
    values = ["[/]", "[red]x[/red]", "\x1b[31mred\x1b[0m"]
    name = "[bold]x\\[i]"
    daemon.cli("sweep", "echo {v}", "-p", "v", *values, "--name", name, "--gpus", "0", "--hold")
    status = daemon.cli("sweep", "status", name).stdout.splitlines()
    assert status[0].split() == ["FOLDER", "v", "STATE", "JOB", "TIME"]
    assert [line.split()[1:3] for line in status[1:4]] == [
        ["[/]", "held"],
        ["[red]x[/red]", "held"],
        ["red", "held"],
    ]
    assert status[4].startswith(f"sweep {name}: 3 points (3 held); ")
    listing = daemon.cli("sweep", "ls").stdout.splitlines()
    row = next(line for line in listing[1:] if line.startswith(name))  # (the module's sweeps)
    assert row.split()[:4] == [name, "3", "3", "held"]
    assert "\x1b" not in "".join(status + listing)
    for args in (["sweep", "status", name], ["sweep", "ls"]):
        assert not {m for m in loaded_by(daemon, *args) if m.split(".")[0] == "rich"}, args


def test_show_keeps_a_multi_line_command_aligned(shared_daemon: Herd) -> None:
    job_id = shared_daemon.submit("--hold", "--", "echo one \\\n  && echo two")
    shown = shared_daemon.cli("show", str(job_id)).stdout.splitlines()
    at = shown.index("command    echo one \\")
    assert shown[at + 1] == "             && echo two"
    listing = shared_daemon.cli("ls").stdout.splitlines()
    line = next(x for x in listing if x.startswith(f"{job_id} "))
    assert line.endswith("  echo one && echo two")  # on one line, as the shell reads it


def test_ls_cuts_long_commands_to_200_columns_when_piped(shared_daemon: Herd) -> None:
    long = "echo " + "x" * 300
    job_id = shared_daemon.submit("--hold", "--", long)
    row = next(
        line
        for line in shared_daemon.cli("ls").stdout.splitlines()
        if line.startswith(f"{job_id} ")
    )
    assert len(row) == 200
    assert row.endswith("x…")
    assert shared_daemon.json("show", str(job_id))["command"] == long


def test_verbs_on_many_jobs_print_one_line_per_outcome(shared_daemon: Herd) -> None:
    """`kill 1-5000` on a sweep says what happened in a few lines, not one per job."""
    daemon = shared_daemon
    held = daemon.submit_lines(["sleep 60"] * 30, "--hold")
    running = daemon.submit("--", "sleep 60")
    daemon.wait_state(running, "running")
    spec = f"{held[0]}-{held[-1]},{running}"
    killed = daemon.cli("kill", spec)
    assert killed.stdout.splitlines() == [
        f"jobs {held[0]}-{held[-1]}: cancelled",
        f"job {running}: stopping (SIGTERM, then SIGKILL after 10s)",
    ]
    daemon.wait_state(running, "killed")
    jobs = [(job["id"], job["state"]) for job in daemon.all_jobs()]
    # Ended jobs are refused a release: those refused alike share a line, as the ids that
    # name no job do (30 lines of one refusal before). (A kill of them is no refusal now.)
    again = daemon.cli("release", f"{held[0]}-{running + 2}", check=False)
    assert again.returncode == 1 and again.stdout == ""
    assert again.stderr.splitlines() == [
        f"gpuherd: error: no job {running + 1}-{running + 2}: `gpuherd ls --all` lists the jobs "
        "there are",
        f"gpuherd: error: jobs {held[0]}-{held[-1]}: cannot release a job that has ended "
        "(cancelled) (it can: retry, rm)",
        f"gpuherd: error: job {running}: cannot release a job that has ended (killed) (it can: "
        "retry, rm)",
    ]
    assert [(job["id"], job["state"]) for job in daemon.all_jobs()] == jobs  # nothing changed


def test_ls_quiet_prints_the_ids_for_scripts(daemon: Herd) -> None:
    assert daemon.cli("ls", "-q").stdout == ""
    failed = daemon.submit_lines(["false"] * 3)
    held = daemon.submit("--hold", "--", "true")
    for job_id in failed:
        daemon.wait_state(job_id, "failed")
    assert daemon.cli("ls", "--state", "failed", "-q").stdout.split() == [str(i) for i in failed]
    assert daemon.cli("ls", "--state", "held", "--quiet").stdout == f"{held}\n"
    # Without --state or --all: the jobs not finished (the table adds recent ones to read).
    assert daemon.cli("ls", "-q").stdout == f"{held}\n"
    assert daemon.cli("ls", "-q", "--all").stdout.split() == [str(i) for i in [*failed, held]]
    # What it prints is what the verbs take.
    retried = daemon.cli("retry", *daemon.cli("ls", "--state", "failed", "-q").stdout.split())
    assert retried.stdout == f"jobs {failed[0]}-{failed[-1]}: queued again\n"


def test_ls_picks_jobs_by_sweep_and_by_name_for_the_verbs(daemon: Herd) -> None:
    daemon.cli("pause")  # nothing starts: every job stays queued, in the listing's order
    swept = json.loads(
        daemon.cli("sweep", "echo {x}", "-p", "x", "1", "2", "--name", "lr", "--json").stdout
    )["ids"]
    resnets = [daemon.submit("--name", f"resnet-{n}", "--", "true") for n in "ab"]
    other = daemon.submit("--name", "resnet", "--", "true")
    assert daemon.cli("ls", "-q", "--sweep", "lr").stdout.split() == [str(i) for i in swept]
    assert daemon.cli("ls", "-q", "--name", "resnet-*").stdout.split() == [str(i) for i in resnets]
    assert daemon.cli("ls", "-q", "--name", "resnet").stdout == f"{other}\n"  # no pattern: exact
    table = daemon.cli("ls", "--name", "resnet-?").stdout
    assert "resnet-a" in table and "resnet-b" in table and "lr" not in table
    assert [j["id"] for j in daemon.json("ls", "--all", "--sweep", "lr")] == swept
    typo = daemon.cli("ls", "--sweep", "none-such", check=False)  # (said as wait --sweep says)
    assert (typo.returncode, typo.stdout) == (1, "")
    assert typo.stderr.startswith("gpuherd: error: no sweep named 'none-such'")
    killed = daemon.cli("kill", *daemon.cli("ls", "-q", "--sweep", "lr").stdout.split())
    assert killed.stdout == f"jobs {swept[0]}-{swept[-1]}: cancelled\n"
    assert {j["state"] for j in daemon.ls_all() if j["id"] not in swept} == {"queued"}


def test_wait_names_the_jobs_that_did_not_succeed_by_how_they_ended(shared_daemon: Herd) -> None:
    ids = shared_daemon.submit_lines(["true", "false", "exit 3", "false", "sleep 60"])
    shared_daemon.wait_state(ids[4], "running")
    shared_daemon.cli("kill", str(ids[4]))
    done = shared_daemon.cli("wait", f"{ids[0]}-{ids[-1]}", check=False)
    assert done.returncode == 1
    # As `submit --wait` says it (`failed (exit 3)`), one line per way of ending.
    assert done.stderr == (
        f"jobs {ids[1]},{ids[3]}: failed (exit 1)\n"
        f"job {ids[2]}: failed (exit 3)\n"
        f"job {ids[4]}: killed\n"
    )
    assert done.stdout == "1 of 5 jobs succeeded\n"
    held = shared_daemon.submit_lines(["true"] * 3, "--hold")
    late = shared_daemon.cli("wait", *map(str, held), "--timeout", "0.2", check=False)
    assert late.returncode == 2
    them = f"{held[0]}-{held[-1]}"
    assert late.stderr == (  # (named held jobs: said first, as `submit --hold --wait` does)
        f"gpuherd: jobs {them} are held: waiting until they are released"
        f" (gpuherd release {them} lets them run)\n"
        f"gave up waiting; still unfinished: {them}\n"
    )


def test_ls_footer_counts_only_what_the_listing_left_out(daemon: Herd) -> None:
    held = daemon.submit_lines(["true"] * 5, "--hold")
    failed = daemon.submit_lines(["false"] * 3)
    for job_id in failed:
        daemon.wait_state(job_id, "failed")
    default = daemon.cli("ls", "--limit", "2").stdout.splitlines()
    assert default[-1] == "… and 3 more waiting jobs (gpuherd ls --all)"
    assert len(default) == 1 + 3 + 2 + 1  # header, the finished, 2 waiting, the footer
    # Of finished jobs, the newest kept (test_lslimit_newest.py), the oldest said above.
    by_state = daemon.cli("ls", "--state", "failed", "--limit", "2").stdout.splitlines()
    assert by_state[1] == "… 1 earlier finished job not shown (--limit 3 shows them)"
    assert [line.split()[0] for line in by_state[2:]] == [str(i) for i in failed[1:]]
    # A filter that hides the held jobs does not count them (it used to: "1 more waiting").
    assert daemon.cli("ls", "--state", "running").stdout == "no jobs match\n"
    assert daemon.cli("ls", "--state", "held").stdout.splitlines()[-1].startswith(f"{held[-1]} ")


def test_ls_all_of_an_empty_queue_says_no_jobs_as_ls_does(daemon: Herd) -> None:
    # --all leaves nothing out: it said "no jobs match", as a filter that matched nothing.
    assert daemon.cli("ls").stdout == "no jobs\n"
    assert daemon.cli("ls", "-a").stdout == "no jobs\n"
    assert daemon.cli("ls", "--all", "--state", "failed").stdout == "no jobs match\n"


def test_ls_quiet_and_the_apis_ids_only_take_the_limit_alike(daemon: Herd) -> None:
    # `ids_only=true` ignored `limit`: a script asking for 2 ids got every one, while
    # `ls -q --limit 2` printed 2 (the limit counts the waiting jobs, or with --all/--state
    # every job listed, as `ls` counts them).
    failed = daemon.submit_lines(["false"] * 3)
    running = daemon.submit("--", "sleep", "60")
    for job_id in failed:
        daemon.wait_state(job_id, "failed")
    daemon.wait_state(running, "running")
    daemon.cli("pause")
    waiting = daemon.submit_lines(["true"] * 2) + daemon.submit_lines(["true"] * 3, "--hold")

    def both(limit: int, *args: str, **query: Any) -> list[int]:
        printed = daemon.cli("ls", "-q", "--limit", str(limit), *args).stdout.split()
        answered = daemon.client.get("/jobs", ids_only=True, limit=limit, **query)["ids"]
        assert [int(i) for i in printed] == answered, args
        return list(answered)

    assert both(2) == [running, *waiting[:2]]
    # Those nearest now: the running job, the finished ones that ended last (side by side on
    # 4 GPUs: not always the highest ids), by id, and the next to start.
    ended = {job: daemon.job(job)["ended_at"] for job in failed}
    by_end = sorted(failed, key=lambda job: (ended[job], job))
    assert both(4, "--all", all=True) == [*sorted(by_end[1:]), running, waiting[0]]
    assert both(6, "--all", all=True) == [*failed, running, *waiting[:2]]
    assert both(3, "--state", "held", state=["held"]) == waiting[2:]
    assert both(1, "--state", "failed", state=["failed"]) == by_end[-1:]


def test_the_apis_ids_only_takes_newest_as_the_full_listing_does(daemon: Herd) -> None:
    # `ids_only=true` ignored `newest`: `newest=true&limit=1` answered the oldest job's id,
    # where the full listing (and so `last`) gave the newest's.
    failed = daemon.submit_lines(["false"] * 2)
    for job_id in failed:
        daemon.wait_state(job_id, "failed")
    daemon.cli("pause")
    queued = daemon.submit_lines(["true"] * 2)
    held = daemon.submit_lines(["true"] * 2, "--hold")
    every = [*failed, *queued, *held]
    # (Without `all` or `state` and `newest`, the ids are of the jobs not finished, as
    # `ls -q` prints them, where the full listing adds the recent finished ones.)
    asks = [({}, True)] + [
        (q, n) for q in ({"all": True}, {"state": ["held", "failed"]}) for n in (True, False)
    ]
    for query, newest in asks:
        for limit in (1, 3, 10):
            asked = {"limit": limit, "newest": newest, **query}
            jobs = daemon.client.get("/jobs", **asked)["jobs"]
            ids = daemon.client.get("/jobs", ids_only=True, **asked)["ids"]
            assert ids == [job["id"] for job in jobs], asked
    newest_ids = daemon.client.get("/jobs", ids_only=True, newest=True, limit=3)["ids"]
    assert newest_ids == every[::-1][:3]


def test_wait_and_ls_quiet_handle_a_queue_of_30000_jobs(daemon: Herd) -> None:
    # `wait` sent every id in one query string: past ~20,000 ids the daemon's HTTP parser
    # dropped the request ("lost the connection to the daemon").
    daemon.cli("pause")
    env, cwd = {"PATH": os.environ["PATH"]}, str(daemon.home.parent)
    jobs = [{"command": "true", "cwd": cwd, "env": env} for _ in range(30_000)]
    ids = daemon.client.post("/jobs", {"jobs": jobs})["ids"]
    assert daemon.cli("ls", "-q").stdout.split() == [str(i) for i in ids]
    late = daemon.cli("wait", "--timeout", "0.2", check=False)
    assert (late.returncode, late.stderr) == (
        2,
        "gpuherd: the queue is paused: no job starts until gpuherd resume\n"
        "gave up waiting; still unfinished: 1-30000\n",
    )
    daemon.cli("hold", "30000")  # held: not waited for unless named (it waits for a release)
    late = daemon.cli("wait", "--timeout", "0.2", check=False)
    assert (late.returncode, late.stderr) == (
        2,
        "gpuherd: job 30000 is held (until released, or its --begin time), not waited for: "
        "gpuherd wait 30000 waits for it\n"
        "gpuherd: the queue is paused: no job starts until gpuherd resume\n"
        "gave up waiting; still unfinished: 1-29999\n",
    )
    # The first 1,200 run (in turn: the rest waits behind them), and are waited for by id
    # (a `rm 1201-30000` first cost ~14 s here, for nothing this test checks).
    daemon.cli("resume")
    done = daemon.cli("wait", "1-1200", "--timeout", "60")
    assert done.stdout == "1,200 of 1,200 jobs succeeded\n"  # counts grouped, ids not


def test_counts_past_999_are_grouped_by_thousands_and_ids_are_not(daemon: Herd) -> None:
    # As the dashboard writes them (`1–50 of 10,504`); ids are names, written as typed.
    submitted = daemon.cli("submit", "--hold", "--file", "-", input="true\n" * 1200)
    assert submitted.stdout == "submitted 1,200 jobs: 1-1200\n"
    footer = "… and 1,100 more waiting jobs (gpuherd ls --all)"
    assert daemon.cli("ls").stdout.splitlines()[-1] == footer
    footer = "… and 1,100 more waiting (a higher --limit shows them)"
    assert daemon.cli("ls", "--state", "held").stdout.splitlines()[-1] == footer
    assert "; jobs: 1,200 held\n" in daemon.cli("daemon", "status").stdout
    daemon.cli("kill", "1-1200")
    # (a kill of ended jobs is no refusal; an edit's, alike for each job, shares one line,
    # its ids as typed: it said 10 lines, then `1,190 more jobs refused too: 11-1200`, whose
    # count test_idspec sees grouped)
    again = daemon.cli("edit", "1-1200", "--name", "x", check=False)
    assert again.stderr == (
        "gpuherd: error: jobs 1-1200 already ended (cancelled): `gpuherd retry --hold 1-1200` "
        "puts it back held, to edit it before it runs again (`gpuherd release 1-1200` runs it)\n"
    )


def test_verbs_given_no_ids_do_nothing_and_hold_of_a_held_job_is_no_error(daemon: Herd) -> None:
    # `gpuherd kill $(gpuherd ls -q --state lost)` with no such job: a no-op, as xargs -r.
    for verb in ("kill", "rm", "retry", "hold", "release"):
        done = daemon.cli(verb)
        assert done.stdout == f"no job ids given: nothing to {verb} (e.g. gpuherd {verb} 3-7)\n"
    daemon.cli("pause")
    held = daemon.submit("--hold", "--", "true")
    queued = daemon.submit("--", "true")
    again = daemon.cli("hold", str(held), str(queued))  # a mixed queue: held and not
    assert again.stdout == f"job {held}: already held\njob {queued}: held\n"
    daemon.cli("release", str(queued))
    assert daemon.cli("release", str(queued)).stdout == f"job {queued}: already queued\n"
    daemon.cli("resume")
    running = daemon.submit("--", "sleep 60")
    daemon.wait_state(running, "running")
    refused = daemon.cli("hold", str(running), check=False)
    assert refused.stderr == (
        f"gpuherd: error: job {running}: cannot hold a job that is running "
        "(it can: kill, pause, retry)\n"
    )
    # What a verb asks for, already so, is no error: `pause $(gpuherd ls -q --state running)`
    assert daemon.cli("resume", str(running)).stdout == f"job {running}: already running\n"
    daemon.cli("pause", str(running))
    assert daemon.cli("pause", str(running)).stdout == f"job {running}: already paused\n"
    daemon.cli("kill", str(running))


def test_clean_removes_finished_jobs_and_keeps_the_rest(daemon: Herd) -> None:
    ok = daemon.submit("--", "true")
    bad = daemon.submit("--", "exit 3")
    daemon.wait_state(ok, "succeeded")
    daemon.wait_state(bad, "failed")
    waiting = daemon.submit("--hold", "--", "true")
    assert daemon.cli("clean", "--state", "succeeded").stdout == f"job {ok}: removed\n"
    assert daemon.cli("clean", "--state", "succeeded").stdout == (
        "nothing to clean: no finished job in that state\n"
    )
    folder = Path(daemon.job(bad)["job_dir"])
    assert daemon.cli("clean").stdout == f"job {bad}: removed\n"
    assert not folder.exists()
    assert [job["id"] for job in daemon.ls_all()] == [waiting]
    refused = daemon.cli("clean", "--state", "held", check=False)
    assert refused.returncode == 2 and refused.stderr == (
        "gpuherd: error: --state: 'held' is not a choice: use one of cancelled, failed, killed, "
        "lost, succeeded (see gpuherd clean --help)\n"
    )


def test_show_prints_an_older_jobs_undecodable_env_value_escaped(daemon: Herd) -> None:
    herd = daemon
    # An older gpuherd stored `--env` values with bytes that are not UTF-8 (as surrogate
    # escapes); `show` of such a job failed: "internal error (PydanticSerializationError...)".
    job = int(herd.cli("submit", "-q", "--hold", "--env", "A=1", "--", "true").stdout)
    db = sqlite3.connect(herd.home / "herd.db")
    with db:
        db.execute("UPDATE jobs SET env_overrides = ? WHERE id = ?", ('{"A": "\\udcff"}', job))
    db.close()
    shown = herd.cli("show", str(job))
    assert shown.returncode == 0, shown.stderr
    assert "A=\\xff" in shown.stdout, shown.stdout


def test_a_verb_on_several_jobs_says_its_answer_for_them_all(shared_daemon: Herd) -> None:
    # Jobs with the same answer share its line, which said "it" and "its" of them all.
    daemon = shared_daemon
    failed = [daemon.submit("--", "exit 3") for _ in range(2)]
    for job_id in failed:
        daemon.wait_state(job_id, "failed")
    both = f"{failed[0]}-{failed[1]}"
    assert daemon.cli("retry", "--hold", both).stdout == (
        f"jobs {both}: held (`gpuherd release` to run again)\n"
    )
    later = [daemon.submit("--begin", "+1h", "--", "true") for _ in range(2)]
    both = f"{later[0]}-{later[1]}"
    assert (
        daemon.cli("hold", both).stdout
        == f"jobs {both}: held until released (--begin time dropped)\n"
    )
    running = [daemon.submit("--", "sleep 60") for _ in range(2)]
    for job_id in running:
        daemon.wait_state(job_id, "running")
    both = f"{running[0]}-{running[1]}"
    assert (
        daemon.cli("pause", both).stdout == f"jobs {both}: paused (SIGSTOP; GPUs stay reserved)\n"
    )
