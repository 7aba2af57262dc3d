"""An --oom-retry's larger request, bounded by the GPUs the job may use (`--only-gpus`,
`--gpus N`), and kept on a retry that gets its GPUs to itself: it neither waits for good nor
lands on a GPU smaller than the one it ran out of memory on. Fake GPUs, real processes."""

from __future__ import annotations

from pathlib import Path

from conftest import Herd, wait_for

GIB = 2**30
GPUS = "2x24GiB,1x80GiB"


def out_of_memory_once(tmp: Path, go: Path | None = None) -> str:
    """A job whose first attempt runs out of CUDA memory (once `go` exists, if given); its
    next ones succeed."""
    script = tmp / "oom.sh"
    wait = f"while [ ! -e {go} ]; do sleep 0.02; done\n" if go else ""
    script.write_text(
        '[ "$GPUHERD_ATTEMPT" -ge 2 ] && exit 0\n'
        f"{wait}"
        'echo "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2 GiB" >&2\n'
        "exit 1\n"
    )
    return f"sh {script}"


def test_a_retry_beyond_its_only_gpus_gets_the_largest_of_them_to_itself(
    herd: Herd, tmp_path: Path
) -> None:
    herd.start("--fake-gpus", GPUS)
    command = out_of_memory_once(tmp_path)
    # 30 GiB (1.5x) fits no GPU it may use: it waited for good ("can never run on these
    # GPUs"), measured against the 80 GiB GPU it may not use.
    only = herd.submit("--oom-retry", "--only-gpus", "0", "--mem", "20GiB", "--", command)
    info = herd.wait_state(only, "succeeded", timeout=20)
    assert (info["mem"], info["exclusive"]) == (24 * GIB, True)
    assert [a["gpus"] for a in info["attempts"]] == [[0], [0]]
    # Two GPUs of 30 GiB each: only one has that much ("only 1 GPU has that much"), so two
    # of 24 GiB each (the second largest), alone.
    two = herd.submit("--oom-retry", "--gpus", "2", "--mem", "20GiB", "--", command)
    info = herd.wait_state(two, "succeeded", timeout=20)
    assert (info["mem"], info["exclusive"]) == (24 * GIB, True)
    assert info["attempts"][1]["mem"] == 24 * GIB


def test_an_exclusive_retry_keeps_a_request_as_large_as_the_gpu_it_ran_out_on(
    herd: Herd, tmp_path: Path
) -> None:
    herd.start("--fake-gpus", GPUS)
    go, done = tmp_path / "go", tmp_path / "done"
    big = herd.submit("--oom-retry", "--mem", "60GiB", "--", out_of_memory_once(tmp_path, go))
    assert herd.wait_state(big, "running")["gpus"] == [2]
    # A small job shares GPU 2 as the big one runs out of memory, and stays.
    stays = f"while [ ! -e {done} ]; do sleep 0.02; done"
    small = herd.submit("--only-gpus", "2", "--mem", "1GiB", "--", stays)
    assert herd.wait_state(small, "running")["gpus"] == [2]
    go.touch()

    def retried() -> dict[str, object] | None:
        info = herd.job(big)
        return info if info["attempts"][0]["outcome"] else None

    # 90 GiB fits no GPU: 80 GiB, alone. It ran on any empty GPU, a 24 GiB one here.
    info = wait_for(retried, 15, "the first attempt to run out of memory")
    assert info["attempts"][0]["outcome"] == "cuda_oom"
    assert (info["mem"], info["exclusive"], info["state"]) == (80 * GIB, True, "queued")
    assert info["reason"] == "waiting for an empty GPU"
    assert herd.job(big)["state"] == "queued"  # GPUs 0 and 1 are idle: still not on them
    done.touch()
    info = herd.wait_state(big, "succeeded", timeout=20)
    assert info["attempts"][1]["gpus"] == [2]
    assert info["attempts"][1]["mem"] == 80 * GIB


def test_an_exclusive_job_whose_larger_request_fits_stays_exclusive(
    herd: Herd, tmp_path: Path
) -> None:
    """Its retry's request fits a GPU, so the growth asked for no GPU of its own: the job's
    own --exclusive was dropped with it (`exclusive` written 0), and the retry shared."""
    herd.start("--fake-gpus", GPUS)
    command = out_of_memory_once(tmp_path)
    job = herd.submit("--oom-retry", "--exclusive", "--mem", "10GiB", "--", command)
    info = herd.wait_state(job, "succeeded", timeout=20)
    assert (info["mem"], info["exclusive"]) == (15 * GIB, True)


def test_a_retry_with_no_size_known_waits_for_a_gpu_as_large_as_it_ran_out_on(
    herd: Herd, tmp_path: Path
) -> None:
    """No --mem and no measured peak: the retry got a GPU to itself of any size, a 24 GiB
    one after running out of memory on the 80 GiB GPU."""
    herd.start("--fake-gpus", GPUS)
    go, small_done, big_gpu_done = tmp_path / "go", tmp_path / "small", tmp_path / "big"
    hold = "while [ ! -e {} ]; do sleep 0.02; done"
    fillers = [herd.submit("--only-gpus", str(i), "--", hold.format(small_done)) for i in (0, 1)]
    for filler in fillers:
        herd.wait_state(filler, "running")
    job = herd.submit("--oom-retry", "--", out_of_memory_once(tmp_path, go))
    assert herd.wait_state(job, "running")["gpus"] == [2]
    # Next on GPU 2 once the job's attempt ends: GPU 2 stays busy for its retry.
    after = herd.submit("--only-gpus", "2", "--priority", "10", "--", hold.format(big_gpu_done))
    go.touch()
    herd.wait_state(after, "running")
    small_done.touch()
    for filler in fillers:
        herd.wait_state(filler, "succeeded")
    info = herd.job(job)
    assert (info["mem"], info["exclusive"], info["state"]) == (80 * GIB, True, "queued")
    big_gpu_done.touch()
    assert herd.wait_state(job, "succeeded", timeout=20)["attempts"][1]["gpus"] == [2]
