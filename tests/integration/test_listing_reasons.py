"""A listing words each queued job's reason once per shape (what it asks for) and only the
rest per job (service_reasons.py): every job must still read as it does alone (`show`)."""

from __future__ import annotations

from conftest import Herd, Recorder


def test_a_listing_says_of_each_job_what_it_says_of_the_job_alone(
    daemon: Herd, recorder: Recorder
) -> None:
    busy = [daemon.submit("--", recorder.cmd(f"busy{i}", wait="go")) for i in range(4)]
    for job_id in busy:
        daemon.wait_state(job_id, "running")
    shapes = [
        [],
        ["-g", "2"],
        ["--mem", "1GiB"],
        ["--only-gpus", "2"],
        ["--exclusive"],
        ["--after", str(busy[0])],
    ]
    queued = [daemon.submit(*shape, "--", "true") for _ in range(3) for shape in shapes]
    listed = {job["id"]: job["reason"] for job in daemon.json("ls", "--state", "queued")}
    assert set(listed) == set(queued)
    assert {job_id: daemon.job(job_id)["reason"] for job_id in queued} == listed
    assert len(set(listed.values())) == len(shapes)  # alike for a shape, apart otherwise
    recorder.go()
