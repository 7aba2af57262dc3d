"""`GET /api/v1/events` gives each event an `id`, and a reader that comes back with the last
one it got (`Last-Event-ID`, as an EventSource sends it) gets the changes it missed; for an
id the daemon cannot resume from (too old, another daemon's, no id at all) it is told
`{"event": "gap"}` at once. The stream sent no id: a reader cut off missed the changes made
meanwhile without a word."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from conftest import Herd, UnixConnection

GAP = {"event": "gap"}


@dataclass
class Message:
    id: str | None
    data: Any
    """The `data:` field's JSON; None for a message without one (the first: a comment)."""

    @property
    def number(self) -> int:
        assert self.id is not None
        return int(self.id.split(".")[1])


class Events:
    """An /events stream over the home's socket, read a message at a time (each read times
    out: a stream that sends nothing more fails the test, never hangs it)."""

    def __init__(self, herd: Herd, last_id: str | None = None) -> None:
        self.conn = UnixConnection(herd.client.socket_path, timeout=15)
        headers = {"Last-Event-ID": last_id} if last_id else {}
        self.conn.request("GET", "/api/v1/events", headers=headers)
        self.response = self.conn.getresponse()
        assert self.response.status == 200

    def next(self) -> Message:
        fields: dict[str, str] = {}
        while (line := self.response.readline().decode()) != "\n":
            assert line, "the stream ended"
            name, _, value = line.rstrip("\n").partition(": ")
            fields[name] = value
        data = fields.get("data")
        return Message(fields.get("id"), None if data is None else json.loads(data))

    def until_job(self, job: int) -> list[Message]:
        """The messages up to the first one about job `job`."""
        seen = [self.next()]
        while not isinstance(seen[-1].data, dict) or seen[-1].data.get("id") != job:
            seen.append(self.next())
        return seen

    def close(self) -> None:
        self.conn.close()


def test_each_event_has_an_id_and_a_reader_back_with_one_gets_what_it_missed(
    shared_daemon: Herd,
) -> None:
    first = Events(shared_daemon)
    connected = first.next()
    assert connected.data is None and connected.id  # the mark it connected at, no change
    job = shared_daemon.submit("--hold", "--", "true")
    got = first.until_job(job)
    epoch = connected.id.split(".")[0]
    assert all(m.id and m.id.split(".")[0] == epoch for m in got)
    assert [m.number for m in got] == list(range(connected.number + 1, got[-1].number + 1))
    first.close()

    # Cut off: two more jobs change meanwhile.
    missed = [shared_daemon.submit("--hold", "--", "true") for _ in range(2)]
    shared_daemon.cli("priority", str(missed[0]), "5")

    back = Events(shared_daemon, last_id=got[-1].id)
    assert back.next().data is None  # `: connected`, no id of its own: the replay follows
    replayed = [back.next() for _ in range(3)]
    assert [(m.data["id"], m.data.get("event")) for m in replayed] == [
        (missed[0], "submit"),
        (missed[1], "submit"),
        (missed[0], "priority"),
    ]
    assert [m.number for m in replayed] == list(range(got[-1].number + 1, got[-1].number + 4))
    later = shared_daemon.submit("--hold", "--", "true")
    (live,) = back.until_job(later)  # nothing else between: none replayed twice
    assert live.number == replayed[-1].number + 1
    back.close()

    # A reader that saw no change comes back with the id it connected at.
    since_connect = Events(shared_daemon, last_id=connected.id)
    assert since_connect.next().data is None
    assert since_connect.next().data["id"] == job
    since_connect.close()


def test_an_id_the_daemon_cannot_resume_from_gets_a_gap_at_once(shared_daemon: Herd) -> None:
    stream = Events(shared_daemon)
    connected = stream.next()
    stream.close()
    epoch, _, count = str(connected.id).partition(".")
    for unknown in ["1", "nonsense", f"{epoch}.{int(count) + 5}", f"0{epoch}.{count}"]:
        back = Events(shared_daemon, last_id=unknown)
        assert back.next().data is None
        gap = back.next()
        assert gap.data == GAP and gap.id == connected.id, unknown  # nothing changed since
        job = shared_daemon.submit("--hold", "--", "true")
        assert back.until_job(job)[-1].number == gap.number + 1  # and it follows on
        back.close()
        connected = Message(f"{epoch}.{gap.number + 1}", None)


def test_an_id_older_than_the_changes_held_gets_a_gap(shared_daemon: Herd) -> None:
    stream = Events(shared_daemon)
    old = stream.next().id
    stream.close()
    ids = shared_daemon.submit_lines(["true"] * 1_100, "--hold")  # past the 1000 held
    back = Events(shared_daemon, last_id=old)
    assert back.next().data is None
    assert back.next().data == GAP
    assert len(ids) == 1_100
    job = shared_daemon.submit("--hold", "--", "true")
    assert [m.data["id"] for m in back.until_job(job)] == [job]  # it follows on from now
    back.close()


def test_an_id_from_before_a_daemon_restart_replays_none_of_the_new_daemons(
    daemon: Herd,
) -> None:
    before = Events(daemon)
    connected = before.next()
    jobs = [daemon.submit("--hold", "--", "true") for _ in range(3)]
    last_before = before.until_job(jobs[-1])[-1].id
    before.close()

    daemon.cli("daemon", "stop")
    daemon.start("--fake-gpus", "4")
    # The new daemon publishes as many changes as the old one had, and more: a count alone
    # would take the old id for a place in these.
    for _ in range(4):
        daemon.submit("--hold", "--", "true")
    back = Events(daemon, last_id=last_before)
    assert back.next().data is None
    gap = back.next()
    assert gap.data == GAP
    assert gap.id and connected.id and gap.id.split(".")[0] != connected.id.split(".")[0]
    job = daemon.submit("--hold", "--", "true")
    assert [m.data["id"] for m in back.until_job(job)] == [job]  # none of jobs 4-7 replayed
    back.close()
