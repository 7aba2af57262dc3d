"""A chain of --after jobs cancelled by its first job's failure: what submit and retry say
to run it again is a command that does (naming the whole chain), not one refused again."""

from __future__ import annotations

from conftest import Herd


def test_the_hint_to_retry_a_cancelled_chain_names_its_first_job(shared_daemon: Herd) -> None:
    daemon = shared_daemon
    first = daemon.submit("--", "exit 1")
    daemon.wait_state(first, "failed")
    middle = int(daemon.cli("submit", "-q", "--after", str(first), "--", "true").stdout)
    last = daemon.cli("submit", "-q", "--after", str(middle), "--", "true")
    end = int(last.stdout)
    # "gpuherd retry MIDDLE END runs both again" was refused: job MIDDLE waits for FIRST.
    assert last.stderr == (
        f"gpuherd: warning: job {end} is cancelled at once: job {middle}, which it waits for, "
        f"already cancelled (gpuherd retry {first} {middle} {end} runs them all again)\n"
    )
    refused = daemon.cli("retry", str(end), check=False)
    assert refused.returncode == 1
    assert refused.stderr == (
        f"gpuherd: error: job {end} waits for job {middle}, which ended (cancelled) as one it "
        f"waited for did: retry them all (gpuherd retry {first} {middle} {end})\n"
    )
    assert daemon.job(end)["state"] == "cancelled"
    # The job next to the failure keeps the short hint.
    alone = daemon.cli("retry", str(middle), check=False)
    assert f"retry both (gpuherd retry {first} {middle})" in alone.stderr
    # The hint's command is taken: the chain runs again.
    again = daemon.cli("retry", str(first), str(middle), str(end))
    assert again.returncode == 0 and again.stdout.endswith(": queued again\n")
    assert daemon.wait_state(first, "failed")["attempt"] == 2
