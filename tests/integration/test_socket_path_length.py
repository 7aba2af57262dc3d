"""A socket path longer than a Unix socket's 107 bytes, and a long home's socket folder under
/tmp; with `daemon start`'s other values refused before anything starts: an IPv4 address that
is none (`--listen 999.1.1.1:80`), a list of counts where GPUHERD_FAKE_GPUS takes one."""

from __future__ import annotations

from pathlib import Path

import pytest

import gpuherd
from conftest import Herd
from gpuherd.errors import HerdError

COMMANDS = [
    ("daemon", "start", "--fake-gpus", "1"),
    ("daemon", "status"),
    ("daemon", "stop"),
    ("ls",),
    ("submit", "--", "true"),
    ("config", "set", "retries", "3"),
]


@pytest.mark.parametrize("relative", [False, True], ids=["absolute", "relative"])
def test_a_socket_path_too_long_is_refused_by_every_command_naming_gpuherd_socket(
    tmp_path: Path, relative: bool
) -> None:
    """Each said `AF_UNIX path too long (writing the output)`, exit 1 (a relative one, taken
    from a long home, `cannot start in HOME (AF_UNIX path too long): check it`)."""
    long = tmp_path / ("a" * 60) / ("b" * 60)
    long.parent.mkdir()  # (the commands run from the home's parent)
    herd = Herd(long if relative else tmp_path / "home")
    given = "herd.sock" if relative else str(long / "sockdir" / "herd.sock")
    path = long / "herd.sock" if relative else Path(given)
    herd.env["GPUHERD_SOCKET"] = given
    taken = f", taken from the home as {path}," if relative else ""
    said = (
        f"gpuherd: error: GPUHERD_SOCKET {given}{taken} is {len(str(path))} bytes, over the 107 "
        "a Unix socket path may hold: point it at a shorter path in a folder of yours, or "
        "unset it\n"
    )
    for command in COMMANDS:
        assert herd.usage_error(*command) == said, command
    assert not herd.home.exists()  # nothing was started, no home made
    env = {**herd.env}
    with pytest.MonkeyPatch.context() as patch:  # the Python API: a HerdError, one line
        patch.setenv("GPUHERD_SOCKET", env["GPUHERD_SOCKET"])
        with pytest.raises(HerdError) as refused:
            gpuherd.connect(herd.home, fake_gpus=1)
    assert f"gpuherd: error: {refused.value}\n" == said
    assert not herd.home.exists()


def test_a_long_homes_socket_folder_under_tmp_goes_when_its_daemon_stops(
    tmp_path: Path,
) -> None:
    """/tmp/gpuherd-UID/HASH stayed behind each daemon of a long home (28 on one machine)."""
    (tmp_path / ("a" * 60)).mkdir()
    herd = Herd(tmp_path / ("a" * 60) / ("b" * 60))
    try:
        herd.start("--fake-gpus", "1")
        socket = Path(herd.cli("daemon", "status").stdout.split("socket: ")[1].split()[0])
        assert socket.parent.parent.name.startswith("gpuherd-") and socket.is_socket()
        assert herd.cli("ls").returncode == 0
        herd.cli("daemon", "stop")
        assert not socket.parent.exists()  # (its parent, other homes' too, is kept)
        assert socket.parent.parent.is_dir()
    finally:
        herd.cleanup()


def test_a_listen_address_that_is_no_ipv4_address_says_what_to_give(herd: Herd) -> None:
    """It was looked up as a host name: `cannot listen on 999.1.1.1:80: Name or service not
    known`, exit 1, no way out."""
    said = herd.usage_error("daemon", "start", "--fake-gpus", "1", "--listen", "999.1.1.1:80")
    assert said == (
        "gpuherd: error: --listen: invalid listen address '999.1.1.1:80': 999.1.1.1 is no IPv4 "
        "address (four numbers from 0 to 255): use 127.0.0.1:80 (this machine only), "
        "0.0.0.0:80 (every interface) or one of this machine's addresses (see gpuherd daemon "
        "start --help)\n"
    )
    assert not herd.home.exists()


def test_a_list_of_counts_in_gpuherd_fake_gpus_is_refused(herd: Herd) -> None:
    """`GPUHERD_FAKE_GPUS=1,2` started 3 fake GPUs (1 + 2), where GPUs 1 and 2 were meant."""
    herd.env["GPUHERD_FAKE_GPUS"] = "1,2"
    assert herd.usage_error("daemon", "start") == (
        "gpuherd: error: GPUHERD_FAKE_GPUS: '1,2' is a list of counts, not GPU indices: give "
        "one count (3 makes GPUs 0 to 2), or sizes (2x24GiB,1x80GiB) (GPUHERD_FAKE_GPUS in the "
        "environment: export GPUHERD_FAKE_GPUS=4, say, or unset it)\n"
    )
    assert not herd.home.exists()
    herd.env["GPUHERD_FAKE_GPUS"] = "2,1x80GiB"  # a count beside sizes: 3 GPUs, as documented
    herd.start()
    assert len(herd.json("gpus")["gpus"]) == 3
