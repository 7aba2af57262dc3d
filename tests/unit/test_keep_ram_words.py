"""What `keep-ram` takes and how it refuses the rest: the forms it really takes (a size, a
share, 0 or none to turn it off), named by every refusal (it said "or a fraction like 0.1",
which it refuses, and "must be greater than zero" though 0 is its default); `none` in any case
as every other setting's; shares in ASCII digits, as counts (`1_0%` and `١٠%` were 10%).
And never_runs() takes keep-ram off the machine's memory for --ram, as keep-free for --mem."""

from __future__ import annotations

import pytest

from gpuherd.config import SETTINGS
from gpuherd.core.model import JobSpec, Policy
from gpuherd.core.reasons import Refusal
from gpuherd.core.units import format_size, format_size_down
from gpuherd.host_memory import host_memory_total
from gpuherd.submission import never_runs

GIB = 2**30
FORMS = (
    "use a size like 8GiB (a number alone is bytes), a share of this machine's memory like "
    "20% (from 0%, under 100%), or 0 or none to turn it off"
)


def parse(name: str, value: str) -> object:
    return SETTINGS[name].parse(value)


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        ("100%", "share"),
        ("-5%", "share"),
        ("1_0%", "share"),
        ("١٠%", "share"),
        ("0.1", "size"),
        ("-1", "size"),
        ("1_000", "size"),
        ("١٠GiB", "size"),
        ("8XB", "size"),
        ("", "size"),
    ],
)
def test_keep_ram_refusals_name_the_forms_it_takes(value: str, kind: str) -> None:
    with pytest.raises(ValueError) as refused:
        parse("keep-ram", value)
    assert str(refused.value) == f"invalid {kind} '{value}': {FORMS}"


def test_keep_ram_is_turned_off_by_0_or_none_in_any_case() -> None:
    for value in ("none", "None", "NONE", " none ", "0", "0GiB", "0%"):
        assert parse("keep-ram", value) == 0, value


@pytest.mark.parametrize("value", ["1_0%", "١٠%", "1e-1"])
def test_keep_free_takes_ascii_digits_only(value: str) -> None:
    with pytest.raises(ValueError, match=r"^invalid fraction "):
        parse("keep-free", value)


def test_shares_saved_before_are_read_as_they_were_taken() -> None:
    # Refused at the load, the user's setting were dropped for the default.
    assert SETTINGS["keep-free"].load is not None and SETTINGS["keep-ram"].load is not None
    assert SETTINGS["keep-free"].load("1_0%") == pytest.approx(0.1)
    assert SETTINGS["keep-ram"].load("1_0%") == int(0.1 * host_memory_total())
    # and what is taken now is taken as before
    assert parse("keep-free", " 10 % ") == parse("keep-free", "0.1") == pytest.approx(0.1)
    assert parse("keep-ram", " 20.0 % ") == int(0.2 * host_memory_total())


def _ram(ram: int, keep: int) -> str | None:
    spec = JobSpec(command="true", cwd="/", gpus=0, ram=ram)
    return never_runs(spec, [], Policy(keep_ram=keep))


def test_never_runs_takes_keep_ram_off_the_machine_s_memory() -> None:
    total = host_memory_total()
    keep = total // 4
    room = total - keep
    assert _ram(room, keep) is None  # all that is left fits
    assert _ram(room + GIB, 0) is None  # without keep-ram it fits
    most = format_size_down(room)
    assert _ram(room + GIB, keep) == (
        f"asks for {format_size(room + GIB)} of host memory, but this machine has "
        f"{format_size(total)} ({most} once keep-ram's {format_size(keep)} is kept free): "
        f"give a smaller ram (--ram), at most {most}"
    )
    # `ls` of a queued job it strands names the edit that fits (service_reasons.py)
    spec = JobSpec(command="true", cwd="/", gpus=0, ram=room + 1)
    refusal = never_runs(spec, [], Policy(keep_ram=keep))
    assert isinstance(refusal, Refusal) and refusal.edit == f"--ram {most.replace(' ', '')}"
