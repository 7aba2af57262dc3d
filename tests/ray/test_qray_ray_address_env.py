"""`daemon start --address auto` with RAY_ADDRESS set: Ray takes auto for RAY_ADDRESS, so a
refusal names it, and says to fix or unset it. Before: `the Ray cluster Ray finds (auto):
Invalid address format: garbage; give --address HOST:PORT or auto`, the user having given
auto, and RAY_ADDRESS, the cause, named nowhere. No cluster: nothing answers there.
"""

from __future__ import annotations

import pytest

from conftest import Herd, need

need("ray", "ray")


@pytest.mark.parametrize(
    ("ray_address", "said"),
    [
        (
            "garbage",
            "the Ray cluster RAY_ADDRESS names (garbage, for --address auto): Invalid address "
            "format: garbage; set RAY_ADDRESS to the head's HOST:PORT (or unset it), or give "
            "`--address HOST:PORT`",
        ),
        (
            "127.0.0.1:9",
            "the Ray cluster RAY_ADDRESS names (127.0.0.1:9, for --address auto) does not answer",
        ),
    ],
    ids=["no-address", "nobody-there"],
)
def test_a_refused_auto_names_ray_address(herd: Herd, ray_address: str, said: str) -> None:
    herd.env["RAY_ADDRESS"] = ray_address
    refused = herd.cli("daemon", "start", "--address", "auto", check=False)
    assert (refused.returncode, refused.stdout) == (1, "")
    assert refused.stderr.startswith(f"gpuherd: error: {said}"), refused.stderr
    assert len(refused.stderr.splitlines()) == 1
