"""Sweep files (YAML, TOML) and GPU Task Scheduler config dicts, and their one-line errors."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from gpuherd.core.sweep import expand
from gpuherd.sweepfile import SubmitOptions, SweepFileError, from_config, load_sweep, parse_sweep

GTS_POINTS = [
    {"num_run": 5, "num_epoch": 200, "method": "GAN", "num_packing": 1, "num_zmode": 1},
    {"num_run": 5, "num_epoch": 200, "method": "ALI", "num_packing": 1, "num_zmode": 1},
    {"num_run": 5, "num_epoch": 200, "method": "WGAN", "num_packing": 3, "num_zmode": 1},
    {"num_run": 5, "num_epoch": 200, "method": "WGAN", "num_packing": 3, "num_zmode": 2},
]

GTS_YAML = """\
name: pacgan
command: >-
  python main.py --method {method} --packing {num_packing} --zmode {num_zmode}
  --out {run_dir}
fixed:
  num_run: 5
  num_epoch: 200
grid:
  - method: [GAN, ALI]
    num_packing: [1]
    num_zmode: [1]
  - method: [WGAN]
    num_packing: [3]
    num_zmode: [1, 2]
gpus: 2
mem: 10GiB
priority: 5
retries: 1
timeout: 1h30m
max_parallel: 3
project: gan
env: {SEED: 1, MODE: fast}
"""

GTS_CONFIG: dict[str, Any] = {
    "scheduler_config": {"gpu": ["0", "1", "2"]},
    "global_config": {"num_run": 5, "num_epoch": 200},
    "test_config": [
        {"method": ["GAN", "ALI"], "num_packing": [1], "num_zmode": [1]},
        {"method": ["WGAN"], "num_packing": [3], "num_zmode": [1, 2]},
    ],
}


def test_gpu_task_scheduler_example_as_a_yaml_file(tmp_path: Path) -> None:
    path = tmp_path / "pacgan.yaml"
    path.write_text(GTS_YAML)
    loaded = load_sweep(path)
    points = expand(loaded.spec)
    assert [dict(p.params) for p in points] == GTS_POINTS
    assert points[3].command == (
        "python main.py --method WGAN --packing 3 --zmode 2"
        " --out results/pacgan/method=WGAN,num_packing=3,num_zmode=2"
    )
    assert loaded.options == SubmitOptions(
        gpus=2,
        mem=10 * 2**30,
        priority=5,
        retries=1,
        timeout=5400.0,
        max_parallel=3,
        project="gan",
        env={"SEED": "1", "MODE": "fast"},
    )
    assert loaded.path == str(path)


def test_gpu_task_scheduler_example_as_a_config_dict() -> None:
    spec = from_config(GTS_CONFIG)
    points = expand(spec)
    assert [dict(p.params) for p in points] == GTS_POINTS
    assert spec.command is None and spec.results_dir == "results"
    # Its folder names, as GPU Task Scheduler writes them: an earlier run's are recognised.
    assert points[0].folder == "method-GAN,num_packing-1,num_zmode-1"


def test_config_dict_scheduler_options_and_ranges() -> None:
    config = {
        "scheduler_config": {
            "gpu": [["0", "1"]],
            "result_root_folder": "out",
            "test_config_string_indicator": "-",
            "log_file": "worker.log",
        },
        "global_config": {"epoch": 3},
        "test_config": [{"run": range(3), "coe": [1.0, 10.0]}],
    }
    points = expand(from_config(config, name="cr", command="python t.py --run {run}"))
    assert len(points) == 6
    assert points[1].run_dir == "out/run-0,coe-10.0"
    assert points[1].command == "python t.py --run 0"
    assert [p.folder for p in expand(from_config({}))] == ["point_0"]


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"test_confg": []}, "unknown key 'test_confg'"),
        ({"test_config": [{"method": "GAN"}]}, r"test_config\[0\]\.method must be a list"),
        ({"global_config": [1]}, "global_config must be a dict"),
        ({"test_config": [{"a": []}]}, r"config: grid\.a: empty list"),
    ],
)
def test_config_dict_errors(config: dict[str, Any], message: str) -> None:
    with pytest.raises(SweepFileError, match=message):
        from_config(config)


def test_a_toml_file_gives_the_same_points() -> None:
    toml = """
command = "python main.py --method {method}"
[fixed]
num_run = 5
num_epoch = 200
[[grid]]
method = ["GAN", "ALI"]
num_packing = [1]
num_zmode = [1]
[[grid]]
method = ["WGAN"]
num_packing = [3]
num_zmode = [1, 2]
"""
    loaded = parse_sweep(toml, "sweeps/pacgan.toml")
    assert [dict(p.params) for p in expand(loaded.spec)] == GTS_POINTS
    assert loaded.spec.name == "pacgan" and loaded.spec.results_path == "results/pacgan"
    assert loaded.options == SubmitOptions()


def test_random_search_file_is_reproducible() -> None:
    text = """
command: train --lr {lr} --opt {opt} --layers {layers} --bs {bs}
grid: {bs: [32, 64]}
random:
  lr: {loguniform: [1e-5, 1e-2]}
  opt: {choice: [adam, sgd]}
  layers: {int: [1, 4]}
samples: 6
seed: 11
exclude: "opt == 'sgd' and layers > 3"
separators: {item: '+', kv: '-'}
"""
    spec = parse_sweep(text, "r.yaml").spec
    points = expand(spec)
    assert len(points) == 6
    assert [p.command for p in points] == [p.command for p in expand(spec)]
    assert all(1e-5 <= p.params["lr"] <= 1e-2 for p in points)
    assert not any(p.params["opt"] == "sgd" and p.params["layers"] > 3 for p in points)
    assert re.fullmatch(
        r"bs-\d+\+lr-[0-9.e_]+\+opt-\w+\+layers-\d(~[0-9a-f]{8})?", points[0].folder
    )


def test_yaml_reads_exponent_floats_as_numbers_and_exclude_lists() -> None:
    text = "grid:\n  lr: [1e-5, 1.0e-3, 2E2]\n  bs: [1, 2]\nexclude:\n  - {lr: 1e-5, bs: 2}\n"
    spec = parse_sweep(text, "s.yml").spec
    assert spec.grids[0]["lr"] == (1e-5, 1e-3, 200.0)
    assert len(expand(spec)) == 5


def test_yaml_reads_a_time_of_day_as_the_text_it_shows_as_yaml_1_2_does() -> None:
    # YAML 1.1 read 22:00 as 1320 (base 60): the command got `--at 1320`.
    text = "command: run --at {at} --x {x}\nfixed: {at: 22:00}\ngrid: {x: [1:30, 1:30.5, 90]}\n"
    spec = parse_sweep(text, "s.yaml").spec
    assert spec.fixed == {"at": "22:00"}
    assert spec.grids[0]["x"] == ("1:30", "1:30.5", 90)
    assert [p.command for p in expand(spec)][:2] == [
        "run --at 22:00 --x 1:30",
        "run --at 22:00 --x 1:30.5",
    ]
    numbers = "grid: {x: [12, -3, 1.5, .5, 1e5, 2E-2, 1.0e-3]}\n"
    read = parse_sweep(numbers, "s.yaml").spec.grids[0]["x"]
    assert read == (12, -3, 1.5, 0.5, 1e5, 2e-2, 1e-3)  # numbers as they were


def test_yaml_keeps_a_whole_number_not_in_plain_decimal_digits_as_the_text_written() -> None:
    # YAML 1.1 read 0755 as 493 (octal), 007 as 7, 0x1F as 31 and 1_000 as 1000: the commands
    # ran `--mode 493` and `--id 7`. The values are the command's arguments, as written.
    # `+5` and `-0` too, as `sweep -p x +5` keeps them (as numbers, they were 5 and 0).
    written = ["0755", "007", "-007", "00", "0o17", "0x1F", "0b11", "1_000", "1_000.5", "1:30"]
    written += ["+5", "-0"]
    text = f"command: run --v {{v}}\ngrid:\n  v: [{', '.join(written)}]\n"
    spec = parse_sweep(text, "s.yaml").spec
    assert spec.grids == ({"v": tuple(written)},)
    assert [p.command for p in expand(spec)] == [f"run --v {v}" for v in written]
    assert [p.folder for p in expand(spec)][:9] == [f"v={v}" for v in written[:9]]
    # Plain decimal stays a number; a float is one too (YAML 1.2's forms: `-.5` was text
    # while `.5` was a number), and runs as Python writes it (`1e-3` as 0.001).
    plain = "command: run {x}\ngrid: {x: [0, -3, 12, 1e-3, .5, -.5, +.5e2, 1., 01.5]}\n"
    spec = parse_sweep(plain, "s.yaml").spec
    assert spec.grids[0]["x"] == (0, -3, 12, 0.001, 0.5, -0.5, 50.0, 1.0, 1.5)
    commands = [p.command for p in expand(spec)]
    assert commands[3:7] == ["run 0.001", "run 0.5", "run -0.5", "run 50.0"]
    fixed = parse_sweep("fixed: {id: 007, mask: 0x1F}\ngrid: {x: [1]}\n", "s.yaml").spec.fixed
    assert fixed == {"id": "007", "mask": "0x1F"}


@pytest.mark.parametrize(
    ("line", "where", "value"),
    [
        ("gpus: 01", "gpus", "01"),
        ("seed: 0x1F", "seed", "0x1F"),
        ("priority: +5", "priority", "+5"),
        ("random: {y: {int: [1, 1_000]}}", "random.y.int[1]", "1_000"),
        ("random: {y: {uniform: [0o1, 2]}}", "random.y.uniform[0]", "0o1"),
    ],
)
def test_an_option_that_takes_a_number_says_a_number_kept_as_text_is_text(
    line: str, where: str, value: str
) -> None:
    # Before, pydantic's `Input should be a valid integer`, of what reads as one.
    with pytest.raises(SweepFileError) as caught:
        parse_sweep(f"command: echo {{x}}\ngrid: {{x: [1]}}\n{line}\nsamples: 1\n", "s.yaml")
    assert str(caught.value) == (
        f"s.yaml:3: {where}: {value!r} is text, not a number: write it in decimal digits,"
        " unquoted, without a leading zero or a plus sign (a sweep file keeps 007, +5, 0x1F"
        " and 1_000 as written)"
    )


@pytest.mark.parametrize(
    ("text", "line", "key", "read_as"),
    [
        ("true: 1\ngrid: {a: [1]}\n", 1, "true", "true"),
        ("command: echo {a}\ngrid:\n  a: [1]\n  false: [2]\n", 4, "false", "false"),
        ("grid: {a: [1]}\nfixed:\n  opts: {True: 1}\n", 3, "True", "true"),
        ("grid: {a: [1]}\nfixed: {FALSE: 1}\n", 2, "FALSE", "false"),
    ],
)
def test_a_key_yaml_reads_as_true_or_false_is_refused_saying_to_quote_it(
    text: str, line: int, key: str, read_as: str
) -> None:
    # Was `s.yaml: : Keys should be strings` (no line), or a fixed value {False: 1}.
    with pytest.raises(SweepFileError) as caught:
        parse_sweep(text, "s.yaml")
    assert str(caught.value) == (
        f"s.yaml:{line}: key '{key}' is read as {read_as}, not as a name (unquoted, YAML reads"
        f" true and false as booleans): quote it: '{key}':"
    )


def test_yes_no_on_off_are_the_text_written_as_yaml_1_2_reads_them() -> None:
    # YAML 1.1 read them as true and false: `--flag True` and `--flag False` ran, and the
    # keys were refused as booleans.
    text = "command: run --flag {flag} {on}\ngrid:\n  flag: [on, off, yes, No]\n  on: [y]\n"
    spec = parse_sweep(text, "s.yaml").spec
    assert spec.grids == ({"flag": ("on", "off", "yes", "No"), "on": ("y",)},)
    assert [p.command for p in expand(spec)] == [
        "run --flag on y",
        "run --flag off y",
        "run --flag yes y",
        "run --flag No y",
    ]
    booleans = "command: run {b}\ngrid: {b: [true, False, TRUE, 'true']}\n"
    assert parse_sweep(booleans, "s.yaml").spec.grids == ({"b": (True, False, True, "true")},)


def test_a_sweep_without_shuffle_seed_leaves_the_seed_to_the_caller() -> None:
    spec = parse_sweep("grid: {a: [1, 2]}\nshuffle: true\n", "s.yaml").spec
    assert spec.seed is None and spec.needs_seed


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "name: x\ngrid:\n  lr: [1, 2]\nlrr: 3\n",
            r"s\.yaml:4: unknown key 'lrr'; known keys: name,",
        ),
        ("grid:\n  lr: [1]\nseparators:\n  item: ','\n  foo: 1\n", r":5: separators: unknown key"),
        (
            "random:\n  lr:\n    normal: [1, 2]\nsamples: 3\n",
            r":3: random\.lr: unknown key 'normal'",
        ),
        # pydantic's words were these lines' (`Input should be a valid list`): now the flags'.
        ("grid:\n  lr: 5\n", r"s\.yaml:2: grid\.lr: give a list \(\[5\] for one value\), not 5$"),
        ("grid:\n  - lr: [1]\n  - bs: 3\n", r":3: grid\[1\]\.bs: give a list \(\[3\] for one"),
        ("grid: {a: {b: 1}}\n", r":1: grid\.a: give a list, not a mapping$"),
        ("samples: '3'\ngrid: {a: [1]}\n", r":1: samples: '3' is text, not a number: write it"),
        ("samples: x\ngrid: {a: [1]}\n", r":1: samples: give a whole number, not 'x'$"),
        (
            "samples: 0\ngrid: {a: [1]}\n",
            r":1: samples: 0 is out of range: use a whole number from 1 up$",
        ),
        ("seed: true\ngrid: {a: [1]}\n", r":1: seed: give a whole number, not true$"),
        (
            "fixed: [1, 2]\n",
            r":1: fixed: give a mapping \(one `name: value` a line, or \{name: value\}\), not"
            " a list$",
        ),
        (
            "name: 5\n",
            r":1: name: give text \(quoted, '5', if it reads as something else\), not 5$",
        ),
        ("name: x\ngrid: []\n", r":2: grid: empty list"),
        ("grid: {}\n", r":1: grid: empty"),
        ("grid:\n  a: [1]\n  lr: []\n", r":3: grid\.lr: empty list of values"),
        ("grid:\n  - a: [1]\n  - lr: []\n", r":3: grid\[1\]\.lr: empty list of values"),
        (
            "command: python {lr} {bs}\ngrid:\n  lr: [1]\n",
            r":1: command: placeholder \{bs\} is not",
        ),
        ("grid:\n  lr: [1, 2\nname: x\n", r"s\.yaml:3: invalid YAML: while parsing a flow"),
        (
            "grid: {lr: [1]}\nexclude: \"__import__('os').system('x')\"\n",
            r":2: exclude: expression .*Call is not allowed",
        ),
        ("grid: {a: [1]}\nexclude: 5\n", r":2: exclude: give a list of partial points"),
        # Refused when expanded (by the daemon, which knows no file): they said `invalid
        # sweep: exclude: ...`, naming neither the file nor its line.
        (
            "grid: {a: [1, 2]}\nexclude: 'True'\n",
            r"^s\.yaml:2: exclude: expression 'True' removes every point of the grid \(2 of 2\)",
        ),
        (
            "grid: {a: [1, 2]}\nexclude: [{a: 1}, {a: 2}]\n",
            r"^s\.yaml:2: exclude: the list removes every point of the grid \(2 of 2\)",
        ),
        (
            "grid: {a: [1, 2]}\nexclude: 'a / 0 > 1'\n",
            r"^s\.yaml:2: exclude: expression 'a / 0 > 1' failed on \{'a': 1\}: division by zero$",
        ),
        ("grid: {a: [1]}\nexclude:\n  - b: 1\n", r":3: exclude\[0\]: b is not a parameter"),
        ("random:\n  lr: {loguniform: [-1, 1]}\nsamples: 2\n", r":2: random\.lr: loguniform"),
        ("random:\n  lr: {uniform: [0, 1], int: [1, 2]}\nsamples: 2\n", "exactly one of"),
        ("random:\n  lr: {uniform: [0, 1]}\n", r":1: random: distributions need `samples`"),
        ("grid:\n  index: [1]\n", r":2: grid\.index: reserved"),
        ("grid: {a: [1]}\nseparators: {item: /}\n", r":2: separators\.item: '/' must be"),
        ("mem: lots\n", r":1: mem: invalid size 'lots'"),
        ("mem: 10\n", r":1: mem: 10 is 10 bytes: give a unit"),  # 10 GiB was meant
        ("timeout: -5\n", r":1: timeout: invalid duration"),
        ("gpus: -1\n", r":1: gpus: -1 is out of range: use a whole number from 0 to 64$"),
        (
            "gpus: 65\n",
            r":1: gpus: 65 is out of range: use a whole number from 0 to 64$",
        ),  # (was taken)
        ("env: {A: [1]}\n", r":1: env\.A: give a string or a number, not a list"),
        ("- a\n", "must be a mapping"),
        ("", "must be a mapping"),
    ],
)
def test_yaml_errors_are_one_line_naming_file_line_and_key(text: str, message: str) -> None:
    with pytest.raises(SweepFileError, match=message) as caught:
        parse_sweep(text, "s.yaml")
    assert "\n" not in str(caught.value)
    assert str(caught.value).startswith("s.yaml")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("lrr = 1\n[grid]\nlr = [1, 2]\n", r"^s\.toml: unknown key 'lrr'"),
        ("[grid]\nlr = []\n", r"^s\.toml: grid\.lr: empty list"),
        ("a = \n", r"^s\.toml:1: invalid TOML: Invalid value \(column 5\)$"),
    ],
)
def test_toml_errors_name_the_key_path(text: str, message: str) -> None:
    with pytest.raises(SweepFileError, match=message):
        parse_sweep(text, "s.toml")


def test_file_level_errors(tmp_path: Path) -> None:
    with pytest.raises(SweepFileError, match="cannot read the sweep file"):
        load_sweep(tmp_path / "missing.yaml")
    with pytest.raises(SweepFileError, match=r"use \.yaml, \.yml, \.toml or \.json"):
        parse_sweep("grid: {a: [1]}", "sweep.txt")


def test_many_problems_are_counted_on_the_one_line() -> None:
    with pytest.raises(SweepFileError, match=r"\(2 more problems\)$"):
        parse_sweep("lrr: 1\nbss: 2\nfoo: 3\n", "s.yaml")
    with pytest.raises(SweepFileError, match=r"\(1 more problem\)$"):  # (was "problems")
        parse_sweep("lrr: 1\nbss: 2\n", "s.yaml")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "command: echo {lr} {bs}\nfixed:\n  lr: 0.1\n  lR: 0.2\ngrid: {bs: [1, 2]}\n",
            "s.yaml:4: fixed.lR: no placeholder of the command uses it, and it differs from {lr}"
            " only in case, _ or -: misspelt? give it as lr, or leave it out (placeholders:"
            " {lr}, {bs})",
        ),
        (  # (--epochs {epochs} forgotten in the command: every point ran the default)
            "command: python train.py --lr {lr}\nfixed: {epochs: 5}\ngrid: {lr: [1]}\n",
            "s.yaml:2: fixed.epochs: no placeholder of the command uses it, so it would reach no"
            " point (placeholders: {lr}): write {epochs} in the command, or leave the value out"
            " (a program that reads its values from the point's params.json is given the"
            " point's folder: {run_dir})",
        ),
        (
            "command: python train.py --lr {lr} --ep {epochs}\nfixed: {epochs: 5, epoch: 6}\n"
            "grid: {lr: [1]}\n",
            "s.yaml:2: fixed.epoch: no placeholder of the command uses it, so it would reach no"
            " point (did you mean epochs? placeholders: {lr}, {epochs}): write {epoch}",
        ),
        (  # given the folder, a program may read it from params.json: but not lR for lr
            "command: run {lr} --out {run_dir}\nfixed: {LR: 1}\ngrid: {lr: [1]}\n",
            "s.yaml:2: fixed.LR: no placeholder of the command uses it, and it differs from {lr}",
        ),
    ],
)
def test_a_fixed_value_no_placeholder_uses_is_refused_naming_its_line(
    tmp_path: Path, text: str, message: str
) -> None:
    # It was dropped without a word: the points ran the command without it (lR for lr: the
    # value meant to override the file's lr never reached a point).
    path = tmp_path / "s.yaml"
    path.write_text(text)
    with pytest.raises(SweepFileError) as refused:
        load_sweep(path)
    assert str(refused.value).startswith(f"{tmp_path}/{message}"), str(refused.value)


@pytest.mark.parametrize(
    "command",
    [
        "python main.py --method {method} --out {run_dir}",  # GPU Task Scheduler's way
        'python main.py --method {method} --out "$GPUHERD_JOB_DIR"',
        "python main.py --method {method} --runs {num_run} --epochs {num_epoch}",
    ],
)
def test_a_fixed_value_the_program_can_read_from_params_json_is_taken(
    tmp_path: Path, command: str
) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(
        f"command: {command}\nfixed: {{num_run: 5, num_epoch: 9}}\ngrid: {{method: [a]}}\n"
    )
    assert load_sweep(path).spec.fixed == {"num_run": 5, "num_epoch": 9}
