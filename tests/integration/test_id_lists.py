"""Job ids as the verbs take them, through a real daemon: a range that names no job (answered
without holding the queue up), `last` inside a list, a blank word (a quoted `"$(...)"` that
matched nothing), and refusals said alike for several jobs (one line naming them)."""

from __future__ import annotations

import time
from collections.abc import Callable

import psutil
import pytest

from conftest import Herd, communicated, wait_for

HINT = "`gpuherd ls --all` lists the jobs there are"
MISSING = "10000000-10799999"
"""800,000 ids no job of the module's daemon has (`hold 5000-800000` of a queue up to job
2,500 held dispatch up for 9-12 s)."""


def asking_or_done(pid: int, held: float = 0.3) -> Callable[[], bool]:
    """Whether the CLI verb `pid` has held a connection to the daemon for `held` seconds (its
    request is with the daemon), or has exited already."""
    process, since = psutil.Process(pid), list[float]()

    def asking() -> bool:
        try:
            if process.status() == psutil.STATUS_ZOMBIE:
                return True
            connected = bool(process.net_connections(kind="unix"))
        except psutil.NoSuchProcess:
            return True
        since[:] = (since or [time.monotonic()]) if connected else []
        return bool(since) and time.monotonic() - since[0] >= held

    return asking


@pytest.mark.parametrize("verb", [["kill"], ["hold"], ["edit", "--retries", "1"]])
def test_a_verb_on_a_range_naming_no_job_says_so_and_the_queue_goes_on(
    shared_daemon: Herd, verb: list[str]
) -> None:
    """`kill 3000-999999` of a queue up to job 2,500 went through its ids 500 at a time with
    dispatch paused: no job started for 10-15 s. The ids that name no job are told apart
    first; the answer is the same."""
    herd = shared_daemon
    asked = herd.popen(verb[0], MISSING, *verb[1:])
    wait_for(asking_or_done(asked.pid), what=f"the {verb[0]}'s request")
    job = herd.submit("--gpus", "0", "--", "true")
    herd.wait_state(job, "running", "succeeded", timeout=3)  # (it waited for the verb: 9 s)
    out, err = communicated(asked, timeout=120)
    assert (asked.returncode, out, err.decode()) == (
        1,
        b"",
        f"gpuherd: error: no job {MISSING}: {HINT}\n",
    )


def test_a_range_past_the_jobs_beside_jobs_answers_each(shared_daemon: Herd) -> None:
    """The jobs named are acted on, in order, the ids past them said once, as before."""
    herd = shared_daemon
    held = [herd.submit("--hold", "--", "true") for _ in range(2)]
    said = herd.cli("kill", str(held[0]), f"{held[1]}-{held[1] + 600}", check=False)
    assert (said.returncode, said.stdout, said.stderr) == (
        1,
        f"jobs {held[0]}-{held[1]}: cancelled\n",
        f"gpuherd: error: no job {held[1] + 1}-{held[1] + 600}: {HINT}\n",
    )


def test_last_is_taken_inside_a_list_of_ids(shared_daemon: Herd) -> None:
    """`kill 82,last`, `submit -a 82,last` and `wait last,82` were refused (exit 2), naming
    `last` as the way: `last` was taken only as a word of its own."""
    herd = shared_daemon
    first = herd.submit("--hold", "--", "true")
    newest = herd.submit("--hold", "--", "true")
    child = herd.submit("--hold", "-a", f"{first},last", "--", "true")
    assert herd.job(child)["after"] == [first, newest]
    assert herd.cli("kill", f"last,{first}").stdout == f"jobs {first},{child}: cancelled\n"
    assert herd.cli("release", f"{newest}").stdout == f"job {newest}: queued\n"
    waited = herd.cli("wait", f"last,{newest}", check=False)  # (last: the child, cancelled)
    assert (waited.returncode, waited.stdout) == (1, "1 of 2 jobs succeeded\n")


def test_a_job_command_taking_one_job_says_a_list_with_last_is_two(shared_daemon: Herd) -> None:
    refused = shared_daemon.usage_error("show", "7,last")
    assert "show takes one job id, not '7,last': one job at a time (gpuherd show 7, then " in (
        refused
    )


@pytest.mark.parametrize(
    ("verb", "said"),
    [
        (["kill"], "nothing to kill (e.g. gpuherd kill 3-7)"),
        (["rm"], "nothing to rm (e.g. gpuherd rm 3-7)"),
        (["retry", "--hold"], "nothing to retry (e.g. gpuherd retry 3-7)"),
        (["hold"], "nothing to hold (e.g. gpuherd hold 3-7)"),
        (["release"], "nothing to release (e.g. gpuherd release 3-7)"),
        (["pause"], "nothing to pause (e.g. gpuherd pause 3-7)"),
        (["resume"], "nothing to resume (e.g. gpuherd resume 3-7)"),
        (["edit", "--retries", "1"], "nothing to edit (e.g. gpuherd edit 3-7)"),
        (["wait"], "nothing to wait for (e.g. gpuherd wait 3-7)"),
    ],
)
def test_a_blank_word_of_ids_is_no_ids_given(
    shared_daemon: Herd, verb: list[str], said: str
) -> None:
    """`gpuherd kill "$(gpuherd ls -q --state lost)"` with none lost gives the verb one empty
    word: it was refused (`no job ids given`, exit 2), where `kill` alone does nothing and
    says so, exit 0. `pause ''` pauses no job, nor the queue (`pause` alone would)."""
    herd = shared_daemon
    for blank in ("", " \n"):
        done = herd.cli(verb[0], blank, *verb[1:])
        assert (done.stdout, done.stderr) == (f"no job ids given: {said}\n", "")
    if verb[0] in ("kill", "rm", "retry", "hold", "release", "edit"):  # the words of none
        assert herd.cli(verb[0]).stdout == f"no job ids given: {said}\n"
    assert "queue: dispatching" in herd.cli("daemon", "status").stdout


def test_ids_one_a_line_in_one_word_and_a_blank_word_beside_ids(shared_daemon: Herd) -> None:
    """A quoted `"$(gpuherd ls -q)"` gives its ids one a line, in one word."""
    herd = shared_daemon
    held = [herd.submit("--hold", "--", "true") for _ in range(2)]
    assert herd.cli("kill", f"{held[0]}\n{held[1]}\n", "").stdout == (
        f"jobs {held[0]}-{held[1]}: cancelled\n"
    )
    priority = herd.cli("priority", "", "3")
    assert priority.stdout == "no job ids given: nothing to change (e.g. gpuherd priority 3-7 10)\n"


def test_jobs_refused_alike_share_one_line_naming_them(shared_daemon: Herd) -> None:
    """`edit 1-5 --after 9999` said its refusal five times, naming no job; an edit or a
    priority of ended jobs said 10 lines naming each, then the rest."""
    herd = shared_daemon
    held = herd.submit_lines(["true"] * 5, "--hold")
    ids = f"{held[0]}-{held[-1]}"
    refused = herd.cli("edit", ids, "--after", "99999999", check=False)
    assert (refused.returncode, refused.stderr) == (
        1,
        f"gpuherd: error: jobs {ids}: after (--after): no job 99999999 ({HINT})\n",
    )
    ended = herd.submit_lines(["true"] * 12, "--gpus", "0")
    for job in ended:
        herd.wait_state(job, "succeeded")
    ids = f"{ended[0]}-{ended[-1]}"
    refused = herd.cli("priority", ids, "5", check=False)
    assert refused.stderr == (
        f"gpuherd: error: jobs {ids} already ended (succeeded): `gpuherd retry --hold {ids}` "
        "puts it back held, to change its priority before it runs again "
        f"(`gpuherd release {ids}` runs it)\n"
    )
