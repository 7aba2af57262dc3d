"""`gpuherd ui --stop` and `--url` each do one thing: given with another option they are
refused, exit 2, in one line, and nothing is done. Before, `ui --url --stop` (meant: what
is the URL?) stopped the listener, and `ui --url --open` opened nothing, silently."""

from __future__ import annotations

from conftest import Herd


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
