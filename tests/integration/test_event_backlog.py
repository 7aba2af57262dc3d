"""A reader of the daemon's changes that falls more than 10,000 behind (one submission of
10,500 jobs publishes 10,500 at once) is told so and keeps following: before, it was dropped
without a word, so `wait` answered only at its timeout and an event stream went quiet."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

from conftest import Herd, Recorder, UnixConnection, wait_for


def test_wait_and_the_event_stream_follow_on_after_a_burst_of_changes(
    daemon: Herd, recorder: Recorder
) -> None:
    job = daemon.submit("--gpus", "0", "--", recorder.cmd("x", wait="go"))
    wait_for(lambda: recorder.waiting("x") == 1, what="the job to run")

    stream = UnixConnection(daemon.client.socket_path, timeout=30)
    stream.request("GET", "/api/v1/events")
    events = stream.getresponse()
    assert events.readline() == b": connected\n"

    answer: dict[str, Any] = {}

    def wait() -> None:
        answer.update(daemon.client.get(f"/jobs/wait?ids={job}&timeout=120"))
        answer["after"] = time.monotonic()

    waiter = threading.Thread(target=wait)
    waiter.start()
    try:
        daemon.submit_lines(["true"] * 10_500, "--hold", "--gpus", "0")  # one burst
        recorder.go()
        ended = time.monotonic()
        waiter.join(timeout=60)
        assert not waiter.is_alive(), "wait did not answer"
        assert answer["done"] is True and answer["states"] == {str(job): "succeeded"}
        assert answer["after"] - ended < 30  # it answered the end, not its 120 s timeout

        seen = []
        while not any(c.get("id") == job and c.get("state") == "succeeded" for c in seen):
            line = events.readline()
            assert line, "the event stream ended"
            if line.startswith(b"data: "):
                seen.append(json.loads(line[len("data: ") :]))
        gap = seen.index({"event": "gap"})
        assert gap < len(seen) - 1  # the job's end came after the gap
    finally:
        recorder.go()
        waiter.join(timeout=60)
        stream.close()
