"""`gpuherd sweep status NAME` said of waiting points that will run another command than the
sweep's, but not of those waiting with other job options than its latest submission gave (a
resubmission with `--gpus 2` skips its queued points, which keep 1 GPU; its warning is said
once, at the submission). The status says it now, with the commands that give them the
submission's options (`gpuherd priority` for a priority), or, where none can, the way out:
cancel them and submit the sweep again. Points that have them say nothing (real daemon)."""

from __future__ import annotations

from pathlib import Path

from conftest import Herd

WAITING = "$(gpuherd ls -q --sweep st --state queued,held)"


def sweep(herd: Herd, work: Path, *options: str) -> None:
    herd.cli("sweep", "echo {x}", "-p", "x", "1", "2", "--name", "st", "--hold", *options, cwd=work)


def status(herd: Herd) -> tuple[list[str], list[str]]:
    """The status's lines after its table, and its --json `warnings`."""
    text = herd.cli("sweep", "status", "st").stdout.splitlines()
    after = text[text.index(next(line for line in text if line.startswith("sweep st: "))) + 1 :]
    return after, herd.json("sweep", "status", "st")["warnings"]


def test_status_says_the_waiting_points_other_options(shared_daemon: Herd, tmp_path: Path) -> None:
    herd = shared_daemon
    sweep(herd, tmp_path)
    assert status(herd) == ([], [])

    sweep(herd, tmp_path, "--gpus", "2", "--priority", "5")  # skips the 2 held points
    said = (
        "2 points waiting to run (queued or held) have other job options than the sweep's "
        "latest submission gave (--gpus 1 -> 2, --priority 0 -> 5); "
        f"gpuherd edit {WAITING} --gpus 2 && gpuherd priority {WAITING} 5 gives them these"
    )
    assert status(herd) == ([said], [said])

    # As it says (the shell's $(...) being the waiting points' ids): then nothing to say.
    ids = herd.cli("ls", "-q", "--sweep", "st", "--state", "queued,held").stdout.split()
    herd.cli("edit", *ids, "--gpus", "2")
    herd.cli("priority", *ids, "5")
    assert status(herd) == ([], [])

    # An option no command changes on a waiting job: cancel them, submit the sweep again.
    sweep(herd, tmp_path, "--gpus", "2", "--priority", "5", "--oom-retry")
    said = (
        "2 points waiting to run (queued or held) have other job options than the sweep's "
        f"latest submission gave (--oom-retry no -> yes); cancel them (gpuherd kill {WAITING}), "
        "then submit the sweep again to run them with these"
    )
    assert status(herd) == ([said], [said])
