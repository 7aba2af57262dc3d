"""A `kill` whose stop is committed, the daemon killed (-9) before its SIGTERM went: the next
daemon sends the SIGTERM as it re-attaches to the job, and the SIGKILL when the stop had it
due. It sent only the SIGKILL, at the end of the grace: the job had no chance to save a
checkpoint. (A daemon killed once the SIGTERM went sends no second one: test_kill_crash.py,
`test_a_kill_answered_before_a_crash_ends_the_job_killed`.)

GPUHERD_TEST_SIGTERM_HOLD holds the daemon once the stop is committed, before its SIGTERM
(GPUHERD_TEST_STOP_HOLD, before the commit: tests/reliability/test_kill_crash.py)."""

from __future__ import annotations

from pathlib import Path

from conftest import Herd, communicated, load_stretch, wait_for

GRACE = 5.0
"""Long enough for the crash and the restart to fit in it, with seconds to spare (longer on a
loaded machine: load_stretch): the next daemon's SIGTERM came 0.2-0.4 s after the stop on a
quiet machine, and the test waits the whole grace out (10 s here was most of its time)."""


def sigterms(path: Path) -> list[float]:
    """When the job had a SIGTERM, each (its trap notes the time)."""
    return [float(line) for line in path.read_text().split()] if path.exists() else []


def killed_across_a_crash(herd: Herd, tmp_path: Path, knob: str, grace: float) -> tuple[int, Path]:
    """A running job with `grace` that notes each SIGTERM and goes on (only the SIGKILL ends
    it); `kill` of it, the daemon held where `knob` says and killed -9 there; the daemon
    started again. The job's id and its notes' file."""
    mark, terms = tmp_path / "hold", tmp_path / "terms"
    herd.env[knob] = str(mark)
    herd.start("--fake-gpus", "1")
    command = f'trap "date +%s.%N >> {terms}" TERM; while :; do sleep 0.05; done'
    job = herd.submit("--grace", f"{grace:g}s", "--", command)
    herd.wait_state(job, "running")
    kill = herd.popen("kill", str(job))
    try:
        wait_for(mark.exists, 30, "the daemon to hold at the kill")
        herd.kill9_held()
    finally:
        communicated(kill)
    del herd.env[knob]
    herd.start("--fake-gpus", "1")
    return job, terms


def test_a_sigterm_cut_off_by_a_crash_is_sent_by_the_next_daemon(
    herd: Herd, tmp_path: Path
) -> None:
    stretch = load_stretch()
    grace = round(GRACE * stretch)
    job, terms = killed_across_a_crash(herd, tmp_path, "GPUHERD_TEST_SIGTERM_HOLD", grace)
    stop = next(e for e in herd.job(job)["events"] if e["event"] == "stop")
    kill_due = stop["at"] + grace  # as the kill said: SIGKILL `grace` after it was asked
    # Was: no SIGTERM at all, the job SIGKILLed at the end of its grace.
    [sigterm] = wait_for(lambda: sigterms(terms), 30, "the job's SIGTERM")
    assert sigterm < kill_due - 1.0, (sigterm, kill_due)  # time left to save its work
    ended = herd.wait_state(job, "killed", timeout=grace + 20)
    assert ended["attempt"] == 1, ended
    # The SIGKILL came when the stop had it due: not before (0.5 s for the moments' readings),
    # and the restart did not put it off (its end heard within 2 s, more on a loaded machine).
    late = 2.0 * max(stretch, load_stretch())
    assert kill_due - 0.5 < ended["ended_at"] < kill_due + late, (ended["ended_at"], kill_due)
    assert len(sigterms(terms)) == 1  # one SIGTERM: the next daemon's, not a second
