"""A job refused because gpuherd lacks the GPUs it asks for is told what to do.

- All GPUs removed (`gpus remove 0-3`): `asks for 1 GPU but gpuherd has none` said nothing
  more; now the `gpuherd gpus add` of the fewest GPUs the probe sees and gpuherd does not
  use that let it run (naming them all, as `gpuherd gpus`' probe line does), or --gpus 0.
- `--only-gpus 5` of GPUs 0-3: the GPUs there are, and `gpuherd gpus add 5` where GPU 5 is
  seen but not used.
- A job waiting for a lost GPU that is drained too (`gpus drain 1`): it waits for nothing
  that will ever take it until `gpuherd gpus enable 1`; it said only "configured but not
  seen now".
"""

from __future__ import annotations

from test_placement import GIB, job

from gpuherd.core.model import Device, DeviceState, Policy, Reservation
from gpuherd.core.reasons import never_fits, why_waiting
from gpuherd.service_reasons import _never_here

FOUR = [Device(i, memory_total=24 * GIB) for i in range(4)]
CPU_ONLY = "give gpus 0 (--gpus 0) for a CPU-only job"


def test_no_gpu_left_names_the_gpus_to_add_and_a_cpu_only_job() -> None:
    one = never_fits(1, None, [], unused=FOUR)
    assert one == (
        "asks for 1 GPU but gpuherd has none: `gpuherd gpus add 0` adds one (GPUs 0-3 are "
        f"seen but not used), or {CPU_ONLY}"
    )
    assert one is not None and (one.add, one.edit) == ((0,), "--gpus 0")
    assert never_fits(2, None, [], unused=FOUR) == (
        "asks for 2 GPUs but gpuherd has none: `gpuherd gpus add 0` and `gpuherd gpus add 1` "
        f"add the 2 it needs (GPUs 0-3 are seen but not used), or {CPU_ONLY}"
    )
    assert never_fits(1, None, [], unused=FOUR[2:3]) == (
        "asks for 1 GPU but gpuherd has none: `gpuherd gpus add 2` adds it (GPU 2 is seen but "
        f"not used), or {CPU_ONLY}"
    )
    # Nothing seen either: only the CPU.
    assert never_fits(1, None, []) == f"asks for 1 GPU but gpuherd has none: {CPU_ONLY}"


def test_too_few_gpus_names_those_to_add_beside_fewer() -> None:
    assert never_fits(3, None, FOUR[:1], unused=FOUR[1:]) == (
        "asks for 3 GPUs but gpuherd has only 1: `gpuherd gpus add 1` and `gpuherd gpus add 2` "
        "add the 2 it needs (GPUs 1-3 are seen but not used), or give fewer gpus (--gpus), "
        "at most 1"
    )
    # Unused GPUs too small for its --mem are not named: adding them would not help.
    big = never_fits(1, 40 * GIB, FOUR[:1], unused=FOUR[1:])
    assert big is not None and big.add == ()
    roomy = [Device(7, memory_total=80 * GIB)]
    assert never_fits(1, 40 * GIB, FOUR[:1], unused=[*FOUR[1:], *roomy]) == (
        "asks for 40.0 GiB per GPU but the largest GPU has 24.0 GiB: `gpuherd gpus add 7` "
        "adds it (GPU 7 is seen but not used), or give a smaller mem (--mem), at most 24.0 GiB"
    )


def test_only_gpus_of_a_gpu_not_there_names_those_there_and_the_one_to_add() -> None:
    assert never_fits(1, None, FOUR, only=(5,)) == (
        "asks for 1 GPU of --only-gpus 5, but gpuherd has no GPU 5: name GPUs gpuherd has in "
        "only_gpus (--only-gpus): 0-3"
    )
    seen = [Device(4), Device(5)]  # only GPU 5 is any use to it
    assert never_fits(1, None, FOUR, only=(5,), unused=seen) == (
        "asks for 1 GPU of --only-gpus 5, but gpuherd has no GPU 5: `gpuherd gpus add 5` adds "
        "it (GPU 5 is seen but not used), or name GPUs gpuherd has in only_gpus (--only-gpus): "
        "0-3"
    )
    assert never_fits(1, None, [], only=(5,)) == (
        f"asks for 1 GPU of --only-gpus 5, but gpuherd has no GPU 5: {CPU_ONLY}, without "
        "only_gpus (--only-gpus)"
    )


def test_a_queued_job_names_only_the_fewest_gpus_to_add() -> None:
    """`ls` of a queued job left with no GPU named each unused GPU's `gpus add` (four, for a
    job of one); and its way out said in full, where no edit said it."""
    reason = never_fits(1, None, [], unused=FOUR)
    assert reason is not None
    assert _never_here(7, reason) == (
        "can never run on these GPUs: asks for 1 GPU but gpuherd has none (gpuherd gpus add 0 "
        "lets it run, gpuherd edit 7 --gpus 0 to ask for what there is, or gpuherd rm 7)"
    )
    only = never_fits(1, None, FOUR, only=(5,))
    assert only is not None
    assert _never_here(7, only) == (
        "can never run on these GPUs: asks for 1 GPU of --only-gpus 5, but gpuherd has no GPU "
        "5: name GPUs gpuherd has in only_gpus (--only-gpus): 0-3 (gpuherd edit 7 to ask for "
        "what there is, or gpuherd rm 7)"
    )


def test_waiting_for_a_lost_gpu_that_is_drained_says_how_to_enable_it() -> None:
    seen = [Device(0, memory_total=24 * GIB)]
    drained = Device(1, memory_total=24 * GIB, state=DeviceState.DRAINING)
    reason = why_waiting(job(1, only_gpus=(1,)), seen, [], Policy(), missing=[drained])
    assert reason == (
        "waiting for GPU 1, configured but not seen now: `gpuherd gpus`; GPU 1 is draining "
        "too: it takes no new job when it comes back, until `gpuherd gpus enable 1`"
    )
    both = [drained, Device(2, memory_total=24 * GIB, state=DeviceState.DRAINING)]
    reason = why_waiting(job(1, gpus=3), seen, [], Policy(), missing=both)
    assert reason.endswith(
        "; GPUs 1, 2 are draining too: they take no new job when they come back, until "
        "`gpuherd gpus enable 1,2`"
    )
    # Named beside the GPUs seen that keep it waiting too.
    busy = [Reservation(9, (0,))]
    reason = why_waiting(job(1, only_gpus=(0, 1)), seen, busy, missing=[drained])
    assert reason.startswith("waiting for a free GPU of --only-gpus 0,1 (GPU 0 is full")
    assert "GPU 1 is configured but not seen now: `gpuherd gpus`; GPU 1 is draining too" in reason
    # Not drained: as before.
    lost = [Device(1, memory_total=24 * GIB)]
    reason = why_waiting(job(1, only_gpus=(1,)), seen, [], Policy(), missing=lost)
    assert reason == "waiting for GPU 1, configured but not seen now: `gpuherd gpus`"


def test_waiting_only_for_draining_gpus_says_how_to_enable_them() -> None:
    """All GPUs drained: `waiting for a free GPU (GPUs 0-3 are draining)` said nothing of
    what ends the wait; beside GPUs that may take the job later, the draining ones need not."""
    drained = [Device(i, state=DeviceState.DRAINING) for i in range(4)]
    assert why_waiting(job(1), drained, []) == (
        "waiting for a free GPU (GPUs 0-3 are draining: nothing new starts there until "
        "`gpuherd gpus enable 0-3`)"
    )
    assert why_waiting(job(1, only_gpus=(1, 3)), drained, []) == (
        "waiting for a free GPU of --only-gpus 1,3 (GPUs 1, 3 are draining: nothing new starts "
        "there until `gpuherd gpus enable 1,3`)"
    )
    some = [*drained[:3], Device(3)]  # GPU 3 takes one GPU's job once free, not two's
    busy = [Reservation(9, (3,))]
    assert why_waiting(job(1), some, busy) == (
        "waiting for a free GPU (GPUs 0-2 are draining; GPU 3 is full of gpuherd jobs)"
    )
    assert why_waiting(job(1, gpus=2), some, busy) == (
        "waiting for 2 free GPUs (GPUs 0-2 are draining: nothing new starts there until "
        "`gpuherd gpus enable 0-2`; GPU 3 is full of gpuherd jobs)"
    )


def test_a_queued_job_that_needs_several_gpus_added_says_they_let_it_run() -> None:
    """`ls` of a queued job that needs two GPUs added said `gpuherd gpus add 1; gpuherd gpus
    add 2 lets it run`: two commands, one verb in the singular."""
    reason = never_fits(3, None, FOUR[:1], unused=FOUR[1:])
    assert reason is not None and reason.add == (1, 2)
    assert _never_here(7, reason) == (
        "can never run on these GPUs: asks for 3 GPUs but gpuherd has only 1 (gpuherd gpus add "
        "1; gpuherd gpus add 2 let it run, gpuherd edit 7 --gpus 1 to ask for what there is, or "
        "gpuherd rm 7)"
    )


def test_the_way_out_names_the_option_given_for_the_gpu_count() -> None:
    """`gpuherd run`'s refusals named `--gpus`, which in `run` gives the GPUs to use: its
    option of a job's GPU count is --gpus-per-job (`edit`'s stays --gpus: ls says it)."""
    fewer = never_fits(3, None, FOUR[:2], gpus_flag="--gpus-per-job")
    assert fewer == (
        "asks for 3 GPUs but gpuherd has only 2: give fewer gpus (--gpus-per-job), at most 2"
    )
    assert fewer is not None and fewer.edit == "--gpus 2"
    assert never_fits(1, None, [], gpus_flag="--gpus-per-job") == (
        "asks for 1 GPU but gpuherd has none: give gpus 0 (--gpus-per-job 0) for a CPU-only job"
    )
