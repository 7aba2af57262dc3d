"""What the CLI shows: a `\\`-continued job on one readable line, and the start hint that fits
a home whose daemon is not running (its remembered settings, start_hint.py)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from conftest import Herd
from gpuherd.store import Store

FIRST_START = "start one with `gpuherd daemon start` (add --fake-gpus 4 on a machine without GPUs)"


def test_a_continued_job_reads_on_one_line_and_runs_as_written(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    herd = shared_daemon
    jobs = tmp_path / "jobs.txt"
    jobs.write_text("printf '<%s>' one \\\n    two\\\n3 \\\n\tfour\n")
    job = int(herd.cli("submit", "-q", "--file", str(jobs)).stdout.split()[0])
    herd.wait_state(job, "succeeded")

    assert herd.job(job)["command"] == "printf '<%s>' one \\\n    two\\\n3 \\\n\tfour"
    assert herd.cli("log", str(job)).stdout == "<one><two3><four>"
    line = next(x for x in herd.cli("ls", "--all").stdout.splitlines() if x.startswith(f"{job} "))
    # Before: printf '<%s>' one \     two\ 3 \  four
    assert line.endswith("  printf '<%s>' one two3 four"), line
    shown = "<code>printf &#39;&lt;%s&gt;&#39; one two3 four</code>"
    row = re.search(rf'<tr id="job-{job}".*?</tr>', herd.page("/ui/jobs"), re.S)
    assert row and shown in row[0]  # the dashboard's jobs table, and its overview's
    assert shown in herd.page("/ui/overview")


def test_gpuherd_run_says_a_continued_job_on_one_line(tmp_path: Path) -> None:
    jobs = tmp_path / "jobs.txt"
    jobs.write_text("printf '<%s>' one \\\n    two\n")
    done = subprocess.run(
        [sys.executable, "-m", "gpuherd", "run", "--fake-gpus", "1", str(jobs)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    # Before: its start line broke in two, "[0] started on GPU 0: printf '<%s>' one \".
    assert "[0] started on GPU 0: printf '<%s>' one two\n" in done.stdout, done.stdout


def _no_daemon_error(herd: Herd) -> str:
    failed = herd.cli("ls", check=False)
    assert failed.returncode == 3 and not failed.stdout
    return failed.stderr.strip()


def test_the_start_hint_fits_what_the_home_remembers(herd: Herd) -> None:
    said = _no_daemon_error(herd)  # a home no daemon ever ran in: the general hint
    assert said == f"gpuherd: error: no gpuherd daemon is running for {herd.home}: {FIRST_START}"

    herd.start("--fake-gpus", "2")
    herd.cli("daemon", "stop")
    files = sorted(p.name for p in herd.home.iterdir())
    said = _no_daemon_error(herd)
    assert "add --fake-gpus 4" not in said
    assert said.endswith(
        "start it again with `gpuherd daemon start`, which starts as the last one did: "
        "with --fake-gpus 2"
    )
    assert sorted(p.name for p in herd.home.iterdir()) == files  # the hint wrote nothing
    herd.start()  # as it says
    assert herd.json("gpus")["probe"] == "fake: 2 GPUs"
    herd.cli("daemon", "stop")

    # A home set up for a Ray cluster (as `daemon start --address` remembers it): fake GPUs
    # are no answer there (that start is refused), its plain start is.
    store = Store(herd.home / "herd.db")
    store.set_setting("executor", json.dumps({"kind": "ray", "address": "10.0.0.5:6379"}))
    store.close()
    said = _no_daemon_error(herd)
    assert "--fake-gpus" not in said
    assert said.endswith(
        "start it again with `gpuherd daemon start`, which starts as the last one did: "
        "running jobs on the Ray cluster at 10.0.0.5:6379"
    )


def test_the_start_hint_of_a_home_whose_daemon_listened_names_the_restart_that_listens(
    herd: Herd,
) -> None:
    # `daemon start` alone would leave the dashboard's address unserved; `daemon restart`
    # with no daemon running listens where the last one did.
    herd.start("--fake-gpus", "2", "--listen", "127.0.0.1:0")  # a port of the system's choice
    address = herd.client.get("/daemon/listen")["address"]
    herd.kill9()  # a crash: no stop wrote where it listened (its start did: the port it got)
    said = _no_daemon_error(herd)
    assert said.endswith(
        "start it again with `gpuherd daemon restart`, which starts as the last one did: "
        f"with --fake-gpus 2, listening on {address}"
    ), said
    herd.cli("daemon", "restart")  # as it says
    assert herd.client.get("/daemon/listen")["address"] == address
    assert herd.json("gpus")["probe"] == "fake: 2 GPUs"
    herd.cli("daemon", "stop")


def test_the_start_hint_quotes_the_name_typed(herd: Herd) -> None:
    # Under `herd`, the hint quoted `gpuherd daemon start` (the product's name stays).
    herd_script = Path(sys.executable).parent / "herd"
    said = subprocess.run(
        [str(herd_script), "ls"], env=herd.env, capture_output=True, text=True, timeout=60
    )
    assert said.returncode == 3 and not said.stdout
    assert said.stderr == (
        f"herd: error: no gpuherd daemon is running for {herd.home}: start one with `herd "
        "daemon start` (add --fake-gpus 4 on a machine without GPUs)\n"
    )
