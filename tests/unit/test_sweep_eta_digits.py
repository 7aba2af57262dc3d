"""A sweep's time to finish says the sum it did with figures that give its result: with the
mean run rounded to 0.1 s, short points read `2,819 queued × 0.0s mean run ... ≈ 40.7s`, or
`2,528 queued × 0.1s ... ÷ 3 ≈ 44.1s`, which gives 84 s (the sweep pages' partial, drawn)."""

from __future__ import annotations

import html
import re
import time
from typing import Any

import pytest

from gpuherd.api import views, views_sweeps


class _Service:
    """What progress() asks of Service: the sweep's running and succeeded jobs."""

    def __init__(self, mean: float, running: int) -> None:
        now = time.time()
        self.done = [
            {"state": "succeeded", "started_at": now - 100, "ended_at": now - 100 + mean}
        ] * 200
        self.live = [
            {"state": "running", "started_at": now - mean / 4, "gpus": [g]} for g in range(running)
        ]

    def page_jobs(self, states: list[str], **_: Any) -> tuple[int, list[dict[str, Any]]]:
        jobs = self.live if "running" in states else self.done
        return len(jobs), jobs


SECONDS = {"ms": 0.001, "s": 1.0}


def _seconds(text: str) -> float:
    found = re.fullmatch(r"(?:(\d+)m)?([\d.]+)(ms|s)", text)
    assert found, text
    return int(found[1] or 0) * 60 + float(found[2]) * SECONDS[found[3]]


@pytest.mark.parametrize(
    ("mean", "queued", "running"), [(0.042, 2_819, 1), (0.052, 2_528, 3), (0.0144, 2_819, 1),
                                    (1.234, 400, 2), (7.77, 90, 4), (0.7, 10, 1)]
)  # fmt: skip
def test_the_figures_shown_give_the_estimate_shown(mean: float, queued: int, running: int) -> None:
    counts = {"succeeded": 200, "queued": queued, "running": running}
    p = views_sweeps.progress(_Service(mean, running), "short", counts)  # type: ignore[arg-type]
    drawn = views.environment().get_template("_sweep_progress.html").render(p=p, name="short")
    said = re.search(
        r"≈ <b>(\S+)</b> to finish <span class=\"muted\">= ([\d,]+) queued × (\S+) mean run "
        r"\(of 200 finished points\) \+ (\S+) left of the running ones, ÷ (\d+) running at once",
        html.unescape(drawn),
    )
    assert said, drawn
    eta, shown_queued, shown_mean, left, at_once = said.groups()
    assert (int(shown_queued.replace(",", "")), int(at_once)) == (queued, running)
    summed = (queued * _seconds(shown_mean) + _seconds(left)) / running
    assert summed == pytest.approx(_seconds(eta), rel=0.01), (drawn, summed)
    assert _seconds(shown_mean) == pytest.approx(mean, rel=0.005)


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0.0, "0ms"), (0.0423, "42.3ms"), (0.9994, "999ms"), (0.9996, "1.00s"), (4.171, "4.17s"),
     (41.23, "41.2s"), (59.97, "1m00s"), (185, "3m05s")],
)  # fmt: skip
def test_a_time_of_the_sum_keeps_three_significant_digits(seconds: float, text: str) -> None:
    assert views_sweeps.run_text(seconds) == text
