"""`--listen 0.0.0.0:PORT` serves the dashboard to other machines, over plain HTTP: `daemon
start` printed only the local URL, as for 127.0.0.1, and neither it nor `gpuherd ui` said
that the token then crosses the network readable by whoever can watch it."""

from __future__ import annotations

from conftest import Herd


def warning_of(port: str, machine: str) -> str:
    return (
        f"gpuherd: warning: the dashboard listens on every interface (0.0.0.0:{port}), over "
        "plain HTTP: whoever can watch the network reads the token in its traffic, and with it "
        f"runs commands as you; to keep it off the network, --listen 127.0.0.1:{port} and an "
        f"SSH tunnel (ssh -L {port}:127.0.0.1:{port} {machine})\n"
    )


def test_a_listener_on_every_interface_says_what_it_exposes(herd: Herd) -> None:
    started = herd.cli("daemon", "start", "--fake-gpus", "1", "--listen", "0.0.0.0:0")
    status = herd.client.get("/daemon/listen")
    port = status["address"].rpartition(":")[2]
    remote = status["remote_url"]
    machine = remote.split("//", 1)[1].split(":", 1)[0] if remote else "HOST"
    assert started.stderr == warning_of(port, machine)
    assert f"dashboard: {status['url']}\n" in started.stdout
    shown = herd.cli("ui")
    assert shown.stderr == warning_of(port, machine)
    assert herd.cli("ui", "--url").stderr == ""  # the URL alone, for a script


def test_a_local_listener_warns_of_nothing(herd: Herd) -> None:
    started = herd.cli("daemon", "start", "--fake-gpus", "1", "--listen", "127.0.0.1:0")
    assert started.stderr == ""
    assert herd.cli("ui").stderr == ""
