"""The overview's GPU cards say a GPU is draining as `gpuherd gpus` and the GPUs page do: a
lost GPU drained (`gpuherd gpus drain 1` while the probe does not see it; its card stays
while a job runs on it) read `lost` alone, as though the drain had not been taken. Over
HTTP, as test_dashboard_pages.py."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

from conftest import Herd, wait_for

GPU = {"name": "Fake A100", "memory_total": "80GiB"}


def card(page: str, index: int) -> tuple[str, str]:
    """GPU `index`'s card on the overview: its classes, and the state its header says."""
    found = re.search(rf'<article class="([^"]*)" data-gpu="{index}">(.*?)</article>', page, re.S)
    assert found is not None, f"no card for GPU {index}"
    header = re.search(r"<header>(.*?)</header>", found.group(2), re.S)
    assert header is not None
    pill = re.search(r'<span class="pill gpu-[^"]*">(.*?)</span>', header.group(1), re.S)
    assert pill is not None
    return found.group(1), html.unescape(pill.group(1)).strip()


def states(herd: Herd) -> dict[int, str]:
    """The STATE column of `gpuherd gpus`, by GPU: the words the cards are to say."""
    table = herd.cli("gpus").stdout.splitlines()
    header = table[0]
    at, until = header.index("STATE"), header.index("SLOTS")
    return {
        int(line.split()[0]): line[at:until].strip() for line in table[1:] if line[:1].isdigit()
    }


def test_a_drained_gpus_card_says_draining_as_gpuherd_gpus_does(herd: Herd, tmp_path: Path) -> None:
    state = tmp_path / "gpus.json"
    state.write_text(json.dumps({"gpus": [GPU, GPU, GPU]}))
    herd.start("--fake-gpus", str(state))
    job = herd.submit("--only-gpus", "1", "sleep 300")  # keeps GPU 1's card once it is lost
    herd.wait_state(job, "running")
    herd.cli("gpus", "drain", "2")
    page = herd.page("/")
    assert card(page, 0) == ("card gpu", "enabled")
    assert card(page, 2) == ("card gpu draining", "draining")

    state.write_text(json.dumps({"gpus": [GPU, {"lost": True}, GPU]}))
    wait_for(lambda: herd.json("gpus")["missing"] == [1], what="GPU 1 to be lost")
    assert card(herd.page("/"), 1) == ("card gpu", "lost")

    herd.cli("gpus", "drain", "1")
    wait_for(lambda: states(herd)[1] == "lost, draining", what="GPU 1 to be drained")
    page = herd.page("/")
    # Before, `lost` alone, and a card not marked draining, while `gpuherd gpus` said both.
    assert card(page, 1) == ("card gpu draining", states(herd)[1])
    assert card(page, 1)[1] == "lost, draining"
    assert card(page, 2)[1] == states(herd)[2] == "draining"

    herd.cli("gpus", "enable", "1")
    assert card(herd.page("/"), 1) == ("card gpu", "lost")
    herd.cli("kill", str(job))
