"""Refusals of a sweep's input that named nothing to open, or advised the wrong fix, each now
one line naming the file's key and line (or the flag): a job option written below TOML's
`[grid]` (told to "give a list ([1h] for one value)", which made it a parameter), `samples`
more than the grid has and a format spec that cannot format a value (`invalid sweep: ...`,
no file), a variable gpuherd sets in the file's `env` (named `env (--env)`, and taken by a
--dry-run), `env: {C: true}` (said `True`), a UTF-16 file (Python's codec's words), a
`{placeholder}` in --output (advised `mkdir -p '.../{run_dir}'`) or in the results folder
(made literally), and a seed past 64 bits (taken here, refused by Python's seed=); and a
seed that draws nothing (no samples, no shuffle), taken without a word, is warned of.
`sweep --dry-run` needs no daemon: none is started."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import Herd


def dry_run(herd: Herd, work: Path, *args: str) -> tuple[int, str]:
    done = herd.cli("sweep", *args, "--dry-run", check=False, cwd=work)
    return done.returncode, done.stderr


@pytest.mark.parametrize(
    ("name", "text", "said"),
    [
        (
            "t.toml",
            'command = "echo {x}"\n[grid]\nx = [1, 2]\ntimeout = "1h"\n',
            "t.toml: grid.timeout: timeout is a job option, not a parameter: put it above"
            " [grid] (every key below [grid] is the grid's)",
        ),
        (
            "s.toml",
            'command = "echo {x}"\n[grid]\nx = [1, 2]\nseed = 3\n',
            "s.toml: grid.seed: seed is a key of the sweep, not a parameter: put it above"
            " [grid] (every key below [grid] is the grid's)",
        ),
        (
            "g.yaml",
            "command: echo {x}\ngrid:\n  x: [1, 2]\n  gpus: 2\n",
            "g.yaml:4: grid.gpus: gpus is a job option, not a parameter: put it at the top"
            " level, as command is, not indented under grid",
        ),
        (  # not an option's name: a list, written as the file would write one
            "x.yaml",
            "command: echo {x}\ngrid:\n  x: 1h\n",
            """x.yaml:3: grid.x: give a list (["1h"] for one value), not '1h'""",
        ),
    ],
)
def test_a_key_below_the_grid_that_is_the_files_own_says_where_it_goes(
    herd: Herd, tmp_path: Path, name: str, text: str, said: str
) -> None:
    (tmp_path / name).write_text(text)
    assert dry_run(herd, tmp_path, name) == (1, f"gpuherd: error: {said}\n")


@pytest.mark.parametrize(
    ("name", "text", "said"),
    [
        (
            "s.json",
            '{"command": "echo {x}",\n "grid": {"x": [1, 2]},\n "samples": 5}\n',
            "s.json:3: samples: 5 asked, but the grid has only 2 points",
        ),
        (
            "r.yaml",
            "command: echo {x}\nrandom: {x: {choice: [a, b]}}\nsamples: 5\n",
            "r.yaml:3: samples: 5 asked, but only 2 distinct points exist",
        ),
        (
            "f.yaml",
            'grid: {lr: [1.0e-3, "1e-3"]}\ncommand: echo {lr:.1e}\n',
            "f.yaml:2: command: {lr:.1e} cannot format '1e-3': Unknown format code 'e' for"
            " object of type 'str': give it as 0.001, or drop the format spec ({lr})",
        ),
        (
            "e.yaml",
            "command: echo {x}\ngrid: {x: [1]}\nenv:\n  A: 1\n  GPUHERD_JOB_ID: x\n",
            "e.yaml:5: env.GPUHERD_JOB_ID: gpuherd sets GPUHERD_JOB_ID in every job (the job's"
            " id), over yours: leave it out, or pass the value under another name",
        ),
        (
            "c.yaml",
            "command: echo {x}\ngrid: {x: [1]}\nenv: {C: true}\n",
            "c.yaml:3: env.C: give a string or a number, not true",
        ),
        (
            "seed.json",
            '{"command": "echo {x}", "grid": {"x": [1, 2]}, "shuffle": true,\n'
            ' "seed": 99999999999999999999999}\n',
            "seed.json:2: seed: 99999999999999999999999 is too large (at most 2**63 - 1)",
        ),
    ],
)
def test_a_files_points_are_refused_at_its_key(
    herd: Herd, tmp_path: Path, name: str, text: str, said: str
) -> None:
    (tmp_path / name).write_text(text)
    assert dry_run(herd, tmp_path, name) == (1, f"gpuherd: error: {said}\n")


def test_samples_of_the_command_line_over_the_files_are_its_own(herd: Herd, tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text("command: echo {x}\ngrid: {x: [1, 2]}\nsamples: 5\n")
    code, said = dry_run(herd, tmp_path, "s.yaml", "--samples", "2", "--seed", "1")
    assert (code, said.splitlines()[-1]) == (
        0,
        "2 commands of sweep s (dry run: nothing submitted)",
    )
    assert dry_run(herd, tmp_path, "s.yaml", "--samples", "3", "--seed", "1") == (
        1,
        "gpuherd: error: invalid sweep: samples: 3 asked, but the grid has only 2 points\n",
    )


def test_a_utf16_sweep_file_is_said_how_to_convert(herd: Herd, tmp_path: Path) -> None:
    text = '{"command": "echo {x}", "grid": {"x": [1]}}'
    (tmp_path / "l.json").write_bytes(text.encode("utf-16"))
    assert dry_run(herd, tmp_path, "l.json") == (
        1,
        "gpuherd: error: l.json is UTF-16 text (as Windows PowerShell's > writes): save it as"
        " UTF-8 (iconv -f UTF-16 -t UTF-8; in PowerShell, Out-File -Encoding utf8)\n",
    )
    (tmp_path / "l.yaml").write_bytes(b"command: echo {x}\ngrid: {x: [caf\xe9]}\n")
    assert dry_run(herd, tmp_path, "l.yaml") == (
        1,
        "gpuherd: error: l.yaml is not UTF-8 text (byte 0xe9 at line 2): if it is a sweep"
        " file, save it as UTF-8 (from Latin-1: iconv -f LATIN1 -t UTF-8)\n",
    )


def test_a_variable_gpuherd_sets_is_refused_by_a_dry_run_too(herd: Herd, tmp_path: Path) -> None:
    assert dry_run(herd, tmp_path, "echo {x}", "-p", "x", "1", "--env", "GPUHERD_JOB_ID=3") == (
        1,
        "gpuherd: error: env (--env): gpuherd sets GPUHERD_JOB_ID in every job (the job's id),"
        " over yours: leave it out, or pass the value under another name\n",
    )


def test_a_seed_past_64_bits_is_refused_as_python_refuses_it(herd: Herd, tmp_path: Path) -> None:
    said = herd.usage_error("sweep", "echo {x}", "-p", "x", "1", "--shuffle", "--seed", "9" * 23)
    assert said == (
        f"gpuherd: error: --seed: {'9' * 23} is too large (at most 2**63 - 1)"
        " (see gpuherd sweep --help)\n"
    )
    largest = str(2**63 - 1)
    code, _ = dry_run(herd, tmp_path, "echo {x}", "-p", "x", "1", "--shuffle", "--seed", largest)
    assert code == 0


PLACES = "%j (the job's id), %a (the attempt's number), %x (the job's name)"


def test_a_sweep_placeholder_in_output_says_what_output_takes(herd: Herd, tmp_path: Path) -> None:
    args = ("python train.py --lr {lr}", "-p", "lr", "0.1", "0.01", "-o", "{run_dir}/train.log")
    assert dry_run(herd, tmp_path, *args) == (
        2,
        f"gpuherd: error: --output {{run_dir}}/train.log: {{run_dir}} is a placeholder of the"
        f" command only; --output takes {PLACES} instead: logs/%x.log gives each point a file"
        " of its own (or end the command with > {run_dir}/train.log for one in its folder)"
        " (see gpuherd sweep --help)\n",
    )
    (tmp_path / "o.yaml").write_text(
        'command: echo {lr}\ngrid: {lr: [1, 2]}\nerror: "logs/{lr}.err"\n'
    )
    assert dry_run(herd, tmp_path, "o.yaml") == (
        1,
        f"gpuherd: error: o.yaml:3: error: logs/{{lr}}.err: {{lr}} is a placeholder of the"
        f" command only; error takes {PLACES} instead: logs/%x.err gives each point a file of"
        " its own\n",
    )
    assert not (tmp_path / "logs").exists()


def test_a_placeholder_in_the_results_folder_is_refused_but_sweep(
    herd: Herd, tmp_path: Path
) -> None:
    args = ("echo {x}", "-p", "x", "1", "2", "--results-dir", "res/{x}")
    assert dry_run(herd, tmp_path, *args) == (
        2,
        "gpuherd: error: --results-dir res/{x}: {x} is not filled in there: the results folder"
        " is one for the whole sweep, the points' folders in it named after their parameters"
        " already; it fills in {sweep} alone (the sweep's name): --results-dir res"
        " (see gpuherd sweep --help)\n",
    )
    (tmp_path / "r.yaml").write_text(
        'command: echo {x}\ngrid: {x: [1]}\nresults_dir: "out/{sweep}/{run_dir}"\n'
    )
    assert dry_run(herd, tmp_path, "r.yaml") == (
        1,
        "gpuherd: error: r.yaml:3: results_dir: out/{sweep}/{run_dir}: {run_dir} is not filled"
        " in there: the results folder is one for the whole sweep, the points' folders in it"
        " named after their parameters already; it fills in {sweep} alone (the sweep's name):"
        " results_dir: 'out/{sweep}'\n",
    )
    code, said = dry_run(herd, tmp_path, "r.yaml", "--results-dir", "kept/{sweep}")
    assert (code, said) == (0, "1 command of sweep r (dry run: nothing submitted)\n")


def test_a_seed_that_draws_nothing_is_warned_of(herd: Herd, tmp_path: Path) -> None:
    # Taken without a word: no --samples, no --shuffle, nothing for it to draw.
    code, said = dry_run(herd, tmp_path, "echo {x}", "-p", "x", "1", "--seed", "3", "--gpus", "0")
    assert code == 0 and said.startswith(
        "gpuherd: warning: --seed 3 does nothing: it draws the points of --samples and the order"
        " of --shuffle, and neither is given (for a seed of each point's own, use a parameter:"
        " -p seed 1 2)\n"
    )
    (tmp_path / "sd.yaml").write_text("command: echo {x}\ngrid: {x: [1]}\ngpus: 0\nseed: 4\n")
    code, said = dry_run(herd, tmp_path, "sd.yaml")
    assert code == 0 and said.startswith(
        "gpuherd: warning: seed: 4 in sd.yaml does nothing: it draws the points of samples and"
        " the order of shuffle, and neither is given (for a seed of each point's own, use a"
        " parameter: grid: {seed: [1, 2]})\n"
    )
    code, said = dry_run(herd, tmp_path, "sd.yaml", "--shuffle")
    assert code == 0 and "does nothing" not in said
