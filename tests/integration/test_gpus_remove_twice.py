"""`gpuherd gpus remove 2` of a GPU removed already says so and exits 0, as `gpus drain` of a
draining GPU does (`GPU 0 is draining already`): it was refused, `nothing to remove`, exit 1,
so a teardown script's removal asked twice failed. A GPU gpuherd knows but never used (left
out of a static `--gpus` list) is still refused: no removal of it was asked before."""

from __future__ import annotations

from conftest import Herd, Recorder, wait_for


def _removed_already(gpu: int) -> str:
    return f"GPU {gpu} is removed already: `gpuherd gpus add {gpu}` uses it again\n"


def test_removing_a_gpu_removed_already_says_so_and_exits_0(herd: Herd) -> None:
    herd.start("--fake-gpus", "4")
    for gpu in ("2", "3"):
        said = herd.cli("gpus", "remove", gpu).stdout
        assert said == f"GPU {gpu} removed; jobs running on it go on\n"
    for gpu in (2, 3):
        again = herd.cli("gpus", "remove", str(gpu), check=False)
        assert (again.returncode, again.stdout, again.stderr) == (0, _removed_already(gpu), "")
    # Several, one removed already: the others are removed, one line each (it was refused
    # whole: `GPU 2 is not configured (configured: 0,1): nothing removed`).
    several = herd.cli("gpus", "remove", "1", "2", check=False)
    assert (several.returncode, several.stderr) == (0, "")
    assert several.stdout == "GPU 1 removed; jobs running on it go on\n" + _removed_already(2)
    # The HTTP API (and the dashboard, which calls the same verb) answer alike: 200, the line.
    assert herd.client.delete("/gpus/3") == {"message": _removed_already(3).rstrip("\n")}
    assert herd.json("gpus")["removed"] == [1, 2, 3]
    # Drain and enable still say how to have it.
    refused = herd.cli("gpus", "drain", "2", check=False)
    assert refused.stderr.endswith("`gpuherd gpus add 2` adds it\n"), refused.stderr
    assert [g["index"] for g in herd.json("gpus")["gpus"] if g["state"] != "removed"] == [0]
    # A GPU no one heard of is still refused, alone or beside one removed already.
    refused = herd.cli("gpus", "remove", "2", "7", check=False)
    assert (refused.returncode, refused.stdout, refused.stderr) == (
        1,
        "",
        "gpuherd: error: GPU 7 is not configured (configured: 0): nothing removed\n",
    )


def test_removing_again_a_removed_gpu_whose_job_runs_on_it_says_so(
    herd: Herd, recorder: Recorder
) -> None:
    """Its row stays (`removed`) while its job runs: the CLI's own look at the GPUs must not
    take it for a GPU gpuherd does not know."""
    herd.start("--fake-gpus", "2")
    job = herd.submit("--only-gpus", "1", "--", recorder.cmd("on1", wait="go"))
    wait_for(lambda: recorder.waiting("on1"), what="the job on GPU 1 to start")
    herd.cli("gpus", "remove", "1")
    for given in (["1"], ["0", "1"]):
        again = herd.cli("gpus", "remove", *given, check=False)
        assert (again.returncode, again.stderr) == (0, ""), given
        assert again.stdout.endswith(_removed_already(1)), again.stdout
    recorder.go()
    herd.wait_state(job, "succeeded")


def test_removing_a_gpu_a_static_gpus_list_lacks_says_nothing_to_remove(herd: Herd) -> None:
    """`--gpus 0,1` without a driver takes any GPU `gpus add` names: `remove 7` said `` `gpuherd
    gpus add 7` adds it ``."""
    herd.start("--gpus", "0,1")
    refused = herd.cli("gpus", "remove", "7", check=False)
    assert (refused.returncode, refused.stderr) == (
        1,
        "gpuherd: error: GPU 7 is not configured (configured: 0,1): nothing to remove\n",
    )
