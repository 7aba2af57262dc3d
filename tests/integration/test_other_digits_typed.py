"""Digits of other scripts typed where gpuherd reads a number, through the real CLI: a size
or a duration (`--mem ١٠GiB` asked 10 GiB) is refused in one line naming it in ASCII
digits; and the hints that took `٠` or `²` for a number (str.isdigit()) no longer advise a
command gpuherd then refuses: `-o ²` taken for pueue's priority, `--gpus ٠,١` for GPU
indices, `edit ٢` for a job id, Tab after `gpus drain ٠-` for a range's start."""

from __future__ import annotations

from test_completion import values

from conftest import Herd


def refused(herd: Herd, *args: str) -> str:
    """The one line of a usage error (exit 2), its `(see ... --help)` tail left off."""
    said = herd.usage_error(*args)
    return said.removeprefix("gpuherd: error: ").rpartition(" (see gpuherd ")[0]


def test_sizes_and_durations_in_other_digits_are_refused_by_each_option(
    shared_daemon: Herd,
) -> None:
    herd = shared_daemon
    for verb in (["submit"], ["edit", "1"]):
        end = ["--", "true"] if verb == ["submit"] else []
        for flag in ("--mem", "--ram"):
            assert refused(herd, *verb, flag, "١٠GiB", *end) == (
                f"{flag}: invalid size '١٠GiB': write its digits as 0-9 ('10GiB')"
            )
        assert refused(herd, *verb, "--timeout", "٢h", *end) == (
            "--timeout: invalid duration '٢h': write its digits as 0-9 ('2h')"
        )
    assert refused(herd, "submit", "--max-log-size", "١٠G", "--", "true") == (
        "--max-log-size: invalid size '١٠G': write its digits as 0-9 ('10G'); or none (no cap)"
    )
    assert refused(herd, "config", "set", "max-log-size", "١٠G") == (
        "max-log-size: invalid size '١٠G': write its digits as 0-9 ('10G'); or none (no cap)"
    )
    assert refused(herd, "config", "set", "grace", "٥s") == (
        "grace: invalid duration '٥s': write its digits as 0-9 ('5s')"
    )
    assert refused(herd, "config", "set", "keep-ram", "١٠GiB").startswith(
        "keep-ram: invalid size '١٠GiB': use a size like 8GiB"
    )
    assert herd.json("config")["grace"] == "10s"  # (nothing was set)


def test_hints_do_not_take_other_digits_for_numbers(shared_daemon: Herd) -> None:
    herd = shared_daemon
    # pueue's `add -o 10` is its priority: `-o ²` is a file's name, not a --priority ² to advise.
    job = herd.submit("--hold", "-o", "²", "--", "true")
    assert herd.job(job)["output"] == str(herd.home.parent / "²")
    said = refused(herd, "submit", "--gpus", "٠,١", "--", "true")
    assert (
        said == "--gpus takes a whole number of GPUs, not '٠,١': e.g. -g 2"
    )  # (no --only-gpus ٠,١)
    said = refused(herd, "edit", "٢")
    assert said.endswith(
        ", or --clear FIELD; at a terminal, gpuherd edit ID alone opens its command in $EDITOR"
    )


def test_tab_after_a_range_start_in_other_digits_offers_nothing(shared_daemon: Herd) -> None:
    assert values(shared_daemon, "gpuherd gpus drain 0-") == ["0-1", "0-2", "0-3"]
    assert values(shared_daemon, "gpuherd gpus drain ٠-") == []  # it offered ٠-1, ٠-2, ٠-3
    assert values(shared_daemon, "gpuherd gpus drain x-") == []
    assert values(shared_daemon, "gpuherd show ²") == []
