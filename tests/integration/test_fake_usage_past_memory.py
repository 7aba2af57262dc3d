"""A job under fake GPUs that reports more memory than its GPU has (`{"memory": "100GiB"}`
in its fake_gpu_usage.json on a 24 GiB GPU, a unit typo) fails the probe with one line
naming the file, as a state file's own `memory_used` past `memory_total` does, until the job
ends. It was added without a word: `gpuherd gpus` read `100.0 GiB / 24.0 GiB`, and
placement counted memory no GPU has."""

from __future__ import annotations

from conftest import Herd, Recorder, wait_for

USES = 'echo "{\\"memory\\": \\"100GiB\\"}" > "$GPUHERD_JOB_DIR/fake_gpu_usage.json" && '


def test_a_jobs_usage_past_its_gpus_memory_is_refused_in_one_line(
    herd: Herd, recorder: Recorder
) -> None:
    herd.start("--fake-gpus", "1x24GiB")
    job = herd.submit("--", USES + recorder.cmd("big", wait="go"))
    wait_for(lambda: recorder.waiting("big"), what="the job to start")
    usage = f"{herd.job(job)['job_dir']}/fake_gpu_usage.json"
    failing = wait_for(lambda: herd.json("gpus")["probe_error"], what="the probe to fail")
    assert failing == (
        "fake GPU 0: 100.0 GiB in use is more than its memory, 24.0 GiB "
        f"({usage} says 100.0 GiB): write less in it"
    )
    assert herd.json("gpus")["gpus"][0]["memory_used"] == 0  # the reading before it, kept
    assert failing in herd.cli("gpus").stdout.replace("\n", " ")
    recorder.go()
    herd.wait_state(job, "succeeded")
    wait_for(lambda: herd.json("gpus")["probe_error"] is None, what="the probe to work again")
