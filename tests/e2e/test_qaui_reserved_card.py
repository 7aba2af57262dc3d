"""A GPU kept for a starving job (`config set reserve-after`) says so on its overview card,
and the GPUs page says it once for the job, as `gpuherd gpus` does.

Before, the card of the free GPU said `idle` and `0 / 1 slot in use`, while a 1-GPU job behind
the starving one waited for it: only the GPUs page and `gpuherd gpus` said why. The card now
says it live, as the overview refreshes, and the line goes once the starving job runs. The
GPUs page said `GPU 0 is reserved for job 2, ...` and `GPU 1 is reserved ...`, the same long
reason twice: now `GPUs 0-1 are reserved for job 2, ...`.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_dashboard import Board, browser, expect, open_board

from conftest import wait_for

__all__ = ["browser", "expect"]  # the fixtures, shared with test_dashboard.py


@pytest.fixture
def board(browser: Any, tmp_path: Path) -> Iterator[Board]:
    with open_board(browser, tmp_path / "home", "2") as b:
        yield b


def reserved_for(board: Board, job_id: int) -> list[int]:
    """The GPUs `gpuherd gpus` says are reserved for `job_id`."""
    gpus = board.herd.json("gpus")["gpus"]
    return [gpu["index"] for gpu in gpus if any(r["job"] == job_id for r in gpu["reserved"])]


def test_a_gpu_reserved_for_a_starving_job_says_so_on_its_card(
    board: Board, expect: Any, tmp_path: Path
) -> None:
    herd = board.herd
    herd.cli("config", "set", "reserve-after", "1s")
    page = board.page("/")
    go = tmp_path / "go"
    small = herd.running_until(go)
    (on,) = herd.job(small)["gpus"]
    big = herd.submit("--gpus", "2", "--", "true")
    asked = herd.job(big)["created_at"]
    # Past reserve-after, the job behind may not take the free GPU: it is kept for the big one.
    wait_for(lambda: time.time() > asked + 1.5, what="reserve-after to pass")
    behind = herd.submit("--gpus", "1", "--", "true")
    wait_for(lambda: reserved_for(board, big) == [0, 1], what=f"GPUs reserved for job {big}")
    assert herd.job(behind)["state"] == "queued"

    free = page.locator(f'article.card[data-gpu="{1 - on}"]')
    busy = page.locator(f'article.card[data-gpu="{on}"]')
    words = f"Reserved for job {big}, which has waited for 2 GPUs past reserve-after (1s)"
    expect(free.locator(".reserved")).to_contain_text(words)  # live: no reload
    expect(free.locator("ul.on-gpu")).to_have_text("idle")
    expect(free.locator(f'.reserved a[href="/jobs/{big}"]')).to_be_visible()
    expect(busy.locator(".reserved")).to_contain_text(words)

    gpus = board.page("/gpus")  # one line for the job, not one per GPU with the same words
    said = gpus.locator("p.reserved")
    expect(said).to_have_count(1)
    expect(said).to_contain_text(f"GPUs 0-1 are reserved for job {big}, which has waited")
    gpus.close()

    go.touch()
    herd.wait_state(big, "succeeded")
    expect(page.locator("article.card .reserved")).to_have_count(0)
    page.close()
