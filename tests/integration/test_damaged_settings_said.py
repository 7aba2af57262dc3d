"""More of herd.db's settings rows, damaged (a crash, a hand edit; test_damaged_settings.py has
the executor's, the GPUs' and the rows a start mends). A `config.*` row that did not parse fell
back on the default in silence, the user's `config set retries 3` lost without a word: now
said in daemon.log and by `gpuherd config`, the row kept. A damaged `listen` row (where the
last daemon listened) had `daemon restart` told to "free that port", which nothing held. And
the removed GPUs' row, damaged while the daemon runs, refused `daemon status` and `gpus
remove` until a restart: now put right as the start puts it right, with a warning."""

from __future__ import annotations

import re

from test_damaged_settings import set_setting, table

from conftest import Herd

RETRIES_3X = (
    "herd.db's `config.retries` setting is damaged (found '3x': invalid count '3x': use a "
    "number from 0 to 2**63 - 1): not taken{instead}; `gpuherd config set retries "
    "VALUE` sets it again, `gpuherd config unset retries` keeps the default"
)


def daemon_log(herd: Herd) -> str:
    return (herd.home / "daemon.log").read_text()


def test_a_config_row_not_taken_is_said_at_start_and_by_config(herd: Herd) -> None:
    herd.start("--fake-gpus", "1")
    herd.cli("config", "set", "retries", "3")
    herd.cli("daemon", "stop")
    set_setting(herd, "config.retries", "3x")
    herd.start()
    warned = f"WARNING gpuherd.daemon: {RETRIES_3X.format(instead=', retries is 0 (its default)')}"
    assert daemon_log(herd).count(warned + "\n") == 1
    # The value in effect, as before (scripts read it); beside it, that theirs is not taken.
    said = f"gpuherd: warning: {RETRIES_3X.format(instead='')}\n"
    got = herd.cli("config", "get", "retries")
    assert (got.stdout, got.stderr) == ("0\n", said)
    listed = herd.cli("config")
    assert re.search(r"^retries +0 ", listed.stdout, re.MULTILINE), listed.stdout
    assert listed.stderr == said
    assert herd.cli("config", "--json").stderr == said
    assert table(herd, "meta").count(("config.retries", "3x")) == 1  # kept: nothing lost

    # Damaged while the daemon runs: its value stays in effect, and the row is said as such.
    herd.cli("config", "set", "retries", "2")  # (the way out it names: said no more)
    assert herd.cli("config", "get", "retries").stderr == ""
    set_setting(herd, "config.retries", "3x")
    got = herd.cli("config", "get", "retries")
    assert (got.stdout, got.stderr) == ("2\n", said)


def test_a_damaged_listen_row_is_said_as_such_not_as_a_port_to_free(herd: Herd) -> None:
    herd.start("--fake-gpus", "1", "--listen", "127.0.0.1:0")
    herd.cli("daemon", "stop")
    set_setting(herd, "listen", "127.0.0.1:88888")
    restart = herd.cli("daemon", "restart", check=False)
    assert (restart.returncode, restart.stderr) == (
        1,
        "gpuherd: error: herd.db's `listen` setting is damaged (found '127.0.0.1:88888': not "
        "an address like 127.0.0.1:8888): `gpuherd daemon start` starts one that does not "
        "listen, or `gpuherd daemon start --listen HOST:PORT` one that listens there\n",
    )
    assert not herd.is_up()
    # With no daemon running, the hint is the start that works (not `restart`, refused).
    hint = herd.cli("ls", check=False).stderr
    assert "start it again with `gpuherd daemon start`, which starts" in hint, hint
    herd.start("--listen", "127.0.0.1:0")  # as it says: saved again, for the next restart
    address = herd.client.get("/daemon/listen")["address"]
    herd.cli("daemon", "stop")
    herd.cli("daemon", "restart")
    assert herd.client.get("/daemon/listen")["address"] == address


def test_removed_gpus_damaged_while_the_daemon_runs_are_mended_as_a_start_does(
    herd: Herd,
) -> None:
    herd.start("--fake-gpus", "2")
    set_setting(herd, "removed_gpus", "[1]")  # (a hand edit while it runs)
    assert herd.json("daemon", "status")["removed"] == []  # (it was refused: the row's line)
    herd.cli("gpus", "remove", "1")
    warned = (
        "WARNING gpuherd.daemon: herd.db's `removed_gpus` setting is damaged (found '[1]': not "
        'an object like {"1": [1, null]}): forgotten'
    )
    assert daemon_log(herd).count(warned) == 1  # put right once, then read as written
    assert table(herd, "meta").count(("removed_gpus", '{"1": [1, null]}')) == 1
    herd.cli("gpus", "add", "1")  # given back its own slots, as any removed GPU is
    assert [g["index"] for g in herd.json("gpus")["gpus"]] == [0, 1]
    assert table(herd, "meta").count(("removed_gpus", "{}")) == 1


def test_a_damaged_seen_alive_note_is_forgotten_and_the_start_goes_on(herd: Herd) -> None:
    # The note of when the last daemon saw its attempts alive, damaged by a hand edit: a
    # number past any int (1e400) failed the start with Python's OverflowError.
    herd.start("--fake-gpus", "1")
    herd.cli("daemon", "stop")
    for damaged in ('{"at": 1, "attempts": [[1e400, 1]]}', '{"at": 1e400, "attempts": [[1, 1]]}'):
        set_setting(herd, "seen_alive", damaged)
        herd.start()
        assert f"herd.db's `seen_alive` setting is damaged (found {damaged!r}" in daemon_log(herd)
        assert ("seen_alive", "") in table(herd, "meta")  # (dropped once read, as always)
        herd.wait_state(herd.submit("true"), "succeeded")
        herd.cli("daemon", "stop")
