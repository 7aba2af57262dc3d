"""`edit` warns of a --retry-delay that does nothing (a job never retried), as `submit` does:
it edited one in without a word."""

from __future__ import annotations

from tests.conftest import Herd

IDLE = "is never retried (--retries 0), so its --retry-delay"


def test_edit_warns_of_a_retry_delay_on_a_job_never_retried(daemon: Herd) -> None:
    job = daemon.submit("--hold", "true")
    edited = daemon.cli("edit", str(job), "--retry-delay", "30s")
    assert edited.stdout == f"job {job}: edited (retry_delay none -> 30s)\n"
    assert edited.stderr == (  # (on stderr, as submit's warnings)
        f"gpuherd: warning: job {job} {IDLE} 30s does nothing: give --retries N with it "
        f"(while it waits: gpuherd edit {job} --retries 2)\n"
    ), edited
    assert daemon.job(job)["retry_delay"] == 30  # warned of, yet edited in, as submit takes it
    # With retries it is no longer idle; --retries 0 makes it so again; other fields: no word.
    assert daemon.cli("edit", str(job), "--retries", "2").stderr == ""
    assert f"{IDLE} 30s" in daemon.cli("edit", str(job), "--retries", "0").stderr
    assert daemon.cli("edit", str(job), "--name", "x").stderr == ""
