"""The device table over a fake state file: a failing probe is logged once (and its recovery
once), tried once per tick, and said; a lost GPU is remembered as last seen."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

from gpuherd.devices import DeviceTable
from gpuherd.errors import NotFound
from gpuherd.gpus.fake import FakeProbe
from gpuherd.store import Store

GiB = 2**30


def write(path: Path, text: str) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(text)
    tmp.replace(path)  # a new inode: seen as a change within one mtime tick


@pytest.fixture
def state(tmp_path: Path) -> Path:
    path = tmp_path / "gpus.json"
    write(path, json.dumps({"gpus": [{"memory_total": "24GiB"}, {"memory_total": "80GiB"}]}))
    return path


@pytest.fixture
def table(tmp_path: Path, state: Path) -> Iterator[DeviceTable]:
    store = Store(tmp_path / "herd.db")
    store.replace_devices({0: 1, 1: 1})
    try:
        yield DeviceTable(store, FakeProbe(state))
    finally:
        store.close()


def failures(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "gpuherd.devices"]


def test_a_failing_probe_is_logged_once_and_its_recovery_once(
    table: DeviceTable, state: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, "gpuherd.devices")
    read_at = table.read_at
    assert read_at is not None and table.failure is None
    write(state, "{broken")
    for _ in range(3):  # three ticks
        assert table.refresh() is False
    (logged,) = failures(caplog)
    assert logged.startswith("GPU probe failed, keeping the reading of ")
    assert "Expecting property name" in logged
    failure = table.failure
    assert failure is not None and "Expecting property name" in failure.reason
    assert table.read_at == read_at  # the reading shown is still the old one
    assert [d.index for d in table.listing()] == [0, 1]

    write(state, json.dumps({"gpus": [{"memory_total": "24GiB"}]}))
    assert table.refresh() is True
    assert table.failure is None and table.read_at is not None and table.read_at >= read_at
    assert len(failures(caplog)) == 2
    assert failures(caplog)[1].startswith("GPU probe works again (it failed from ")


def test_a_failing_probe_is_not_read_again_before_every_placement(
    table: DeviceTable, state: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    now = [time.monotonic() + 10]  # the last good reading is 10 s old
    clock = SimpleNamespace(
        monotonic=lambda: now[0], time=time.time, strftime=time.strftime, localtime=time.localtime
    )
    monkeypatch.setattr("gpuherd.devices.time", clock)
    write(state, "{broken")
    table.refresh()  # the tick: it fails
    reads: list[int] = []
    read = table.probe.read
    monkeypatch.setattr(table.probe, "read", lambda: reads.append(1) or read())
    now[0] += 0.5
    for _ in range(5):  # five placements within a second of the failed read
        table.refresh_if_older(1.0)
    assert reads == []
    now[0] += 1.0
    table.refresh_if_older(1.0)
    assert reads == [1]


def test_a_lost_gpu_is_missing_as_last_seen(table: DeviceTable, state: Path) -> None:
    write(state, json.dumps({"gpus": [{"memory_total": "24GiB"}, {"lost": True}]}))
    table.refresh()
    assert [d.index for d in table.listing()] == [0]
    (lost,) = table.missing()
    assert (lost.index, lost.memory_total) == (1, 80 * GiB)
    device, why = table.unlisted(1)
    assert (why, device.memory_total, device.memory_used) == ("lost", 80 * GiB, None)
    table.remove(1)
    assert table.missing() == []
    assert table.unlisted(1)[1] == "removed"


def test_a_gpu_the_probe_does_not_see_is_said_alike_by_every_verb(
    table: DeviceTable, state: Path
) -> None:
    """`add` said "GPU 7 is not present (the probe sees: 0,1)", the others this."""
    nowhere = (
        "GPU 7 is not configured (configured: 0,1), nor seen by the probe: name a GPU that "
        "`gpuherd gpus` lists"
    )
    for verb in (lambda: table.add(7, None), lambda: table.remove(7)):
        with pytest.raises(NotFound) as refused:
            verb()
        assert str(refused.value) == nowhere
    write(state, json.dumps({"gpus": [{"memory_total": "24GiB"}, {"lost": True}]}))
    table.refresh()
    with pytest.raises(NotFound) as refused:  # configured, but lost: not "not configured"
        table.add(1, 2)
    assert str(refused.value) == (
        "GPU 1 is configured but missing (the probe sees: 0): `gpuherd gpus add 1` again once "
        "the probe sees it"
    )
