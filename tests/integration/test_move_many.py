"""`move --before` many times over: positions never run out, and the queue keeps its order."""

from __future__ import annotations

from conftest import Herd


def queue(herd: Herd) -> list[int]:
    """The waiting jobs in the order they are to start (as `ls` lists them)."""
    return [job["id"] for job in herd.client.get("/jobs")["jobs"]]


def test_many_moves_before_one_job_keep_the_order(herd: Herd) -> None:
    herd.start("--fake-gpus", "1")
    herd.cli("pause")
    ids = herd.submit_lines(["true"] * 70)
    anchor = ids[1]
    # Each move halves the gap ahead of the anchor: a float holds ~52 halvings.
    for job_id in ids[2:]:
        answer = herd.client.post(f"/jobs/{job_id}/move", {"before": anchor})
        assert answer == {"message": f"moved before job {anchor}"}
    assert queue(herd) == [ids[0], *ids[2:], anchor]
    # Two jobs moved before each other in turn: each move must put the mover first of the two.
    a, b = ids[2], anchor
    for _ in range(60):
        herd.client.post(f"/jobs/{a}/move", {"before": b})
        order = queue(herd)
        assert order.index(a) == order.index(b) - 1, order
        a, b = b, a
    # The queue's other jobs kept their order, and the CLI's answer is the same.
    assert herd.cli("move", str(ids[5]), "--before", str(ids[0])).stdout == (
        f"job {ids[5]}: moved before job {ids[0]}\n"
    )
    assert queue(herd)[:2] == [ids[5], ids[0]]
