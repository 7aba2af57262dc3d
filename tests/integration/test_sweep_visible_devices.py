"""`gpuherd sweep` warns, as `submit` does, of a CUDA_VISIBLE_DEVICES that gpuherd replaces
with the GPUs it places each point on: given with --env, set in the shell, or in the sweep
file's `env`. It said nothing, and the points ran on other GPUs than the user meant."""

from __future__ import annotations

from pathlib import Path

from conftest import Herd

REPLACED = (
    "is replaced: the job sees the GPUs gpuherd places it on; --only-gpus 1 keeps the job on"
    " those GPUs"
)


def warnings(herd: Herd, work: Path, *args: str, env: dict[str, str] | None = None) -> list[str]:
    done = herd.cli("sweep", *args, "--hold", "-q", cwd=work, env=env)
    return [line for line in done.stderr.splitlines() if line.startswith("gpuherd: warning: ")]


def test_a_visible_devices_gpuherd_replaces_is_warned_of(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    daemon = shared_daemon
    flag = ("--env", "CUDA_VISIBLE_DEVICES=1", "--name", "flag")
    said = warnings(daemon, tmp_path, "echo {y}", "-p", "y", "1", *flag)
    assert said == [f"gpuherd: warning: --env CUDA_VISIBLE_DEVICES=1 {REPLACED}"]
    shell = {**daemon.env, "CUDA_VISIBLE_DEVICES": "1"}
    said = warnings(daemon, tmp_path, "echo {y}", "-p", "y", "2", "--name", "shell", env=shell)
    assert said == [f"gpuherd: warning: this shell's CUDA_VISIBLE_DEVICES=1 {REPLACED}"]
    (tmp_path / "e.yaml").write_text(
        "command: echo {y}\ngrid: {y: [3]}\nenv: {CUDA_VISIBLE_DEVICES: 1}\n"
    )
    said = warnings(daemon, tmp_path, "e.yaml")
    assert said == [f"gpuherd: warning: e.yaml's env CUDA_VISIBLE_DEVICES=1 {REPLACED}"]
    # Not where it does no harm: the GPUs chosen with --only-gpus, or none asked for.
    assert warnings(daemon, tmp_path, "e.yaml", "--only-gpus", "1", "--name", "e2") == []
    assert warnings(daemon, tmp_path, "e.yaml", "--gpus", "0", "--name", "e3") == []
    # A dry run says it as the submission does.
    dry = daemon.cli("sweep", "e.yaml", "--dry-run", "--name", "e4", cwd=tmp_path)
    assert f"gpuherd: warning: e.yaml's env CUDA_VISIBLE_DEVICES=1 {REPLACED}\n" in dry.stderr
