"""`config set project-limits P=N`: at most N jobs of project P run at once (pueue's groups),
while other projects' jobs use the GPUs left; the jobs record their own start and end."""

from __future__ import annotations

from conftest import Herd, Recorder, max_overlap, wait_for


def test_a_project_runs_at_most_its_limit_and_others_pass_it(
    daemon: Herd, recorder: Recorder
) -> None:
    said = daemon.cli("config", "set", "project-limits", "sweep-a=2, eval=1")
    assert said.stdout.strip() == "project-limits = eval=1,sweep-a=2"
    capped = [
        daemon.submit("--project", "sweep-a", "--", recorder.cmd("a", wait="go")) for _ in range(4)
    ]
    free = daemon.submit("--project", "other", "--", recorder.cmd("other", wait="go"))
    daemon.wait_state(free, "running")  # queued behind the four: passed them
    wait_for(lambda: recorder.waiting("a") == 2, what="two jobs of sweep-a to start")
    waiting = daemon.job(capped[2])
    assert waiting["state"] == "queued"  # a GPU is free: the limit holds it back
    assert waiting["reason"] == (
        "waiting for a run slot of project sweep-a (2 running: config project-limits)"
    )

    recorder.go()
    for job_id in [*capped, free]:
        daemon.wait_state(job_id, "succeeded")
    runs = [(line["start"], line["end"]) for line in recorder.lines("a")]
    assert len(runs) == 4 and max_overlap(runs) == 2


def test_limits_are_kept_across_a_restart_and_cleared_with_none(daemon: Herd) -> None:
    daemon.cli("config", "set", "project-limits", "p=1")
    daemon.cli("daemon", "stop")
    daemon.start()
    assert daemon.cli("config", "get", "project-limits").stdout.strip() == "p=1"
    daemon.cli("config", "set", "project-limits", "none")
    assert daemon.cli("config", "get", "project-limits").stdout.strip() == "none"
    for wrong in ("p", "p=0", "p=-1", "=2", "p=two"):
        refused = daemon.cli("config", "set", "project-limits", wrong, check=False)
        assert refused.returncode == 2, wrong
        assert refused.stderr.startswith("gpuherd: error: project-limits: invalid limit"), wrong
        assert len(refused.stderr.splitlines()) == 1
    assert daemon.cli("config", "get", "project-limits").stdout.strip() == "none"


def test_limits_separated_by_spaces_are_refused_naming_the_commas(daemon: Herd) -> None:
    """`'g=1 h=2'` was refused as a project name with `=` in it (`g=1 h`)."""
    said = daemon.usage_error("config", "set", "project-limits", "g=1 h=2")
    assert said == (
        "gpuherd: error: project-limits: invalid limit 'g=1 h=2': separate limits with commas,"
        " not spaces: g=1,h=2 (see gpuherd config set --help)\n"
    )
    assert daemon.cli("config", "get", "project-limits").stdout.strip() == "none"


def test_a_backlog_past_the_read_window_does_not_stall_the_jobs_behind_it(
    daemon: Herd, recorder: Recorder
) -> None:
    # The engine reads at most SCAN_LIMIT queued jobs per pass: a backlog that long of a
    # project at its limit, or of jobs pinned to a busy GPU, left every job behind it
    # queued with three GPUs idle.
    from gpuherd.engine import SCAN_LIMIT

    daemon.cli("config", "set", "project-limits", "lr=1")
    busy = daemon.submit("--only-gpus", "0", "--", recorder.cmd("busy", wait="go"))
    daemon.wait_state(busy, "running")
    backlog = SCAN_LIMIT + 10
    daemon.post_lines([recorder.cmd("lr", wait="go")] * backlog, project="lr")
    daemon.post_lines([recorder.cmd("pinned", wait="go")] * backlog, only_gpus=[0])
    behind = daemon.submit("--", recorder.cmd("behind"))
    assert daemon.wait_state(behind, "succeeded")["gpus"] != [0]
    assert recorder.waiting("lr") == 1  # the project's limit still holds
    assert recorder.waiting("pinned") == 0  # GPU 0 is still busy
    daemon.cli("kill", *daemon.cli("ls", "-q").stdout.split())  # not 4,000 jobs to run now
    recorder.go()
