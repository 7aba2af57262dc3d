"""A job cancelled by one dependency is retried once another one, which had succeeded, is
removed: `gpuherd clean --state succeeded` (which keeps the failures to look at), then the
`gpuherd retry 2 3` the cancellation's warning advised, was refused ("job 3 waits for job 1
(--after), which was removed since ...") though job 1 had succeeded."""

from __future__ import annotations

from pathlib import Path

from conftest import Herd


def test_a_dependency_removed_after_it_succeeded_does_not_refuse_a_retry(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    herd, ran, fixed = shared_daemon, tmp_path / "ran", tmp_path / "fixed"
    data = herd.submit("--", "true")
    prep = herd.submit("--", f"test -e {fixed}")
    train = herd.submit("--after", f"{data},{prep}", "--", f"touch {ran}")
    herd.wait_state(train, "cancelled")
    herd.cli("rm", str(data))  # as `clean --state succeeded` does
    fixed.touch()
    herd.cli("retry", str(prep), str(train))
    herd.wait_state(train, "succeeded")
    assert ran.exists()
    # One that had not succeeded when it was removed still refuses it (test_q2_scheduling).
    failed = herd.submit("--", "exit 1")
    waiting = herd.submit("--after", f"{failed}", "--", f"touch {ran}")
    herd.wait_state(waiting, "cancelled")
    herd.cli("rm", str(failed))
    refused = herd.cli("retry", str(waiting), check=False)
    assert refused.returncode == 1 and "which was removed since" in refused.stderr, refused
