"""Tab after `gpuherd gpus drain`, `enable` and `remove`, and after --only-gpus, offers the
GPUs the daemon has (before: nothing), as the shells ask it (test_completion.py's helpers):
drain those not drained, enable the drained ones, remove and --only-gpus every one; in a
list, the rest."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from test_completion import complete, in_shell, values

from conftest import Herd, wait_for

GPU = {"name": "Fake A100", "memory_total": "80GiB"}


@pytest.fixture
def gpus(herd: Herd, tmp_path: Path) -> Herd:
    """GPUs 0-3, 1 and 3 drained, 3 no longer seen by the probe (lost, with no job on it)."""
    state = tmp_path / "gpus.json"
    state.write_text(json.dumps({"gpus": [GPU] * 4}))
    herd.start("--fake-gpus", str(state))
    herd.cli("gpus", "drain", "1", "3")
    state.write_text(json.dumps({"gpus": [GPU, GPU, GPU, {"lost": True}]}))
    wait_for(lambda: herd.json("gpus")["missing"] == [3], what="GPU 3 to be lost")
    return herd


def test_each_gpu_verb_offers_the_gpus_it_can_act_on(gpus: Herd) -> None:
    herd = gpus
    assert values(herd, "gpuherd gpus drain ") == ["0", "2"]
    assert values(herd, "gpuherd gpus enable ") == ["1", "3"]
    assert values(herd, "gpuherd gpus remove ") == ["0", "1", "2", "3"]
    assert values(herd, "gpuherd gpus remove 2") == ["2"]
    assert values(herd, "gpuherd gpus remove x") == []
    # Each named once: in the words before, and in the list being typed.
    assert values(herd, "gpuherd gpus remove 0 2 ") == ["1", "3"]
    assert values(herd, "gpuherd gpus remove 0,") == ["0,1", "0,2", "0,3"]
    assert values(herd, "gpuherd gpus remove 1-") == ["1-2", "1-3"]  # (past the range's start)
    assert values(herd, "gpuherd gpus enable 1,") == ["1,3"]
    assert herd.cli("gpus", "enable", "1,3").returncode == 0  # (what was offered is taken)
    assert values(herd, "gpuherd gpus enable ") == []
    assert values(herd, "gpuherd gpus drain ") == ["0", "1", "2", "3"]


def test_gpus_come_with_their_name_and_state_where_the_shell_shows_one(gpus: Herd) -> None:
    for shell in ("zsh", "fish"):
        found, proc = complete(gpus, "gpuherd gpus remove ", shell)
        assert (proc.returncode, proc.stderr) == (0, "")
        assert found == [
            ("plain", "0", "Fake A100 (enabled)"),
            ("plain", "1", "Fake A100 (draining)"),
            ("plain", "2", "Fake A100 (enabled)"),
            ("plain", "3", "not seen by the probe, draining"),
        ]


def test_only_gpus_offers_the_configured_gpus_then_the_rest(herd: Herd) -> None:
    herd.start("--fake-gpus", "3")
    herd.cli("gpus", "drain", "2")  # (a job may still be kept to it: offered)
    for line in (
        "gpuherd submit --only-gpus ",
        "gpuherd sweep train.yaml --only-gpus ",
        "gpuherd edit 3 --only-gpus ",
    ):
        assert values(herd, line) == ["0", "1", "2"], line
    assert values(herd, "gpuherd submit --only-gpus 2,") == ["2,0", "2,1"]
    assert values(herd, "gpuherd submit --only-gpus 0,2,") == ["0,2,1"]
    assert values(herd, "gpuherd submit --only-gpus 0-2,") == []


def test_without_a_daemon_no_gpu_is_offered_and_nothing_said(herd: Herd) -> None:
    for line in ("gpuherd gpus drain ", "gpuherd gpus enable ", "gpuherd submit --only-gpus "):
        found, proc = complete(herd, line, "zsh")
        assert (found, proc.returncode, proc.stderr) == ([], 0, "")
    assert not herd.home.exists()


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
def test_bash_completes_gpus_on_tab(gpus: Herd) -> None:
    script = """
        source <(gpuherd completion bash)
        COMP_WORDS=(gpuherd gpus drain ""); COMP_CWORD=3
        _gpuherd_completion gpuherd "" drain
        echo "drain: ${COMPREPLY[*]}"
        COMPREPLY=(); COMP_WORDS=(gpuherd submit --only-gpus 0,); COMP_CWORD=3
        _gpuherd_completion gpuherd 0, --only-gpus
        echo "only: ${COMPREPLY[*]}"
    """
    proc = in_shell(gpus, ["bash", "--norc", "--noprofile"], script)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["drain: 0 2", "only: 0,1 0,2 0,3"]


@pytest.mark.skipif(
    shutil.which("fish") is None and not os.environ.get("CI"), reason="fish is not installed"
)
def test_fish_completes_gpus(gpus: Herd) -> None:
    script = 'gpuherd completion fish | source; complete -C "gpuherd gpus enable "'
    proc = in_shell(gpus, ["fish", "--no-config"], script)
    assert (proc.returncode, proc.stderr) == (0, "")
    assert proc.stdout.splitlines() == [
        "1\tFake A100 (draining)",
        "3\tnot seen by the probe, draining",
    ]
