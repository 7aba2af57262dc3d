"""`gpuherd config unset NAME` (or `config set NAME default`): a setting back to its default.
There was no way to it for `reserve-after` (it takes no `auto` nor `none`) but knowing the
default, 5m, and setting it; `config unset` was "No such command 'unset'. Did you mean
'set'?"."""

from __future__ import annotations

from conftest import Herd


def test_unset_puts_each_setting_back_to_its_default_across_restarts(daemon: Herd) -> None:
    defaults = daemon.json("config")
    changed = {
        "reserve-after": "1m",
        "retries": "3",
        "grace": "1h",
        "keep-free": "10%",
        "on-end": "echo ended",
        "project-limits": "a=1",
    }
    for name, value in changed.items():
        daemon.cli("config", "set", name, value)
    # Shown as given, as grace is: it said `2.0s`, and its default `5m00s`.
    for given, shown in (("2s", "2s"), ("2.5s", "2.5s"), ("90s", "1m30s")):
        said = daemon.cli("config", "set", "reserve-after", given).stdout
        assert said == f"reserve-after = {shown}\n", given
    assert daemon.cli("config", "unset", "reserve-after").stdout == (
        "reserve-after = 5m (its default)\n"
    )
    assert daemon.cli("config", "get", "reserve-after").stdout == "5m\n"
    for name in ("retries", "grace"):
        daemon.cli("config", "unset", name)
    for name in ("keep-free", "on-end", "project-limits"):  # the word set's VALUE takes too
        said = daemon.cli("config", "set", name, "Default").stdout  # (said as unset says it)
        assert said == f"{name} = {defaults[name]} (its default)\n"
    assert daemon.json("config") == defaults
    # Kept as the default, not read as a value at the next start (an on-end command
    # `default`, which would run at every job's end).
    daemon.cli("daemon", "restart")
    assert daemon.json("config") == defaults
    daemon.cli("config", "set", "on-end", "echo again")  # and set again as any other
    assert daemon.json("config")["on-end"] == "echo again"


def test_unset_of_a_name_that_is_no_setting_is_refused_in_one_line(daemon: Herd) -> None:
    said = daemon.usage_error("config", "unset", "reserve_after")
    assert said.startswith("gpuherd: error: unknown setting 'reserve_after': use "), said
    said = daemon.usage_error("config", "unset")
    assert said.startswith("gpuherd: error: no NAME given: gpuherd config unset"), said
