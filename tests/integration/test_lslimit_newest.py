"""`gpuherd ls` cut by `--limit` keeps the rows nearest now (core/nearest_now.py): every running
job, the newest finished ones and the waiting ones next to start. It kept the first rows:
`ls --all --limit 3` of 6 finished jobs and a held one showed jobs 1-3, and `ls --state
failed` (100 by default) the oldest failures.

One daemon (4 fake GPUs) for the module; each test lists its own jobs (`--project`), made
finished at once by `kill` of held jobs (cancelled), or by `false` (failed)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from conftest import Herd, started_once
from gpuherd.pyapi import connect


@pytest.fixture(scope="module")
def herd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Herd]:
    with started_once(tmp_path_factory, "--fake-gpus", "4") as herd:
        yield herd


def cancelled(herd: Herd, project: str, count: int) -> list[int]:
    """`count` finished jobs of `project` (held, then killed: cancelled), oldest first."""
    ids = herd.submit_lines(["true"] * count, "--hold", "--project", project)
    herd.cli("kill", f"{ids[0]}-{ids[-1]}")
    return ids


def held(herd: Herd, project: str, *priorities: int) -> list[int]:
    """Held jobs of `project`, one per priority given, in the order they were submitted."""
    return [
        herd.submit("--hold", "--project", project, "--priority", str(p), "--", "true")
        for p in priorities
    ]


def running(herd: Herd, project: str) -> int:
    job = herd.submit("--project", project, "--", "sleep", "60")
    herd.wait_state(job, "running")
    return job


def ls(herd: Herd, *args: str) -> list[str]:
    return herd.cli("ls", *args).stdout.splitlines()


def ids_of(lines: list[str]) -> list[int]:
    """The ids of a table's rows (the header and the `…` lines left out)."""
    return [int(line.split()[0]) for line in lines[1:] if line[0].isdigit()]


def test_the_oldest_finished_jobs_are_the_ones_left_out(herd: Herd) -> None:
    done = cancelled(herd, "old-end", 6)
    [waiting] = held(herd, "old-end", 0)
    lines = ls(herd, "--all", "--project", "old-end", "--limit", "3")
    assert ids_of(lines) == [done[4], done[5], waiting]  # it was done[0], done[1], done[2]
    # Said where they would be, under the header, with the limit that shows every job.
    assert lines[1] == "… 4 earlier finished jobs not shown (--limit 7 shows them)"
    assert len(lines) == 1 + 1 + 3  # nothing left out at the end
    # The default limit (100) keeps the newest 100 too.
    many = cancelled(herd, "old-end-100", 150)
    lines = ls(herd, "--state", "cancelled", "--project", "old-end-100")
    assert ids_of(lines) == many[50:]
    assert lines[1] == "… 50 earlier finished jobs not shown (--limit 150 shows them)"


def test_the_waiting_jobs_last_to_start_are_the_ones_left_out(herd: Herd) -> None:
    [done] = cancelled(herd, "far-end", 1)
    # Start order: priority first, so not the order of the ids.
    low, high, mid, _low, high2 = held(herd, "far-end", 0, 9, 5, 0, 9)
    lines = ls(herd, "--all", "--project", "far-end", "--limit", "3")
    assert ids_of(lines) == [done, high, high2]
    assert lines[-1] == "… and 3 more waiting (a higher --limit shows them)"
    # A plain `ls --project`: the limit counts the waiting jobs alone, as before.
    lines = ls(herd, "--project", "far-end", "--limit", "2")
    assert ids_of(lines) == [done, high, high2]
    assert lines[-1] == "… and 3 more waiting (a higher --limit shows them)"
    assert ids_of(ls(herd, "--state", "held", "--project", "far-end", "--limit", "4")) == [
        high,
        high2,
        mid,
        low,
    ]


def test_a_mix_keeps_the_running_the_newest_finished_and_the_next_to_start(herd: Herd) -> None:
    done = cancelled(herd, "mix", 5)
    job = running(herd, "mix")
    waiting = held(herd, "mix", 0, 0, 0, 0)
    lines = ls(herd, "--all", "--project", "mix", "--limit", "5")
    # One row for the running job, the other four shared: two finished, two waiting.
    assert ids_of(lines) == [done[3], done[4], job, waiting[0], waiting[1]]
    assert lines[1] == "… 3 earlier finished jobs not shown (--limit 10 shows them)"
    assert lines[-1] == "… and 2 more waiting (a higher --limit shows them)"
    # `-q` and `--json` given the limit list the same jobs, as the API's `ids_only`.
    quiet = herd.cli("ls", "-q", "--all", "--project", "mix", "--limit", "5").stdout.split()
    assert [int(i) for i in quiet] == ids_of(lines)
    rows = herd.json("ls", "--all", "--project", "mix", "--limit", "5")
    assert [row["id"] for row in rows] == ids_of(lines)
    query = {"all": True, "project": "mix", "limit": 5}
    assert herd.client.get("/jobs", ids_only=True, **query)["ids"] == ids_of(lines)
    answer = herd.client.get("/jobs", **query)
    assert (answer["more"], answer["more_earlier"]) == (5, 3)
    herd.cli("kill", str(job))


def test_running_jobs_are_shown_past_the_limit_and_it_says_so(herd: Herd) -> None:
    done = cancelled(herd, "busy", 2)
    jobs = [running(herd, "busy"), running(herd, "busy")]
    waiting = held(herd, "busy", 0)
    lines = ls(herd, "--all", "--project", "busy", "--limit", "1")
    assert ids_of(lines) == jobs
    assert lines[1] == "… 2 earlier finished jobs not shown (--limit 5 shows them)"
    assert lines[-2:] == [
        "… and 1 more waiting (a higher --limit shows them)",
        "… all 2 running or paused jobs shown, past --limit 1",
    ]
    assert ids_of(ls(herd, "--all", "--project", "busy", "--limit", "5")) == [
        *done,
        *jobs,
        *waiting,
    ]
    herd.cli("kill", *map(str, jobs))


def test_state_failed_keeps_the_newest_failures(herd: Herd) -> None:
    failed = herd.submit_lines(["false"] * 4, "--project", "fails", "--gpus", "0")
    herd.cli("wait", f"{failed[0]}-{failed[-1]}", check=False)
    lines = ls(herd, "--state", "failed", "--project", "fails", "--limit", "2")
    # The two that ended last (CPU jobs run side by side: not always the highest ids), by id.
    ended = {job: herd.job(job)["ended_at"] for job in failed}
    last = sorted(sorted(failed, key=lambda job: (ended[job], job))[2:])
    assert ids_of(lines) == last
    assert lines[1] == "… 2 earlier finished jobs not shown (--limit 4 shows them)"
    # The Python API's `jobs(limit=...)` is the same listing: the newest, `more` the rest.
    api = connect(herd.home, start=False)
    newest = api.jobs(state="failed", project="fails", limit=2)
    assert sorted(job.id for job in newest) == last and newest.more == 2


def test_without_a_limit_json_csv_and_quiet_list_every_job(herd: Herd) -> None:
    done = cancelled(herd, "whole", 120)
    waiting = held(herd, "whole", 0, 0)
    every = [*done, *waiting]
    quiet = herd.cli("ls", "-q", "--all", "--project", "whole").stdout.split()
    assert [int(i) for i in quiet] == every
    assert [row["id"] for row in herd.json("ls", "--all", "--project", "whole")] == every
    by_state = herd.json("ls", "--state", "cancelled", "--project", "whole")
    assert [row["id"] for row in by_state] == done  # the table's default 100 is the table's
    csv = herd.cli("ls", "--csv", "--columns", "id", "--state", "cancelled", "--project", "whole")
    assert csv.stdout.split() == ["id", *map(str, done)]
    # The table cuts them, the newest kept.
    lines = ls(herd, "--state", "cancelled", "--project", "whole")
    assert ids_of(lines) == done[20:]


def test_the_help_says_what_the_limit_limits(herd: Herd) -> None:
    said = " ".join(herd.cli("ls", "--help").stdout.split())
    assert (
        "--limit N Show at most N jobs, those nearest now: the running ones (always), the"
        " newest finished and the next waiting to start; without --all, --state or --since,"
        " N waiting jobs." in said
    )


@pytest.mark.parametrize(
    ("room", "finished", "waiting", "kept"),
    [
        (100, 10_000, 40, (60, 40)),  # the waiting fit: the rest is the finished jobs'
        (100, 10, 1_000, (10, 90)),  # and the other way round
        (100, 10_000, 10_000, (50, 50)),
        (3, 6, 1, (2, 1)),
        (1, 5, 5, (1, 0)),  # the odd row is the finished jobs'
        (0, 5, 5, (0, 0)),  # running jobs took the whole limit
        (-2, 5, 5, (0, 0)),  # and more
        (10, 0, 0, (0, 0)),
    ],
)
def test_shares_split_the_room_between_finished_and_waiting(
    room: int, finished: int, waiting: int, kept: tuple[int, int]
) -> None:
    from gpuherd.core.nearest_now import shares  # (here: the module's other tests run without)

    assert shares(room, finished, waiting) == kept


def test_an_older_daemons_count_is_said_as_it_was() -> None:
    # A daemon from before `more_earlier` cut its listings' end: its `more` is said so.
    from gpuherd.cli import ls_table, plain

    row = {"id": 3, "state": "held"}
    lines = ls_table.job_lines([row], 4, True, plain.Terminal(), columns=("id",), earlier=None)
    assert lines[-1] == "… and 4 more (a higher --limit shows them)"
