"""`show` of a job on a GPU in a state this CLI does not know (a newer daemon's): said by its
name, where an older CLI of a daemon that added `unconfigured` failed with a KeyError."""

from __future__ import annotations

from gpuherd.cli.render import _gpus_line


def test_a_gpu_state_unknown_here_is_said_by_its_name() -> None:
    job = {"gpus": [3], "state": "running", "gpus_gone": [{"index": 3, "state": "melted"}]}
    assert _gpus_line(job) == "3 (GPU 3 melted)"


def test_a_known_state_is_said_in_words() -> None:
    job = {"gpus": [3], "state": "running", "gpus_gone": [{"index": 3, "state": "lost"}]}
    assert _gpus_line(job).startswith("3 (GPU 3 lost: the probe no longer sees it")
