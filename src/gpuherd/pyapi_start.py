"""`gpuherd.connect()`'s start of a daemon (pyapi.py): detached, and waited for until it
answers, or its own last word in its log said why it did not; and its warning when the daemon
that runs already has other GPUs than those it was asked for."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Mapping
from typing import Any

from gpuherd import paths
from gpuherd.client import Client
from gpuherd.daemon_presence import ALREADY_RUNNING, lock_holder, started_process, still_running
from gpuherd.errors import DaemonError
from gpuherd.pyapi_values import connect_spelling, start_options, warn_at_caller

START_TIMEOUT = 30.0


def start_daemon(client: Client, args: list[str], variable_helps: bool) -> None:
    """Start the daemon detached (sh puts it in the background and exits, so it is never a
    child of this process: no zombie, nothing to reap), and wait until it answers."""
    from gpuherd.daemon_home import refuse_another_users_home  # (deferred: imports the store)

    refuse_another_users_home(client.home)  # before daemon.log is opened in it (daemon_cmds)
    paths.make_home(client.home)
    log = paths.daemon_log(client.home)
    seen = log.stat().st_size if log.exists() else 0
    with log.open("ab") as out:  # sh says the daemon's pid: its output goes to the log
        launched = subprocess.run(
            ["/bin/sh", "-c", '"$@" </dev/null >&2 & echo $!', "sh", *args],
            stdout=subprocess.PIPE,
            stderr=out,
            start_new_session=True,
            check=True,
        )
    daemon = started_process(int(launched.stdout))
    deadline = time.monotonic() + START_TIMEOUT
    # On the start's clock: a daemon not serving yet held a poll 60 s (the client's timeout).
    poll = Client(client.home, waits_for_socket=False)
    while not _answers(poll, deadline):
        exited = not still_running(daemon)  # (before the log is read: its last word comes first)
        failed = client.last_word(seen)
        if failed and _lost_race(client, failed):
            failed, exited = None, False  # another start's daemon has the home: waited for
        if (failed or exited) and not _answers(poll, deadline):  # (another may have started)
            if not failed:  # it died before its last word (killed): the log may say more
                raise DaemonError(f"the daemon exited before it answered; see {log}")
            raise DaemonError(connect_spelling(failed, variable_helps))
        if time.monotonic() > deadline:
            raise DaemonError(f"the daemon did not answer within {START_TIMEOUT:g}s; see {log}")
        time.sleep(0.02)


def _lost_race(client: Client, failed: str) -> bool:
    """Did the daemon started exit because another, started meanwhile, holds the home (scripts
    or threads that connect at once)? That one is connected to once it answers: each
    connect() but the first raised `a daemon is already running`, as `daemon start` does."""
    return failed.startswith(ALREADY_RUNNING) and lock_holder(client.home) is not None


def _answers(poll: Client, deadline: float) -> bool:
    poll.answer_by(deadline)
    return poll.is_up()


def warn_other_gpus(
    client: Client, status: Mapping[str, Any], gpus: str | list[int] | None, fake_gpus: Any
) -> None:
    """A UserWarning if the daemon running (`status`: its GET /daemon) does not have the GPUs
    connect() was asked for (`gpus` or `fake_gpus`, refused here if bad, as a start refuses
    them): only a start uses them, and they were ignored without a word. Not refused: a
    script run twice finds the daemon its first run started, and must work as it did. Which
    GPUs, and whether fake, are compared; not a fake GPU's memory."""
    if gpus is None and fake_gpus is None:
        return
    start_options(gpus, fake_gpus)
    from gpuherd.gpus import FakeProbe, parse_fake_spec, parse_gpu_spec  # (given ones only)

    has, probe = status.get("gpus"), str(status.get("probe") or "")
    if has is None:  # (a daemon older than that answer: nothing to compare)
        return
    if fake_gpus is not None:
        key, value = "fake_gpus", fake_gpus
        indices = list(FakeProbe(parse_fake_spec(str(fake_gpus))).indices)
    else:
        key, value = "gpus", gpus
        indices = list(
            parse_gpu_spec(gpus if isinstance(gpus, str) else [str(i) for i in gpus or ()])
        )
    if (key == "fake_gpus") == probe.startswith("fake:") and indices == sorted(has):
        return
    listed = ",".join(map(str, sorted(has))) or "none"
    warn_at_caller(
        f"connect({key}={value!r}) ignored: the daemon already running for {client.home} (pid "
        f"{status.get('pid')}) uses GPUs {listed} ({probe}) and keeps them; to restart it with "
        f"{key}={value!r}: `gpuherd daemon stop` (running jobs go on), then connect() again",
        UserWarning,
    )
