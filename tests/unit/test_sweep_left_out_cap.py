"""`sweep --dry-run`'s warning of options the printed commands leave out: `--max-log-size
none` is what `gpuherd run` does anyway (it said `leave out --max-log-size: give gpuherd run
--max-log-size`, for an option that would change nothing); a cap is left out."""

from __future__ import annotations

import os

from gpuherd.cli.sweep_left_out import left_out
from gpuherd.wire_requests import SweepOptions


def test_no_cap_is_not_left_out_and_a_cap_is() -> None:
    here = os.getcwd()
    assert left_out(SweepOptions(max_log_size=0), here) is None
    assert left_out(SweepOptions(max_log_size=2**21), here) == (
        "the commands printed leave out --max-log-size: give gpuherd run --max-log-size"
    )


def test_what_a_sweep_file_gave_is_named_as_its_keys() -> None:
    # They were named as flags never typed (`--env, --hold`); job ids are the command line's
    # only, and `--env` typed beside the file's standing entries is named as both.
    options = SweepOptions(env_overrides={"A": "1"}, hold=True, after=[3], only_gpus=[0, 1])
    elsewhere = os.path.dirname(os.getcwd())
    said = left_out(options, elsewhere, "s.yaml", {"after"}, file_env=True)
    assert said == (
        "the commands printed leave out --after and s.yaml's only_gpus, env, hold, cwd: give"
        " gpuherd run --gpus (for only_gpus); it has no --env, --after, --hold, --cwd"
    )
    said = left_out(options, os.getcwd(), "s.yaml", {"env", "after", "only_gpus"}, True)
    assert said == (
        "the commands printed leave out --only-gpus, --env, --after and s.yaml's env, hold:"
        " give gpuherd run --gpus (for --only-gpus); it has no --env, --after, --hold"
    )


def test_output_and_error_left_out_say_what_run_has_instead() -> None:
    # `gpuherd run has no --output` left the user without a way to keep the logs.
    here = os.getcwd()
    instead = "its --output-dir DIR keeps each job's logs in a folder of its own"
    assert left_out(SweepOptions(output="logs/%x.log"), here) == (
        f"the commands printed leave out --output: gpuherd run has no --output; {instead}"
    )
    assert left_out(SweepOptions(error="e.log", timeout=60, project="p"), here) == (
        "the commands printed leave out --timeout, --error, --project: give gpuherd run"
        f" --timeout; it has no --error, --project; {instead}"
    )
    assert "output-dir" not in (left_out(SweepOptions(project="p"), here) or "")
