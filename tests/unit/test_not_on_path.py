"""not_on_path_hint: when `submit` warns that a command's first word will not be found."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuherd.cli.submit_hints import not_on_path_hint, visible_devices_hint, warn_submitted


@pytest.fixture
def work(tmp_path: Path) -> Path:
    for name in ("job.sh", "source", "[["):
        (tmp_path / name).write_text("echo hi\n")
        (tmp_path / name).chmod(0o755)
    (tmp_path / "plain.sh").write_text("echo hi\n")
    (tmp_path / "folder").mkdir()
    (tmp_path / "bin").mkdir()
    return tmp_path


@pytest.mark.parametrize("command", ["job.sh", "job.sh --lr 0.1", "A=1 B=2 job.sh", "'job.sh' x"])
def test_a_script_of_the_folder_named_without_a_slash_is_warned_of(
    work: Path, command: str
) -> None:
    assert not_on_path_hint(command, str(work), {"PATH": "/usr/bin:/bin"}) == (
        f'job.sh is a file in {work} but not on PATH: the job will fail with "not found"; '
        "submit ./job.sh (or sh job.sh)"
    )


def test_a_script_that_is_not_executable_is_told_to_run_with_sh(work: Path) -> None:
    hint = not_on_path_hint("plain.sh", str(work), {"PATH": "/usr/bin"})
    assert hint is not None
    assert hint.endswith("; submit sh plain.sh (or chmod +x plain.sh, then submit ./plain.sh)")


@pytest.mark.parametrize(
    ("command", "env"),
    [
        ("./job.sh", {}),
        ("sh job.sh", {}),
        ("no-such.sh", {}),  # not a file here
        ("folder", {}),  # a folder, not a file
        ("source", {}),  # the shell's own words
        ("[[ -e x ]]", {}),
        ("job.sh", {"PATH": "/usr/bin:."}),  # found through a relative entry ...
        ("job.sh", {"PATH": "/usr/bin::/bin"}),  # ... or an empty one (the folder)
        ("PATH=.:/bin job.sh", {}),  # set on the line itself
        ("job.sh", {"BASH_FUNC_job.sh%%": "() { :; }"}),  # an exported bash function
        ("job.sh 'unbalanced", {}),  # the shell's own error will say
        ("", {}),
        ("X=1", {}),
    ],
)
def test_nothing_is_said_when_the_shell_finds_it_or_it_is_unclear(
    work: Path, command: str, env: dict[str, str]
) -> None:
    assert not_on_path_hint(command, str(work), {"PATH": "/usr/bin:/bin", **env}) is None


def test_a_folder_on_path_finds_the_script(work: Path) -> None:
    (work / "bin" / "job.sh").write_text("echo hi\n")
    (work / "bin" / "job.sh").chmod(0o755)
    assert not_on_path_hint("job.sh", str(work), {"PATH": f"{work / 'bin'}:/bin"}) is None
    assert not_on_path_hint("job.sh", str(work), {"PATH": "bin"}) is None  # relative to cwd


def test_a_batch_warns_once_per_word_in_order(
    work: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    commands = ["job.sh 1", "plain.sh", "job.sh 2", "./job.sh", "plain.sh x"]
    job = {"cwd": str(work), "env_overrides": {"PATH": "/bin"}, "gpus": 1, "only_gpus": []}
    warn_submitted(commands, job)
    out, err = capsys.readouterr()
    assert out == ""
    assert [line.split()[2] for line in err.splitlines()] == ["job.sh", "plain.sh"]
    assert all(line.startswith("gpuherd: warning: ") for line in err.splitlines())


def test_a_visible_devices_setting_that_gpuherd_replaces_is_pointed_out() -> None:
    shell = {"CUDA_VISIBLE_DEVICES": "2,3"}
    hint = visible_devices_hint(shell, {}, 1, [])
    assert hint and hint.startswith("this shell's CUDA_VISIBLE_DEVICES=2,3 is replaced")
    assert hint.endswith("--only-gpus 2,3 keeps the job on those GPUs")
    by_env = visible_devices_hint(shell, {"CUDA_VISIBLE_DEVICES": "GPU-8a1f"}, 1, [])
    assert by_env and by_env.startswith("--env CUDA_VISIBLE_DEVICES=GPU-8a1f is replaced")
    assert "with their indices" in by_env  # a UUID is no index to give --only-gpus
    assert visible_devices_hint(shell, {}, 1, [2]) is None  # --only-gpus says where
    assert visible_devices_hint(shell, {}, 0, []) is None  # a CPU-only job gets none anyway
    assert visible_devices_hint({"CUDA_VISIBLE_DEVICES": ""}, {}, 1, []) is None
    assert visible_devices_hint({}, {}, 1, []) is None


@pytest.mark.parametrize("word", ["$x.sh", "`x`.sh", "job*.sh", "~job.sh"])
def test_a_word_the_shell_expands_is_not_judged(work: Path, word: str) -> None:
    (work / word).write_text("echo hi\n")  # a file literally of that name: not what runs
    assert not_on_path_hint(word, str(work), {"PATH": "/bin"}) is None
