"""Options of `submit` that cannot go together are refused by the CLI before anything is
queued, as `--mem` with `--gpus 0` always was: one line naming the options as typed, and exit
2 (a mistake in the command line). `--exclusive --gpus 0` and `--on-no-output kill` without
`--no-output-timeout` reached the daemon, which answered with its field names
(`exclusive (--exclusive) with gpus 0 (--gpus 0)`, `kill_on_no_output ...`) and exit 1."""

from __future__ import annotations

import pytest

from conftest import Herd


@pytest.mark.parametrize(
    ("options", "line"),
    [
        (
            ["--gpus", "0", "--exclusive"],
            "--exclusive with --gpus 0: a CPU-only job gets no GPU to itself; drop one of them",
        ),
        (
            ["--on-no-output", "kill"],
            "--on-no-output kill needs --no-output-timeout D: how long a job may print nothing "
            "before it is stopped (e.g. --no-output-timeout 30m)",
        ),
        (  # (it reached the daemon: `only_gpus (--only-gpus) with gpus 0 (--gpus 0)`, exit 1)
            ["--gpus", "0", "--only-gpus", "1"],
            "--only-gpus with --gpus 0: a CPU-only job gets no GPU; drop one of them",
        ),
    ],
    ids=["exclusive-cpu-only", "kill-without-timeout", "only-gpus-cpu-only"],
)
def test_options_that_cannot_go_together_are_a_command_line_mistake(
    herd: Herd, options: list[str], line: str
) -> None:
    herd.start("--fake-gpus", "1")
    refused = herd.cli("submit", *options, "--", "true", check=False)
    assert refused.returncode == 2
    assert refused.stderr.splitlines() == [f"gpuherd: error: {line} (see gpuherd submit --help)"]
    assert refused.stdout == ""
    assert herd.ls_all() == []  # nothing was queued


def test_on_no_output_kill_with_its_timeout_is_taken(herd: Herd) -> None:
    herd.start("--fake-gpus", "1")
    job = herd.submit("--on-no-output", "kill", "--no-output-timeout", "30m", "--", "true")
    assert herd.wait_state(job, "succeeded")["kill_on_no_output"] is True
