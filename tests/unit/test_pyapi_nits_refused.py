"""Small refusals of the Python API and the sweep spec (a review of the API): a key both in
`fixed` and in the grid lost its fixed value without a word; `connect(start="no")` started a
daemon; a NUL byte in `env=` was named `env_overrides` (the HTTP field); `submit("")` was
told to give the command "after --" (the CLI's words); `gpuherd.errors` was missing after a
bare `import gpuherd`; `Job.state` and `Sweep.ids` had no docstring. None of these asks a
daemon: the Herd is of a home where none runs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import gpuherd
import gpuherd.pyapi
from gpuherd.client import Client
from gpuherd.core.sweep import Distribution, SweepSpec, spec_from_dict, spec_to_dict
from gpuherd.core.sweep_config import from_config
from gpuherd.core.sweep_fixed import overridden_fixed, unused_fixed
from gpuherd.errors import InvalidValue
from gpuherd.pyapi import Herd, Job, Sweep
from gpuherd.pyapi_types import WrongType, WrongValue
from gpuherd.sweepfile import SweepFileError, load_sweep

IN_GRID = (
    "fixed.lr: lr is also in grid, which gives every point its own lr, so the fixed value would"
    " reach no point: give lr in one of them (fixed for one value, grid for several values)"
)


@pytest.fixture
def herd(tmp_path: Path) -> Herd:
    return Herd(Client(tmp_path / "home"))


# ---- a key both fixed and varied --------------------------------------------------------------


def test_a_fixed_key_every_point_varies_is_refused_by_the_core_check() -> None:
    grid = SweepSpec(name="s", command="echo {lr}", fixed={"lr": 5}, grids=({"lr": (1, 2)},))
    said = overridden_fixed(grid)
    assert said is not None and str(said) == IN_GRID and said.loc == ("fixed", "lr")
    assert unused_fixed(grid) is not None  # (the check the daemon and sweep files make)
    both = SweepSpec(
        name="s", command="echo {lr}", fixed={"lr": 5}, grids=({"lr": (1,)}, {"lr": (2,)})
    )
    assert str(overridden_fixed(both)).startswith("fixed.lr: lr is also in every grid,")
    drawn = SweepSpec(
        name="s",
        command="echo {lr}",
        fixed={"lr": 5},
        random={"lr": Distribution("uniform", low=0, high=1)},
        samples=2,
    )
    assert str(overridden_fixed(drawn)).endswith("(fixed for one value, random to draw it)")
    task = SweepSpec(name="s", fixed={"lr": 5}, grids=({"lr": (1, 2)},))  # (a Python task's)
    assert str(overridden_fixed(task)) == IN_GRID


def test_a_fixed_key_only_some_grids_vary_is_their_default_and_taken() -> None:
    spec = SweepSpec(
        name="s",
        command="echo {lr} {bs}",
        fixed={"lr": 5},
        grids=({"lr": (1,), "bs": (1,)}, {"bs": (2,)}),
    )
    assert overridden_fixed(spec) is None and unused_fixed(spec) is None


def test_a_stored_spec_with_such_a_key_is_still_read_back() -> None:
    # (sweeps stored before it was refused: their status must still be shown)
    spec = SweepSpec(name="s", command="echo {lr}", fixed={"lr": 5}, grids=({"lr": (1, 2)},))
    assert spec_from_dict(spec_to_dict(spec)) == spec


def test_a_fixed_key_in_the_grid_is_refused_from_python(herd: Herd) -> None:
    with pytest.raises(WrongValue) as refused:
        herd.sweep("echo {lr}", {"lr": [1, 2]}, fixed={"lr": 5}, dry_run=True)
    assert str(refused.value) == f"invalid sweep: {IN_GRID}"
    assert isinstance(refused.value, InvalidValue)  # (as the daemon's refusals of a spec)
    task = SweepSpec(name="t", grids=({"lr": (1, 2)},))  # (a task's sweep: the daemon's
    with pytest.raises(WrongValue, match=r"^invalid sweep: fixed\.lr: lr is also in grid"):
        herd.sweep(task, fixed={"lr": 5}, task=True, dry_run=True)  # check skips it)


def test_a_fixed_key_of_python_over_a_files_grid_is_refused(herd: Herd, tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text("command: echo {lr} {bs}\nfixed: {bs: 1}\ngrid: {lr: [1, 2]}\n")
    with pytest.raises(WrongValue, match=r"^invalid sweep: fixed\.lr: lr is also in grid"):
        herd.sweep(path, fixed={"lr": 5}, dry_run=True)


def test_a_sweep_file_with_a_key_both_fixed_and_in_the_grid_is_refused_naming_its_line(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s.yaml"
    path.write_text("command: echo {lr}\nfixed:\n  lr: 5\ngrid:\n  lr: [1, 2]\n")
    with pytest.raises(SweepFileError) as refused:
        load_sweep(path)
    assert str(refused.value) == f"{path}:3: {IN_GRID}"


def test_the_cli_refuses_such_a_sweep_file_as_it_refuses_an_unused_fixed_value(
    tmp_path: Path,
) -> None:
    (tmp_path / "both.yaml").write_text("command: echo {lr}\nfixed: {lr: 5}\ngrid: {lr: [1, 2]}\n")
    (tmp_path / "unused.yaml").write_text("command: echo {lr}\nfixed: {ep: 5}\ngrid: {lr: [1]}\n")
    env = {**os.environ, "GPUHERD_HOME": str(tmp_path / "home")}
    ran = {
        name: subprocess.run(
            [sys.executable, "-m", "gpuherd", "sweep", f"{name}.yaml", "--dry-run"],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        for name in ("both", "unused")
    }
    assert ran["both"].stderr == f"gpuherd: error: both.yaml:2: {IN_GRID}\n"
    assert ran["both"].returncode == ran["unused"].returncode != 0
    assert ran["both"].stdout == "" and not (tmp_path / "home").exists()  # (no daemon asked)


def test_a_gts_configs_global_key_every_test_config_gives_is_dropped_as_gts_drops_it() -> None:
    # GPU Task Scheduler gives each point global_config updated by its test_config: the same
    # points, not a refusal of a config it runs. One only some test_configs give stays.
    config: dict[str, Any] = {
        "global_config": {"lr": 5, "epochs": 3, "bs": 8},
        "test_config": [{"lr": [1, 2], "bs": [1]}, {"lr": [3], "epochs": [4]}],
    }
    spec = from_config(config, command="echo {lr} {bs} {epochs}")
    assert dict(spec.fixed) == {"epochs": 3, "bs": 8}
    assert overridden_fixed(spec) is None


# ---- connect() ----------------------------------------------------------------------------------


@pytest.fixture
def no_start(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """connect()'s daemon starts, recorded instead of made."""
    started: list[list[str]] = []
    monkeypatch.setenv("GPUHERD_FAKE_GPUS", "2")
    monkeypatch.setattr(gpuherd.pyapi, "start_daemon", lambda _c, args, _h: started.append(args))
    return started


@pytest.mark.parametrize("start", ["no", 0, None, 1])
def test_connect_refuses_a_start_that_is_not_a_bool(
    tmp_path: Path, no_start: list[list[str]], start: Any
) -> None:
    with pytest.raises(WrongType) as refused:
        gpuherd.connect(tmp_path / "home", start=start)
    assert str(refused.value) == (
        "start is True or False (whether to start a daemon if none runs), got "
        f"{start!r} ({type(start).__name__})"
    )
    assert no_start == []


@pytest.mark.parametrize(
    ("gpus", "said"),
    [
        ([None], 'gpus are GPU indices ([0, 2], or "0,2"): None (NoneType) in [None] is not one'),
        ([0, 1.5], 'gpus are GPU indices ([0, 2], or "0,2"): 1.5 (float) in [0, 1.5] is not one'),
        ([True], 'gpus are GPU indices ([0, 2], or "0,2"): True (bool) in [True] is not one'),
        ({0: 1}, 'gpus is which GPUs the daemon uses, their indices ([0, 2], or "0,2"): got'),
    ],
)
def test_connect_refuses_gpus_of_the_wrong_kind(
    tmp_path: Path, no_start: list[list[str]], gpus: Any, said: str
) -> None:
    with pytest.raises(WrongType) as refused:
        gpuherd.connect(tmp_path / "home", gpus=gpus)
    assert str(refused.value).startswith(said), str(refused.value)
    assert no_start == []


def test_connect_reads_gpus_given_as_a_generator_once(
    tmp_path: Path, no_start: list[list[str]]
) -> None:
    gpuherd.connect(tmp_path / "home", gpus=(i for i in [0, 1]))
    ((*_, flag, value),) = no_start
    assert (flag, value) == ("--gpus", "0,1")


# ---- submit(), edit() ---------------------------------------------------------------------------

NUL = "env: a NUL byte in A's value: remove it (no program can receive it)"


def test_a_nul_byte_in_env_is_named_as_env(herd: Herd) -> None:
    with pytest.raises(WrongValue) as refused:
        herd.submit("true", env={"A": "a\0b"})
    assert str(refused.value) == NUL
    with pytest.raises(WrongValue) as refused:
        herd.sweep("echo {x}", {"x": [1]}, env={"A": "a\0b"}, dry_run=True)
    assert str(refused.value) == NUL
    with pytest.raises(WrongValue) as refused:
        Job(herd, 7).edit(env={"A": "a\0b"})
    assert str(refused.value) == NUL


GIVE = (
    "give the command to run, as text ('python train.py --lr 0.1') or a list of words "
    "(['python', 'train.py', '--lr', '0.1'])"
)


@pytest.mark.parametrize(
    ("command", "said"),
    [
        ("", "the command is empty"),
        ("  ", "the command '  ' is only white space"),
        ([], "the command is empty (no words)"),
    ],
)
def test_an_empty_command_is_refused_in_the_apis_words(herd: Herd, command: Any, said: str) -> None:
    with pytest.raises(WrongValue) as refused:
        herd.submit(command)
    assert str(refused.value) == f"{said}: {GIVE}"
    assert "after --" not in str(refused.value) and isinstance(refused.value, InvalidValue)


def test_an_edit_to_an_empty_command_is_refused_in_the_apis_words(herd: Herd) -> None:
    with pytest.raises(WrongValue) as refused:
        Job(herd, 7).edit(command="")
    assert str(refused.value) == f"the command is empty: {GIVE}"


# ---- the package ------------------------------------------------------------------------------


def test_errors_is_there_after_a_bare_import() -> None:
    code = (
        "import gpuherd, sys\n"
        "print(gpuherd.errors.NotFound.__name__, 'gpuherd.pyapi' in sys.modules)"
    )
    ran = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert ran.stdout == "NotFound False\n"  # (the API itself still imported on first use)
    assert "errors" in dir(gpuherd) and "errors" in gpuherd.__all__


def test_job_state_and_sweep_ids_say_what_they_are() -> None:
    assert Job.state.__doc__ and "NotFound" in Job.state.__doc__
    assert Sweep.ids.__doc__ and "dry run" in Sweep.ids.__doc__
