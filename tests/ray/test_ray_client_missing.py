"""A `ray://` address (Ray Client) with a Ray installed without its `client` extra: the
start says to install it, or to give the head's own address. It passed on Ray's text ("please
reinstall by executing pip install ray[client]"), then told to check the address and the
cluster's auth token."""

from __future__ import annotations

import importlib.util
import socket
import threading
from collections.abc import Iterator

import pytest

from conftest import Herd, need

need("ray", "ray")

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("grpc") is not None, reason="Ray Client's packages are installed"
)


@pytest.fixture
def listener() -> Iterator[int]:
    """A port that accepts connections (and says nothing), as a Ray Client server's does to
    the daemon's first check."""
    server = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.1)
        taken = []
        while not stop.is_set():
            try:
                taken.append(server.accept()[0])
            except TimeoutError:
                continue
        for conn in taken:
            conn.close()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1]
    finally:
        stop.set()
        thread.join()
        server.close()


def test_a_ray_client_address_without_ray_client_says_how_to_get_it(
    herd: Herd, listener: int
) -> None:
    address = f"ray://127.0.0.1:{listener}"
    refused = herd.cli("daemon", "start", "--address", address, check=False)
    assert refused.returncode == 1, refused
    assert refused.stderr == (
        f"gpuherd: error: connecting to the Ray cluster at {address} needs Ray Client, which "
        "this Ray lacks: pip install 'ray[client]' where gpuherd is installed, or give the "
        "head's own address (`--address HOST:6379`: no Ray Client needed)\n"
    )
    assert not herd.is_up()
