"""What the CLI prints and takes around a daemon's jobs: `show`'s stderr tail of a failed job,
states in any case, the options a sweep's warning names, a sweep template that sets
CUDA_VISIBLE_DEVICES itself, and `edit --oom-retry`.

`show` printed a NUL of the tail as a blank (`run` shows ^@); `ls --state Running` was "not a
choice"; a sweep's warning said `oom_retry no -> yes`, a field's name, not the option's;
`submit` warned of a command that sets CUDA_VISIBLE_DEVICES, `sweep` did not; `edit
--oom-retry` answered "Did you mean '--retries'?".
"""

from __future__ import annotations

from pathlib import Path

from conftest import Herd


def test_show_prints_the_stderr_tail_with_control_bytes_visible(shared_daemon: Herd) -> None:
    job = shared_daemon.submit("--gpus", "0", "--", r"printf 'a\000b\001c\n' >&2; exit 3")
    shared_daemon.wait_state(job, "failed")
    lines = shared_daemon.cli("show", str(job)).stdout.splitlines()
    assert lines[lines.index("last lines of stderr") + 1 :] == ["  a^@b^Ac"]


def test_states_are_taken_in_any_case(shared_daemon: Herd) -> None:
    job = shared_daemon.submit("--hold", "--", "true")
    for typed in ("HELD", "Held", "held,QUEUED"):
        listed = shared_daemon.cli("ls", "-q", "--state", typed).stdout.split()
        assert str(job) in listed, typed
    refused = shared_daemon.usage_error("ls", "--state", "Helt")
    assert "'Helt' is not a choice" in refused


def test_sweep_warnings_name_options_and_a_template_setting_devices(
    daemon: Herd, tmp_path: Path
) -> None:
    results = str(tmp_path / "res")
    template = "CUDA_VISIBLE_DEVICES=0 echo {x}"
    first = daemon.cli("sweep", template, "-p", "x", "1", "2", "--hold", "--results-dir", results)
    devices = (
        "gpuherd: warning: the command sets CUDA_VISIBLE_DEVICES=0, so the job would not run on "
        "the GPUs gpuherd places it on and holds for it, but on ones another job may hold: "
        "leave it out (gpuherd sets it), or submit the sweep with --only-gpus 0 to keep the job "
        "on those"
    )
    assert first.stderr.splitlines() == [devices]  # once for the sweep, not once a point

    again = daemon.cli(
        "sweep", template, "-p", "x", "1", "2", "--hold", "--results-dir", results,
        "--only-gpus", "0", "--oom-retry",
    )  # fmt: skip
    # With --only-gpus the job stays on the GPUs it names: nothing to say of the template.
    [warning] = again.stderr.splitlines()
    assert "(--only-gpus any -> 0, --oom-retry no -> yes)" in warning, warning

    done = daemon.submit("--gpus", "0", "--", "true")
    daemon.wait_state(done, "succeeded")
    assert daemon.cli("clean", "--state", "Succeeded").stdout == f"job {done}: removed\n"
    assert done not in [j["id"] for j in daemon.ls_all()]


def test_edit_says_it_does_not_change_oom_retry(shared_daemon: Herd) -> None:
    job = shared_daemon.submit("--hold", "--", "true")
    refused = shared_daemon.usage_error("edit", str(job), "--oom-retry")
    assert refused == (
        "gpuherd: error: No such option '--oom-retry': edit cannot change --oom-retry of a "
        "waiting job: gpuherd kill ID, then submit its command again with --oom-retry (see "
        "gpuherd edit --help)\n"
    )
