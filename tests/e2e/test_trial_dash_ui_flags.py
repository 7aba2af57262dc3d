"""`gpuherd ui --stop` and `--url` each do one thing: given with another option they are
refused, exit 2, in one line, and nothing is done. Before, `ui --url --stop` (meant: what
is the URL?) stopped the listener, and `ui --url --open` opened nothing, silently."""

from __future__ import annotations

from conftest import Herd, busy_port


def test_stop_and_url_go_alone(herd: Herd) -> None:
    herd.start("--fake-gpus", "1", "--listen", "127.0.0.1:0")
    url = herd.cli("ui", "--url").stdout.strip()

    refused = herd.usage_error("ui", "--url", "--stop")
    assert "--stop goes alone, not with --url: it stops the TCP listener" in refused
    assert herd.cli("ui", "--url").stdout.strip() == url  # still listening

    refused = herd.usage_error("ui", "--url", "--open")
    assert "--url goes alone, not with --open: it only prints the URL" in refused
    refused = herd.usage_error("ui", "--stop", "--listen", "0", "--open")
    assert "--stop goes alone, not with --listen or --open" in refused
    assert herd.cli("ui", "--url").stdout.strip() == url

    assert herd.cli("ui", "--stop").stdout == "dashboard listener stopped\n"


def test_ui_listen_at_a_taken_port_says_what_to_do(herd: Herd) -> None:
    # It said only `cannot listen on 127.0.0.1:PORT: Address already in use`, where
    # `daemon start --listen` at such a port says how out (test_qdaemon2_folders.py).
    herd.start("--fake-gpus", "1")
    with busy_port() as taken:
        port = taken.getsockname()[1]
        failed = herd.cli("ui", "--listen", f"127.0.0.1:{port}", check=False)
    assert failed.returncode == 1
    assert failed.stderr.splitlines() == [
        f"gpuherd: error: cannot listen on 127.0.0.1:{port}: Address already in use: free that"
        " port, or give another address (`gpuherd ui --listen 127.0.0.1:0` takes a free one)"
    ]
    assert herd.cli("ui", "--listen", "127.0.0.1:0").stdout.startswith("dashboard: http://")


def test_ui_with_its_ports_all_taken_names_them_all(herd: Herd) -> None:
    # `gpuherd ui` tries 8888 to 8897; with all ten taken it named 8888 alone, as if it had
    # not tried the others.
    herd.start("--fake-gpus", "1")
    held = []
    try:
        for port in range(8888, 8898):
            try:
                held.append(busy_port(port))
            except OSError:  # taken already (by another test): taken as well
                pass
        failed = herd.cli("ui", check=False)
    finally:
        for sock in held:
            sock.close()
    assert failed.returncode == 1
    assert failed.stderr.splitlines() == [
        "gpuherd: error: cannot listen on 127.0.0.1:8888 to 8897: Address already in use: free"
        " one of those ports, or `gpuherd ui --listen 127.0.0.1:0` takes a free one"
    ]
