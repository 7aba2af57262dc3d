"""`--gpus` and `--fake-gpus` (connect()'s `gpus=` and `fake_gpus=`) are checked before any
daemon starts, with the parser the probe uses (gpus/choice.py), as GPUHERD_FAKE_GPUS is
(test_fake_gpus_variable.py). Before, `daemon start --fake-gpus bogus` started a daemon that
failed (exit 1), `run --fake-gpus bogus` exited 1, and connect(gpus='x') did not name its
argument."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import Herd, Runs
from gpuherd.errors import DaemonError
from gpuherd.pyapi import connect

FAKE_HELP = "use a count (4), sizes (2x24GiB,1x80GiB) or a .json state file"


@pytest.mark.parametrize("kind", ["bad", "missing", "malformed", "bad --gpus"])
def test_a_bad_gpu_option_is_named_on_one_line_and_no_daemon_starts(
    herd: Herd, runs: Runs, tmp_path: Path, kind: str
) -> None:
    path = tmp_path / f"{kind}.json"
    if kind == "malformed":
        path.write_text('{"gpus": [')
    option, value, reason = {
        "bad": ("--fake-gpus", "abc", f"--fake-gpus: invalid item 'abc': {FAKE_HELP}"),
        "missing": (
            "--fake-gpus",
            str(path),
            f"--fake-gpus: fake GPU state file not found: {path}: create it, or {FAKE_HELP}",
        ),
        "malformed": (
            "--fake-gpus",
            str(path),
            f"--fake-gpus: fake GPU state file {path}: not valid JSON: it stops "
            "mid-value at line 1, column 11 (cut off, or still being written?)",
        ),
        "bad --gpus": ("--gpus", "x", "--gpus: invalid GPU index 'x': use GPU indices"),
    }[kind]
    for command, said in (
        ("daemon start", herd.cli("daemon", "start", option, value, check=False)),
        ("daemon start", herd.cli("daemon", "start", "--foreground", option, value, check=False)),
        ("run", runs.run(option, value, input="true\n")),
    ):
        assert (said.returncode, said.stdout) == (2, ""), said.stderr
        [line] = said.stderr.splitlines()
        assert line.startswith(f"gpuherd: error: {reason}")
        assert line.endswith(f" (see gpuherd {command} --help)")
    assert not herd.is_up() and not herd.home.exists()


def test_connect_names_its_gpus_argument_as_it_names_fake_gpus(herd: Herd) -> None:
    with pytest.raises(DaemonError) as caught:
        connect(herd.home, gpus="x")
    assert str(caught.value) == (
        "gpus: invalid GPU index 'x': use GPU indices like 0,1,2, 1-3 or 0 1 2 (nvidia-smi "
        "numbering; repeat one for 2 slots) (arguments of gpuherd.connect(), before the "
        "first submit)"
    )
    with pytest.raises(DaemonError, match=r"^gpus and fake_gpus exclude each other"):
        connect(herd.home, gpus=[0], fake_gpus=1)
    with pytest.raises(DaemonError, match=r"^fake_gpus: fake GPU state file not found: "):
        connect(herd.home, fake_gpus="missing.json")
    assert not herd.is_up() and not herd.home.exists()


def test_a_relative_state_file_is_remembered_by_its_absolute_path(
    herd: Herd, tmp_path: Path
) -> None:
    # It was remembered as `state.json`: a restart from another folder did not find it.
    here, elsewhere = tmp_path / "here", tmp_path / "elsewhere"
    here.mkdir()
    elsewhere.mkdir()
    (here / "state.json").write_text(json.dumps({"gpus": [{"memory_total": "24GiB"}] * 3}))
    herd.cli("daemon", "start", "--fake-gpus", "state.json", cwd=here)
    herd.cli("daemon", "stop")
    herd.cli("daemon", "start", cwd=elsewhere)
    assert herd.client.get("/daemon")["probe"] == f"fake: state file {here / 'state.json'}"
    assert [row["index"] for row in herd.json("gpus")["gpus"]] == [0, 1, 2]
