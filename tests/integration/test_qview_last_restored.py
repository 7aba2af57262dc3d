"""`last` after `herd.db` is restored from a backup (README, Where things are): the jobs
submitted after the backup are not in the restored queue, and the daemon numbers new jobs
past their folders. `last` was refused until the next submission, saying the job submitted
last "was removed (gpuherd rm or clean)", which no one did. `last` is the restored queue's
own last job now; one removed from it is refused as before; a new job is `last` again."""

from __future__ import annotations

from conftest import Herd


def test_last_after_a_restore_is_the_restored_queues_last_job(herd: Herd) -> None:
    herd.start("--fake-gpus", "2")
    first, second = herd.submit("true"), herd.submit("true")
    herd.cli("wait", f"{first}-{second}")
    backup = herd.home.parent / "herd-backup.db"
    herd.cli("daemon", "backup", str(backup))
    undone = [herd.submit("true"), herd.submit("true")]  # not in the backup
    herd.cli("wait", f"{undone[0]}-{undone[1]}")

    herd.restore(backup)

    assert herd.json("show", "last")["id"] == second  # (before: refused, "was removed")
    assert herd.json("daemon", "status")["last_job"] == second
    # It stays so across a restart (the daemon numbers past the folders again, a no-op).
    herd.cli("daemon", "restart")
    assert herd.json("show", "last")["id"] == second

    # Removed from the restored queue, it is refused, naming it, as in any queue.
    herd.cli("rm", str(second))
    refused = herd.cli("show", "last", check=False)
    assert refused.returncode == 1
    assert f"last: job {second}, the job submitted last, was removed" in refused.stderr

    # A job submitted now is numbered past the folders, and is `last`.
    new = herd.submit("--after", str(first), "true")
    assert new == undone[-1] + 1
    assert herd.json("show", "last")["id"] == new
    assert herd.json("daemon", "status")["last_job"] == new
