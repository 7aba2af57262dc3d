"""herd.db restored from a backup taken before a job was submitted, while that job runs: the
restored database knows no such job. Its processes ran on, unwatched (the log said so), but
its GPU went to the next job at once, beside it. Now that GPU is held for it, whole, while
any of its processes runs (also one that left its process group), from the daemon's start
(before the backup's queued jobs are placed) and again after a restart; the waiting job's
reason and `gpuherd gpus` name the run."""

from __future__ import annotations

from pathlib import Path

from test_restored_database import CHECKPOINT, as_if_never_paused, backup, restore, running

from conftest import Herd, gone, wait_for


def test_a_run_of_a_job_the_restored_database_does_not_know_keeps_its_gpu(
    herd: Herd, tmp_path: Path
) -> None:
    herd.start("--fake-gpus", "2")
    go_first, go, go_child = tmp_path / "go-first", tmp_path / "go", tmp_path / "go-child"
    child, seen = tmp_path / "child", tmp_path / "witness"
    first = herd.submit("--", CHECKPOINT.format(go=go_first))  # GPU 0, until the end
    herd.wait_state(first, "running")
    herd.cli("pause")
    witness = herd.submit(
        "--",
        f'echo "$CUDA_VISIBLE_DEVICES" > {seen}; '
        # (a zombie, left for a container's pid 1 to reap, has ended: state Z)
        f"state=$(cut -d' ' -f3 /proc/$(cat {child})/stat 2>/dev/null); "
        f'if [ -n "$state" ] && [ "$state" != Z ]; then echo beside >> {seen}; fi',
    )
    copy = tmp_path / "backup.db"
    backup(herd, copy)  # the witness is queued in it; the job below is not
    herd.cli("hold", str(witness))
    herd.cli("resume")
    # Its shell waits for `go`; a process it started in a session of its own, for `go_child`.
    job = herd.submit(
        "--",
        f"setsid sh -c 'echo $$ > {child}; {CHECKPOINT.format(go=go_child)}' & "
        + CHECKPOINT.format(go=go),
    )
    before = running(herd, job, 1)
    assert before["gpus"] == [1]
    wait_for(child.exists, what="the job's own process to start")
    restore(herd, copy)
    as_if_never_paused(herd)

    reserved = (
        f"GPU 1 is reserved for job {job}, whose attempt 1 runs unwatched "
        f"(pid {before['pid']}), unknown to herd.db"
    )
    for start in ("restored", "restarted"):
        herd.start("--fake-gpus", "2")
        now = herd.job(witness)
        # Before the fix: running on GPU 1 (placed at the start, beside the job's process)
        assert (now["state"], now["gpus"]) == ("queued", []), start
        assert reserved in now["reason"], (start, now["reason"])
        gpu = herd.json("gpus")["gpus"][1]
        assert gpu["reserved"] == [
            {
                "job": job,
                "job_id": job,
                "reason": f"unknown to herd.db: attempt 1 runs unwatched (pid {before['pid']})",
            }
        ]
        assert gpu["jobs"] == [job]
        if start == "restored":
            herd.cli("daemon", "stop")
    # Said by the executor's first pass over /proc, on its thread: waited for (on a loaded
    # machine that pass came after the checks above, and a read of the log at once missed it).
    said = f"job {job} attempt 1 runs (pid {before['pid']}), but the database knows"
    wait_for(lambda: said in (herd.home / "daemon.log").read_text(), what="the executor's note")

    # Its shell ends: the process it started in a session of its own still runs on GPU 1.
    go.touch()
    wait_for(lambda: gone(before["pid"]), what="its shell to end")
    # A pass over the job's processes (a job's end asks for one, which kills what it left
    # running) finds that process still there: the GPU stays held.
    leftover = tmp_path / "leftover"
    ended = herd.submit("--gpus", "0", "--", f"setsid sleep 300 & echo $! > {leftover}")
    herd.wait_state(ended, "succeeded")
    sleeper = int(leftover.read_text())
    wait_for(lambda: gone(sleeper), what="the pass to kill what that job left")
    now = herd.job(witness)
    assert now["state"] == "queued" and reserved in now["reason"], now

    go_child.touch()  # its last process ends: the GPU is free again, for the witness
    herd.wait_state(witness, "succeeded")
    assert seen.read_text() == "1\n"  # on GPU 1, once the job's processes had all ended
    assert (
        "which herd.db does not know, has ended: GPU 1 free"
        in (herd.home / "daemon.log").read_text()
    )
    go_first.touch()
    herd.wait_state(first, "succeeded")


def test_a_cpu_only_run_the_restored_database_does_not_know_is_logged_in_whole_sentences(
    herd: Herd, tmp_path: Path
) -> None:
    """daemon.log said `its no GPU held for it until all its processes have ended`, then
    `has ended: no GPU free`, of a run that asked for no GPU."""
    herd.start("--fake-gpus", "2")
    copy, go = tmp_path / "backup.db", tmp_path / "go"
    backup(herd, copy)  # before the job below was submitted
    job = herd.submit("--gpus", "0", "--", CHECKPOINT.format(go=go))
    pid = running(herd, job, 1)["pid"]
    restore(herd, copy)
    herd.start("--fake-gpus", "2")
    log = herd.home / "daemon.log"
    held = f"job {job}: its attempt 1 runs unwatched (pid {pid}), unknown to herd.db; it uses no"
    wait_for(lambda: held in log.read_text(), what="the unknown run to be logged")
    go.touch()
    ended = f"job {job} attempt 1 (pid {pid}), which herd.db does not know, has ended (it used no"
    wait_for(lambda: ended in log.read_text(), what="the unknown run's end to be logged")
    text = log.read_text()
    assert f"{held} GPU\n" in text and f"{ended} GPU)\n" in text
    assert "no GPU held" not in text and "no GPU free" not in text
