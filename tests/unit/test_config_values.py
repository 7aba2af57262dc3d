"""What `gpuherd config set NAME VALUE` accepts, and what each refusal says."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuherd.config import SETTINGS, change
from gpuherd.core.model import DEFAULT_GRACE, Policy
from gpuherd.core.units import format_size
from gpuherd.devices import host_memory_total
from gpuherd.errors import HerdError
from gpuherd.store import Store
from gpuherd.submission import spec_from_item
from gpuherd.wire import SubmitItem

GIB = 2**30


def parse(name: str, value: str) -> object:
    return SETTINGS[name].parse(value)


def test_keep_ram_takes_a_size_or_a_share_of_this_machine() -> None:
    total = host_memory_total()
    assert parse("keep-ram", "1GiB") == GIB
    assert parse("keep-ram", "20%") == int(0.2 * total)  # gpulimit's SAFETY_KEEP_MEMORY=0.2
    assert parse("keep-ram", "0") == parse("keep-ram", "none") == 0


@pytest.mark.parametrize("value", ["99999999999999999999TiB", str(host_memory_total())])
def test_keep_ram_of_all_the_memory_or_more_is_refused(value: str) -> None:
    # Accepted before: no job could ever start, and nothing said why.
    with pytest.raises(ValueError, match=r"is all this machine's memory \(.*\) or more"):
        parse("keep-ram", value)
    less = host_memory_total() - GIB  # (all of it but a byte is refused: below)
    assert parse("keep-ram", str(less)) == less


@pytest.mark.parametrize("value", ["99.99%", "all but a byte"])
def test_keep_ram_that_leaves_less_than_this_process_holds_is_refused(value: str) -> None:
    # 99.99% was taken, then no job at all started, with --ram or without (a job without
    # --ram waited for ever, `waiting for host memory`); the refusal said "with --ram".
    total = host_memory_total()
    with pytest.raises(ValueError) as refused:
        parse("keep-ram", str(total - 1) if value == "all but a byte" else value)
    said = str(refused.value)
    assert f"is more than this machine's {format_size(total)} less the " in said, said
    assert said.endswith(
        " itself holds: no job could start (none starts while less than keep-ram is "
        "available); give less, or a share like 20%"
    ), said


@pytest.mark.parametrize("value", ["", "10XB", "nan", "%", "100%", "1", "-1%", "5"])
def test_keep_free_says_what_a_fraction_is(value: str) -> None:
    with pytest.raises(ValueError) as refused:
        parse("keep-free", value)
    assert str(refused.value) == (
        f"invalid fraction '{value}': use a percentage like 10% (from 0%, under 100%), "
        "or a fraction like 0.1"
    )  # was "could not convert string to float: ''", then "... (0-99%)", which 99.9% is not


@pytest.mark.parametrize(("value", "taken"), [("0%", 0.0), ("99.9%", 0.999), ("0.999", 0.999)])
def test_keep_free_takes_every_share_under_all_of_it(value: str, taken: float) -> None:
    # The refusal said `0-99%`; 99.9% was taken all the same (and may be kept in herd.db).
    assert parse("keep-free", value) == pytest.approx(taken)


LARGEST = 2**63 - 1
SAID = r"2\*\*63 - 1"
"""The largest as the refusals say it (they said 9223372036854775807)."""


@pytest.mark.parametrize("name", ["max-running", "cpu-jobs"])
def test_a_count_of_zero_is_refused_not_read_as_no_cap(name: str) -> None:
    auto = r"(auto \(one per core of this machine\) )?"  # cpu-jobs takes auto too
    with pytest.raises(ValueError, match=rf"use a number from 1 to {SAID}, {auto}or none"):
        parse(name, "0")
    assert parse(name, "none") is None
    assert parse(name, "3") == 3


def test_retries_is_a_count_of_zero_or_more() -> None:
    assert parse("retries", "0") == 0
    assert parse("retries", "3") == 3
    for wrong in ("-1", "x", "1.5", ""):
        with pytest.raises(ValueError, match=f"invalid count '{wrong}': use a number from 0 to"):
            parse("retries", wrong)


@pytest.mark.parametrize("name", ["retries", "max-running", "cpu-jobs", "project-limits"])
def test_a_count_beyond_64_bits_is_refused_with_the_range(name: str) -> None:
    # Accepted before: saved, it made every later submit fail with "a number in the request
    # is too large", which never named the setting.
    prefix = "p=" if name == "project-limits" else ""
    for huge in (str(LARGEST + 1), "9" * 5000):
        with pytest.raises(ValueError, match=f"from [01] to {SAID}"):
            parse(name, prefix + huge)
    assert parse(name, prefix + str(LARGEST)) in (LARGEST, (("p", LARGEST),))


def test_on_end_is_a_command_or_none() -> None:
    assert parse("on-end", "  notify-send done ") == "notify-send done"
    for off in ("none", "NONE", "", "  "):
        assert parse("on-end", off) is None
    assert SETTINGS["on-end"].show(None) == "none"


def test_project_limits_are_a_list_of_project_counts() -> None:
    assert parse("project-limits", "b=1, a=2") == (("a", 2), ("b", 1))
    assert parse("project-limits", "none") == parse("project-limits", "") == ()
    assert SETTINGS["project-limits"].show((("a", 2), ("b", 1))) == "a=2,b=1"
    for wrong in ("a", "a=0", "=1", "a=1.5"):
        with pytest.raises(ValueError, match=f"invalid limit '{wrong}': use PROJECT=N"):
            parse("project-limits", wrong)


def test_an_on_end_hook_the_shell_cannot_parse_is_refused_when_set(tmp_path: Path) -> None:
    # Accepted before: the mistake showed only after the next job ended, in hooks.log.
    store = Store(tmp_path / "herd.db")
    try:
        with pytest.raises(HerdError) as refused:
            change(store, Policy(), "on-end", 'echo "unterminated', Policy())
        said = str(refused.value)
        assert said.startswith("on-end: the hooks' shell /bin/sh cannot parse it: "), said
        assert "nterminated" in said and "\n" not in said  # sh's own complaint, one line
        assert store.get_setting("config.on-end") is None  # not kept
        several = "echo a\necho b"  # a multi-line hook parses: taken
        assert change(store, Policy(), "on-end", several, Policy()).on_end == several
    finally:
        store.close()


def test_grace_is_a_duration_as_submit_grace_takes_it_or_auto() -> None:
    assert parse("grace", "90s") == parse("grace", "1m30s") == 90.0
    assert parse("grace", "auto") == "auto"
    assert SETTINGS["grace"].show(1.5) == "1.5s"
    for wrong in ("-1", "abc", "0", ""):  # 0 as `submit --grace 0`: SIGKILL at once is a kill's
        with pytest.raises(ValueError, match=f"invalid duration '{wrong}'"):
            parse("grace", wrong)


def test_the_grace_setting_is_the_grace_of_an_item_that_gives_none() -> None:
    """Stored at submission, as `config retries`; `gpuherd run`'s in-process daemon has the
    default settings: 10 s."""
    plain, given = (SubmitItem(command="true", cwd="/", grace=g) for g in (None, 5.0))
    assert plain.grace is None
    assert spec_from_item(plain).grace == DEFAULT_GRACE == 10.0
    assert spec_from_item(plain, settings=Policy(grace=3.0)).grace == 3.0
    assert spec_from_item(given, settings=Policy(grace=3.0)).grace == 5.0
