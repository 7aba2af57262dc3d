"""The daemon crash loop: a sweep-like batch of short jobs while the daemon is killed (-9) and
restarted again and again. Nothing may be lost, run twice, left running, or left untold.

CI: 120 jobs and 12 kills; GPUHERD_SOAK=full: 200 jobs and 20 kills (the issue's figures).
"""

from __future__ import annotations

import random
import re
import shlex
import sqlite3
import time
from pathlib import Path
from typing import Any

import psutil
from faults import elapsed, integrity, job_processes, record, scaled

from conftest import Herd, Recorder, group_members, wait_for
from gpuherd.errors import DaemonError

SEED = 20_240_606

# One history per job, by event name in the order the database recorded them: submitted,
# then any number of attempts that did not count (a start the daemon died before spawning,
# "start retry"; or an attempt lost and retried, "start spawn retry"), then the one that ran.
STORY = re.compile(r"submit( start( spawn)? retry)* start spawn succeed")


def job_line(runs: Path, seconds: float) -> str:
    """A job that sleeps, then appends "id attempt pid" to its own runs file (one write).

    The command runs in the job's own shell, so $$ is the pid gpuherd records for the
    attempt."""
    target = shlex.quote(str(runs)) + '/"$GPUHERD_JOB_ID"'
    return f'sleep {seconds}; echo "$GPUHERD_JOB_ID $GPUHERD_ATTEMPT $$" >> {target}'


def finished(herd: Herd, total: int) -> bool:
    counts = herd.client.get("/daemon")["counts"]
    return sum(counts.get(s, 0) for s in ("succeeded", "failed", "killed", "lost")) >= total


def check_story(job: dict[str, Any], lines: list[tuple[int, int, int]]) -> list[str]:
    """What is wrong with one finished job's record (empty when nothing is)."""
    problems: list[str] = []
    jid = job["id"]
    attempts = job["attempts"]
    numbers = [a["number"] for a in attempts]
    if numbers != list(range(1, job["attempt"] + 1)):
        problems.append(f"job {jid}: attempts {numbers}, latest {job['attempt']}")
    ran = [(jid, a["number"], a["pid"]) for a in attempts]
    if sorted(lines) != sorted(ran):
        problems.append(f"job {jid}: runs file {lines} but attempts {ran}")
    names = [e["event"] for e in job["events"]]
    if not STORY.fullmatch(" ".join(names)):
        problems.append(f"job {jid}: events {names}")
    if names.count("spawn") != len(attempts):
        problems.append(f"job {jid}: {names.count('spawn')} spawns for {len(attempts)} attempts")
    state = None
    for event in job["events"]:
        if event["to_state"]:  # a state change: it must start where the last one ended
            if event["from_state"] != state:
                problems.append(f"job {jid}: {event['event']} from {event['from_state']}")
            state = event["to_state"]
    if state != "succeeded":
        problems.append(f"job {jid}: the events end in {state}")
    times = [e["at"] for e in job["events"]]
    if times != sorted(times):
        problems.append(f"job {jid}: event times go backwards: {times}")
    return problems


def verify(herd: Herd, ids: list[int], runs: Path) -> dict[str, int]:
    """Every job succeeded, ran once per recorded attempt, told its whole story, and left
    nothing running; returns the counts for the figures."""
    listed = herd.client.get("/jobs", all=True)["jobs"]
    assert [j["id"] for j in listed] == ids
    assert {j["state"] for j in listed} == {"succeeded"}, [
        (j["id"], j["state"], j["outcome"]) for j in listed if j["state"] != "succeeded"
    ]
    lines: dict[int, list[tuple[int, int, int]]] = {}
    for path in runs.iterdir():
        for text in path.read_text().splitlines():
            jid, attempt, pid = (int(x) for x in text.split())
            assert str(jid) == path.name
            lines.setdefault(jid, []).append((jid, attempt, pid))
    problems: list[str] = []
    attempts = retried = 0
    for job_id in ids:
        job = herd.client.get(f"/jobs/{job_id}")  # what `gpuherd show --json ID` prints
        attempts += len(job["attempts"])
        retried += [e["event"] for e in job["events"]].count("retry")
        problems += check_story(job, lines.get(job_id, []))
    assert not problems, "\n".join(problems[:20])
    assert job_processes(herd.home) == []
    assert integrity(herd.home / "herd.db") == "ok"
    ran = sum(len(v) for v in lines.values())
    return {
        "attempts": attempts,
        "retry_events": retried,
        "lost": len(ids) - len(lines),
        "duplicated": ran - attempts,
    }


def test_kill_9_loop_loses_and_duplicates_nothing(herd: Herd, tmp_path: Path) -> None:
    total, kills = scaled((120, 12), (200, 20))
    rng = random.Random(SEED)
    runs = tmp_path / "runs"
    runs.mkdir()
    began = time.monotonic()
    # 6 GPUs: the jobs' ~66 s of sleeps last about as long as the kills (4 left a third of
    # them to run after the last kill, ~9 s of the test, with no crash to live through).
    herd.start("--fake-gpus", "6")
    durations = [round(rng.uniform(0.1, 1.0), 2) for _ in range(total)]
    # --retries: an attempt lost to a crash is run again, so every job must end succeeded.
    ids = herd.submit_lines([job_line(runs, s) for s in durations], "--retries", "3")
    assert ids == list(range(1, total + 1))

    pids, running_at_kill, done_at_kill = [], [], []
    for _ in range(kills):
        time.sleep(rng.uniform(0.05, 1.0))  # a moment while jobs start, run and end
        status = herd.client.get("/daemon")
        pids.append(status["pid"])
        running_at_kill.append(status["counts"].get("running", 0))
        done_at_kill.append(status["counts"].get("succeeded", 0))
        herd.kill9()
        time.sleep(rng.choice([0.0, 0.0, 0.2, 0.5]))  # sometimes jobs end while none watches
        herd.start()  # no flags: the saved configuration
    assert len(set(pids)) == kills  # each kill hit a fresh daemon

    wait_for(lambda: finished(herd, total), timeout=120, what=f"all {total} jobs to finish")
    figures = verify(herd, ids, runs)
    record(
        "crash_loop",
        jobs=total,
        kills=kills,
        **figures,
        running_at_each_kill=running_at_kill,
        succeeded_at_each_kill=done_at_kill,
        seconds=elapsed(began),
    )


# The daemon is busiest right after a job ends: it records the exit, commits the next job's
# start, spawns it, records its pid. Armed jobs end by starting a killer, outside their process
# group (gpuherd's clean-up of the group must not stop it), that SIGKILLs the daemon holding the
# home's lock a few milliseconds later, to land inside those steps. A killer whose job ended
# while no daemon ran waits (up to 1 s) for the next one: that lands in its start-up.
# The pid is checked to be this home's daemon (`--home HOME` in its command line), again just
# before the kill: the lock file keeps a killed daemon's pid, and with pid_max at 32,768 a
# busy suite reuses pids within minutes, so "a gpuherd daemon" alone was once another test's
# daemon, SIGKILLed as it started.
KILLER = (
    ': > "$GPUHERD_TEST_MARK"; '  # out of the job's process group now (setsid ran)
    'ours() {{ tr "\\0" " " < /proc/$1/cmdline 2>/dev/null '
    '| grep -qF -- "gpuherd.daemon --home $GPUHERD_HOME "; }}; '
    'for i in $(seq 100); do p=$(cat "$GPUHERD_HOME/daemon.lock" 2>/dev/null); '
    'if [ -n "$p" ] && ours $p; then '
    "sleep {delay}; ours $p && kill -9 $p; exit 0; fi; sleep 0.01; done"
)


def killer_line(runs: Path, seconds: float, delay: float, tag: str) -> str:
    """A job that, on its first attempt, leaves behind a process (in a session of its own)
    that kill -9s the daemon `delay` s after finding it.

    The job ends only once the killer has left its process group: when a job ends, gpuherd
    kills what is left in its group, and a killer still between fork and setsid would die
    with it (a fast enough daemon won that race every time in one CI run)."""
    arm = shlex.quote(KILLER.format(delay=delay))
    marks = runs.parent / "armed"  # not in runs/, which holds only the jobs' records
    marks.mkdir(exist_ok=True)
    mark = shlex.quote(str(marks)) + '/"$GPUHERD_JOB_ID"'
    return (
        job_line(runs, seconds) + '; [ "$GPUHERD_ATTEMPT" = 1 ] && { '
        f"env -u GPUHERD_JOB_DIR -u GPUHERD_ATTEMPT_DIR -u GPUHERD_ATTEMPT_KEY "
        f"GPUHERD_TEST_KILLER={tag} "
        f"GPUHERD_TEST_MARK={mark} setsid sh -c {arm} >/dev/null 2>&1 < /dev/null & "
        f"for i in $(seq 500); do [ -e {mark} ] && break; sleep 0.01; done; }}; true"
    )


def killers(tag: str) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["status"]):
        try:
            if proc.info["status"] != psutil.STATUS_ZOMBIE and (
                proc.environ().get("GPUHERD_TEST_KILLER") == tag
            ):
                found.append(proc)
        except (psutil.Error, OSError):
            continue
    return found


def test_kill_9_right_after_jobs_end(herd: Herd, tmp_path: Path) -> None:
    total = scaled(60, 200)
    armed_jobs = total // 3
    rng = random.Random(SEED + 1)
    runs = tmp_path / "runs"
    runs.mkdir()
    tag = str(tmp_path)
    began = time.monotonic()
    herd.start("--fake-gpus", "4")
    armed = set(range(0, total, 3))  # every third job, so that the kills spread over the run
    lines = [
        killer_line(runs, round(rng.uniform(0.05, 0.5), 2), rng.choice([0, 0.002, 0.005]), tag)
        if n in armed
        else job_line(runs, round(rng.uniform(0.05, 0.5), 2))
        for n in range(total)
    ]
    ids = herd.submit_lines(lines, "--retries", "3")
    restarts = failed_starts = 0
    deadline = time.monotonic() + 150
    try:
        while True:
            assert time.monotonic() < deadline, "the jobs did not finish in time"
            if not herd.is_up():
                # killed: start again (a killer may strike during the start too; then again)
                if herd.cli("daemon", "start", check=False).returncode == 0:
                    restarts += 1
                else:
                    failed_starts += 1
                continue
            try:
                done = finished(herd, total) and not killers(tag) and herd.is_up()
            except DaemonError:  # killed while it answered
                continue
            if done:
                break
            time.sleep(0.02)
        figures = verify(herd, ids, runs)
    finally:
        for proc in killers(tag):
            proc.kill()
    kills = restarts + failed_starts
    assert kills >= 3, f"only {kills} daemon kills happened"  # usually 5 to 15
    record(
        "crash_after_exit",
        jobs=total,
        armed_jobs=armed_jobs,
        kills=kills,
        kills_during_start=failed_starts,
        **figures,
        seconds=elapsed(began),
    )


def test_an_attempt_that_ended_unseen_keeps_its_pid(herd: Herd, recorder: Recorder) -> None:
    herd.start("--fake-gpus", "1")
    job_id = herd.submit(recorder.cmd("runs", wait="go"))
    pid = wait_for(lambda: herd.job(job_id)["pid"], what="the job's pid")
    herd.kill9()
    # What a daemon killed between posix_spawn and the commit of the pid leaves behind: the
    # start is committed (running, attempt 1), the pid and the spawn event are not.
    db = sqlite3.connect(herd.home / "herd.db")
    with db:
        db.execute("UPDATE jobs SET pid = NULL WHERE id = ?", (job_id,))
        db.execute("UPDATE attempts SET pid = NULL WHERE job_id = ?", (job_id,))
        db.execute("DELETE FROM events WHERE job_id = ? AND event = 'spawn'", (job_id,))
    db.close()
    recorder.go()
    wait_for(lambda: not group_members(pid), what="the job to end")
    herd.start()
    job = herd.wait_state(job_id, "succeeded", "failed", "lost")
    shown = herd.json("show", str(job_id))
    assert [r["pgid"] for r in recorder.lines("runs")] == [pid]  # ran once, as that pid
    assert job["state"] == "succeeded"
    assert [e["event"] for e in shown["events"]] == ["submit", "start", "spawn", "succeed"]
    assert (shown["pid"], shown["attempts"][0]["pid"]) == (pid, pid)


def test_event_times_follow_the_order_of_events(daemon: Herd) -> None:
    job_id = daemon.submit("--", "true")
    daemon.wait_state(job_id, "succeeded")
    events = daemon.json("show", str(job_id))["events"]
    assert [e["event"] for e in events] == ["submit", "start", "spawn", "succeed"]
    times = [e["at"] for e in events]
    assert times == sorted(times), events
