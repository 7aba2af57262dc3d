"""A GPU whose slots are lowered below the jobs already running on it (`gpus add 0 --slots
1` with three jobs there) is over its slots: `gpuherd gpus` says `3/1 over`, and under its
table what that means; the dashboard the same. It said `3 sharing`, the words of jobs with
--mem sharing a GPU by memory, which these are not. Jobs with --mem sharing a GPU are still
`2 sharing` (tests/unit/test_gpu_slots_over.py: the words). Over the socket: no browser."""

from __future__ import annotations

from conftest import Herd, wait_for


def _card(page: str, index: int) -> str:
    start = page.index(f'data-gpu="{index}"')
    return page[start : page.index("</article>", start)]


def _row(page: str, index: int) -> str:
    start = page.index(f'<tr id="gpu-{index}">')
    return page[start : page.index("</tr>", start)]


def _slots(herd: Herd) -> dict[str, str]:
    """SLOTS of each GPU's row of `gpuherd gpus`, by its index."""
    lines = herd.cli("gpus").stdout.splitlines()
    start = lines[0].index("SLOTS")
    end = lines[0].index("MEMORY")
    return {line.split()[0]: line[start:end].strip() for line in lines[1:3]}


def test_a_gpu_whose_slots_were_lowered_below_its_jobs_is_over_not_sharing(herd: Herd) -> None:
    herd.start("--fake-gpus", "2")
    herd.cli("gpus", "add", "0", "--slots", "3")
    plain = [herd.submit("--only-gpus", "0", "--", "sleep 300") for _ in range(3)]
    shared = [herd.submit("--only-gpus", "1", "--mem", "1GiB", "--", "sleep 300") for _ in "ab"]
    for job in [*plain, *shared]:
        herd.wait_state(job, "running")
    assert _slots(herd) == {"0": "3/3", "1": "2 sharing"}

    herd.cli("gpus", "add", "0", "--slots", "1")
    said = herd.cli("gpus").stdout
    assert _slots(herd) == {"0": "3/1 over", "1": "2 sharing"}  # GPU 0 was `3 sharing`
    note = (
        "GPU 0 is over its slots: 3 jobs on 1 slot, so nothing new starts there until they all end"
    )
    assert note in said.replace("\n  ", " "), said
    assert "GPU 1 is over" not in said
    # As it says: a job for GPU 0 waits; and with two slots, two of the three must end.
    waiting = herd.submit("--only-gpus", "0", "--", "true")
    wait_for(lambda: herd.job(waiting).get("reason"), what="the job's reason")
    assert herd.job(waiting)["state"] == "queued"
    herd.cli("gpus", "add", "0", "--slots", "2")
    assert "3 jobs on 2 slots, so nothing new starts there until 2 of them end" in (
        herd.cli("gpus").stdout.replace("\n  ", " ")
    )

    card = _card(herd.page("/"), 0)
    assert "Over its slots: 3 jobs on 2 slots, so nothing new starts there until 2 of" in card
    assert "sharing" not in card
    row = _row(herd.page("/gpus"), 0)
    assert ">3 / 2 over<" in row and "sharing" not in row
    assert "2 jobs sharing it by memory (1 slot)" in _card(herd.page("/"), 1)

    herd.cli("kill", str(plain[0]))
    wait_for(lambda: _slots(herd)["0"] == "2/2", what="GPU 0 full, no longer over")
    assert herd.job(waiting)["state"] == "queued"
    herd.cli("kill", str(plain[1]))
    herd.wait_state(waiting, "succeeded")
    herd.cli("kill", *map(str, [plain[2], *shared]))
