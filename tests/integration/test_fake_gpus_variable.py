"""GPUHERD_FAKE_GPUS means the same to every entry point (gpus/choice.py): `gpuherd run`,
`gpuherd daemon start` (and --foreground), the daemon `gpuherd.connect()` starts. Before, only
connect() read it: `daemon start` and `run` said "no NVIDIA driver found" to a user who had
set it. Real processes, with the CUDA_VISIBLE_DEVICES each job saw."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import Herd, Probe, Runs
from gpuherd.errors import DaemonError
from gpuherd.pyapi import connect

VARIABLE = "GPUHERD_FAKE_GPUS"
FIX = f"({VARIABLE} in the environment: export {VARIABLE}=4, say, or unset it)"


def test_gpuherd_run_takes_its_fake_gpus_from_the_variable(runs: Runs, probe: Probe) -> None:
    runs.env[VARIABLE] = "2"
    # The barrier holds each job until both run: they can only run on two GPUs at once.
    jobs = "".join(probe.cmd(name, barrier=2) + "\n" for name in "ab")
    done = runs.run(input=jobs)
    assert done.returncode == 0, done.stderr + done.stdout
    assert sorted(record["gpus"] for record in probe.records()) == ["0", "1"]


def test_gpuherd_runs_fake_gpus_option_wins_over_the_variable(runs: Runs, probe: Probe) -> None:
    runs.env[VARIABLE] = "1"
    done = runs.run("--fake-gpus", "3", "--gpus-per-job", "3", input=probe.cmd("all") + "\n")
    assert done.returncode == 0, done.stderr + done.stdout
    assert [record["gpus"] for record in probe.records()] == ["0,1,2"]


def test_daemon_start_takes_its_fake_gpus_from_the_variable(herd: Herd, probe: Probe) -> None:
    herd.env[VARIABLE] = "2"
    said = herd.cli("daemon", "start").stdout
    assert said.startswith("daemon started (pid ") and f"fake: 2 GPUs from {VARIABLE})" in said
    jobs = [herd.submit(probe.cmd(name, barrier=2)) for name in "ab"]
    for job in jobs:
        herd.wait_state(job, "succeeded", timeout=40)
    assert sorted(record["gpus"] for record in probe.records()) == ["0", "1"]
    assert f"gpus: 0,1 (fake: 2 GPUs from {VARIABLE})" in herd.cli("daemon", "status").stdout
    assert herd.cli("gpus").stdout.splitlines()[-1] == f"probe: fake: 2 GPUs from {VARIABLE}"


def test_the_variable_and_what_daemon_start_remembers(herd: Herd) -> None:
    def probe_line() -> str:
        return str(herd.client.get("/daemon")["probe"])

    def slots() -> dict[int, int]:
        return {row["index"]: row["slots"] for row in herd.json("gpus")["gpus"]}

    herd.env[VARIABLE] = "2"
    herd.start()
    herd.cli("gpus", "add", "0", "--slots", "2")
    herd.cli("daemon", "stop")
    # The variable unchanged (exported for good): a restart as without options, which keeps
    # what `gpuherd gpus` changed.
    herd.start()
    assert probe_line() == f"fake: 2 GPUs from {VARIABLE}" and slots() == {0: 2, 1: 1}
    herd.cli("daemon", "stop")
    # Without the variable: the last start's GPUs, remembered as --fake-gpus 2 would be.
    del herd.env[VARIABLE]
    herd.start()
    assert probe_line() == "fake: 2 GPUs" and slots() == {0: 2, 1: 1}
    herd.cli("daemon", "stop")
    # Another value is the user's intent now: it replaces what was remembered.
    herd.env[VARIABLE] = "3"
    herd.start()
    assert probe_line() == f"fake: 3 GPUs from {VARIABLE}" and slots() == {0: 1, 1: 1, 2: 1}
    herd.cli("daemon", "stop")
    # An option wins over the variable.
    herd.start("--fake-gpus", "1")
    assert probe_line() == "fake: 1 GPU" and slots() == {0: 1}


@pytest.mark.parametrize("kind", ["bad", "missing", "malformed"])
def test_a_bad_variable_is_named_on_one_line_and_no_daemon_starts(
    herd: Herd, runs: Runs, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    path = tmp_path / f"{kind}.json"
    if kind == "malformed":
        path.write_text('{"gpus": [')
    value = "abc" if kind == "bad" else str(path)
    reason = {
        "bad": f"{VARIABLE}: invalid item 'abc': use a count (4), sizes "
        "(2x24GiB,1x80GiB) or a .json state file",
        "missing": f"fake GPU state file not found: {path}: create it, or use a count (4), "
        "sizes (2x24GiB,1x80GiB) or a .json state file",
        "malformed": f"fake GPU state file {path}: not valid JSON: it stops "
        "mid-value at line 1, column 11 (cut off, or still being written?)",
    }[kind]
    herd.env[VARIABLE] = runs.env[VARIABLE] = value
    for said in (
        herd.cli("daemon", "start", check=False),
        herd.cli("daemon", "start", "--foreground", check=False),
        runs.run(input="true\n"),
    ):
        assert (said.returncode, said.stdout) == (2, "")
        assert said.stderr.splitlines() == [f"gpuherd: error: {reason} {FIX}"]
    assert not herd.is_up() and not herd.home.exists()
    monkeypatch.setenv(VARIABLE, value)  # connect() reads this process's environment
    with pytest.raises(DaemonError) as caught:
        connect(herd.home)
    assert str(caught.value) == f"{reason} {FIX}"
    assert not herd.is_up() and not herd.home.exists()


def test_connect_and_daemon_start_take_the_variable_alike(
    herd: Herd, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setenv(VARIABLE, "2")
    api = connect(herd.home)
    assert api.client.get("/daemon")["probe"] == f"fake: 2 GPUs from {VARIABLE}"
    herd.cli("gpus", "add", "0", "--slots", "2")
    herd.cli("daemon", "stop")
    herd.env[VARIABLE] = "2"
    herd.start()  # as connect() started it: the same GPUs, remembered the same way
    assert herd.client.get("/daemon")["probe"] == f"fake: 2 GPUs from {VARIABLE}"
    assert [row["slots"] for row in herd.json("gpus")["gpus"]] == [2, 1]


def test_connect_names_a_malformed_state_file_as_the_variables(
    herd: Herd, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    state = tmp_path / "gpus.json"
    state.write_text(json.dumps({"gpus": [{"memory_total": "lots"}]}))
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setenv(VARIABLE, str(state))
    with pytest.raises(DaemonError) as caught:
        connect(herd.home)
    said = str(caught.value)
    assert said.startswith(f"fake GPU state file {state}: ") and said.endswith(FIX)
    assert not herd.is_up()


def test_a_bad_fake_gpus_argument_is_not_told_to_set_the_variable(
    herd: Herd, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The argument wins over the variable: setting it could not help, yet it was advised.
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    with pytest.raises(DaemonError) as caught:
        connect(herd.home, fake_gpus="bogus")
    assert str(caught.value) == (
        "fake_gpus: invalid item 'bogus': use a count (4), sizes (2x24GiB,1x80GiB) "
        "or a .json state file (arguments of gpuherd.connect(), before the first submit)"
    )
    assert not herd.is_up()
