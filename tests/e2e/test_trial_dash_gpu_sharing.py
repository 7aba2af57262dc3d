"""The dashboard says what `gpuherd gpus` says of a GPU shared by jobs with --mem: how many
share it (`2 sharing`, where it said `2 / 1`, a GPU seemingly overbooked) and what they hold
(HELD, which the dashboard did not show: a GPU reading `0 B / 24.0 GiB` took no more --mem
jobs, and nothing said why). The overview's newest jobs show a waiting job's GPUs asked for
in brackets, as the jobs page does (it showed `-`, as for a job without GPUs). Over the
socket: no browser."""

from __future__ import annotations

from conftest import Herd, wait_for


def _card(page: str, index: int) -> str:
    start = page.index(f'data-gpu="{index}"')
    return page[start : page.index("</article>", start)]


def _row(page: str, index: int) -> str:
    start = page.index(f'<tr id="gpu-{index}">')
    return page[start : page.index("</tr>", start)]


def test_a_gpu_shared_by_memory_says_so_and_what_its_jobs_hold(herd: Herd) -> None:
    herd.start("--fake-gpus", "1x24GiB")
    jobs = [herd.submit("--mem", "6GiB", "--", "sleep 60") for _ in range(2)]
    for job in jobs:
        herd.wait_state(job, "running")
    waiting = herd.submit("--hold", "--gpus", "1", "--", "true")
    wait_for(lambda: herd.json("gpus")["gpus"][0]["held"] > 0, what="the jobs' memory held")

    slots = herd.cli("gpus").stdout.splitlines()[1].split()[4:6]
    assert slots == ["2", "sharing"]  # the CLI's words, which the dashboard now shares

    overview = herd.page("/")
    card = _card(overview, 0)
    assert "2 jobs sharing it by memory (1 slot)" in card
    assert "2 / 1" not in card
    assert "12.0 GiB held" in card
    row = herd.page("/ui/gpus").split("<tbody>")[1]
    row = _row(row, 0)
    assert ">2 sharing<" in row and "2 / 1" not in row
    assert "12.0 GiB held by its jobs" in row

    recent = overview.split("Recent jobs")[1]
    cell = recent.split(f'<a href="/jobs/{waiting}">')[1].split("</tr>")[0]
    assert '<span class="muted">(1)</span>' in cell  # as the jobs page shows it; before: -
    listed = herd.page("/ui/jobs").split(f'<tr id="job-{waiting}"')[1].split("</tr>")[0]
    assert '<span class="muted">(1)</span>' in listed

    herd.cli("kill", *map(str, jobs))
    # Both ended (one alone shows `1 / 1`, no longer sharing): the GPU free again.
    wait_for(lambda: "<td>0 / 1</td>" in _row(herd.page("/ui/gpus"), 0), what="the GPU freed")
    assert "held by its jobs" not in herd.page("/ui/gpus")
