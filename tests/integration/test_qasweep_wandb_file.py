"""A W&B sweep config given as a sweep file: one line saying what it is and what to write
instead, with the file's own program and parameter, where it was refused key by key
(`unknown key 'program'; known keys: ...`)."""

from __future__ import annotations

from conftest import Herd

WANDB = """\
program: train_net.py
method: random
metric: {name: val_loss, goal: minimize}
parameters:
  dropout: {values: [0.1, 0.3]}
  lr: {distribution: log_uniform_values, min: 1.0e-5, max: 0.1}
"""


def test_a_wandb_config_is_named_and_translated(herd: Herd) -> None:
    work = herd.home.parent
    (work / "wandb.yaml").write_text(WANDB)
    refused = herd.cli("sweep", "wandb.yaml", "--dry-run", check=False, cwd=work)
    assert refused.returncode == 1
    assert refused.stdout == ""
    assert refused.stderr == (
        "gpuherd: error: wandb.yaml:1: this is a W&B sweep config (program, method,"
        " parameters); a sweep file here names the command, a placeholder per parameter"
        " (command: python train_net.py --dropout={dropout}), and the values: grid: {dropout:"
        " [0.1, 0.01]} for method: grid, or random: {dropout: {loguniform: [1.0e-5, 0.1]}}"
        " and samples: 20 for method: random (docs/sweeps.md, Sweep files)\n"
    )


def test_a_sweep_file_with_a_parameters_key_alone_is_not_taken_for_one(herd: Herd) -> None:
    work = herd.home.parent
    (work / "mine.yaml").write_text("command: echo {x}\ngrid: {x: [1]}\nparameters: 1\n")
    refused = herd.cli("sweep", "mine.yaml", "--dry-run", check=False, cwd=work)
    assert refused.returncode == 1
    assert "mine.yaml:3: unknown key 'parameters'; known keys: name, command," in refused.stderr
