"""The warning of a CUDA_VISIBLE_DEVICES that gpuherd replaces (set by the command, in the
shell, or with --env) offered `--only-gpus 5` on a machine of four GPUs: a GPU gpuherd does
not have, which that option refuses. It now says GPU 5 is not configured, naming those that
are, in `submit`, `sweep` and `edit` alike; GPUs it has are still offered."""

from __future__ import annotations

from conftest import Herd
from gpuherd.device_hints import command_devices_hint, visible_devices_hint

SETS = "gpuherd: warning: the command sets CUDA_VISIBLE_DEVICES={}, so the job would not run on "
SETS += "the GPUs gpuherd places it on and holds for it, but on ones another job may hold: "
SETS += "leave it out (gpuherd sets it){}\n"
NOT_HAD = "; GPU 5 is not configured (configured: 0,1,2,3)"


def test_a_hint_names_no_gpu_gpuherd_does_not_have(shared_daemon: Herd) -> None:
    herd = shared_daemon
    for value in ("5", "1,5"):
        told = herd.cli("submit", "--hold", "--", f"CUDA_VISIBLE_DEVICES={value} true")
        assert told.stderr == SETS.format(value, NOT_HAD), told.stderr  # was --only-gpus 5
    told = herd.cli("submit", "--hold", "--", "CUDA_VISIBLE_DEVICES=3 true")
    assert told.stderr == SETS.format(
        "3", ", or submit with --only-gpus 3 to keep the job on those"
    )

    shell = herd.cli(
        "submit", "--hold", "--", "true", env={**herd.env, "CUDA_VISIBLE_DEVICES": "5"}
    )
    assert shell.stderr == (
        "gpuherd: warning: this shell's CUDA_VISIBLE_DEVICES=5 is replaced: the job sees the "
        f"GPUs gpuherd places it on{NOT_HAD}\n"
    )
    by_env = herd.cli("submit", "--hold", "--env", "CUDA_VISIBLE_DEVICES=5", "--", "true")
    assert by_env.stderr.endswith(f"GPUs gpuherd places it on{NOT_HAD}\n"), by_env.stderr

    swept = herd.cli("sweep", "CUDA_VISIBLE_DEVICES=5 echo {i}", "-p", "i", "1", "--dry-run")
    assert swept.stderr.startswith(SETS.format("5", NOT_HAD)), swept.stderr

    job = herd.submit("--hold", "--", "true")
    edited = herd.cli("edit", str(job), "--command", "CUDA_VISIBLE_DEVICES=5 true")
    assert edited.stderr == SETS.format("5", NOT_HAD).replace("warning: ", f"warning: job {job}: ")


def test_where_the_gpus_are_not_known_the_hint_is_as_it_was() -> None:
    # (a sweep's --dry-run with no daemon running: nothing to ask)
    said = command_devices_hint("CUDA_VISIBLE_DEVICES=5 true", 1, [], had=lambda: None)
    assert said is not None and said.endswith(
        ", or submit with --only-gpus 5 to keep the job on those"
    )
    said = visible_devices_hint({"CUDA_VISIBLE_DEVICES": "2"}, {}, 1, [], lambda: {0, 1})
    assert said is not None and said.endswith("; GPU 2 is not configured (configured: 0,1)")
    asked = []
    command_devices_hint("true", 1, [], had=lambda: asked.append(1) or {0})
    assert asked == []  # asked only when a hint would name GPUs
