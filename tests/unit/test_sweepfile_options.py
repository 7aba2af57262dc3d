"""A sweep file's job options: every flag of `gpuherd sweep` that makes sense in a file, by
its name (`_` for `-`) and in its value forms, checked by the flags' own parsers; what is
the command line's only is refused, saying why."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from gpuherd.core.when import parse_begin
from gpuherd.sweepfile import SubmitOptions, SweepFileError, load_sweep, parse_sweep
from gpuherd.sweepfile_options import kept_options

GiB = 2**30
SPEC = "command: echo {x}\ngrid: {x: [1]}\n"

YAML = """\
only_gpus: 0,2
ram: 16GiB
oom_retry: true
exclusive: true
retry_delay: 30s
no_output_timeout: 10m
on_no_output: kill
grace: 1m
hold: true
order: longest-first
cwd: code
"""
TOML = """\
only_gpus = [2, 0]
ram = "16GiB"
oom_retry = true
exclusive = true
retry_delay = 30
no_output_timeout = "10m"
on_no_output = "kill"
grace = "60s"
hold = true
order = "longest-first"
cwd = "code"
"""
JSON = {
    "only_gpus": "0,2",
    "ram": 16 * GiB,  # a number of bytes, as --ram takes it
    "oom_retry": True,
    "exclusive": True,
    "retry_delay": "0:30",
    "no_output_timeout": 600,
    "on_no_output": "kill",
    "grace": "1m",
    "hold": True,
    "order": "longest-first",
    "cwd": "./code/",
}


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("s.yaml", SPEC + YAML),
        ("s.toml", 'command = "echo {x}"\n' + TOML + "[grid]\nx = [1]\n"),
        ("s.json", json.dumps({"command": "echo {x}", "grid": {"x": [1]}, **JSON})),
    ],
)
def test_every_format_takes_the_flags_values(tmp_path: Path, name: str, text: str) -> None:
    (tmp_path / "code").mkdir()
    (tmp_path / name).write_text(text)
    assert load_sweep(tmp_path / name).options == SubmitOptions(
        only_gpus=(0, 2),
        ram=16 * GiB,
        oom_retry=True,
        exclusive=True,
        retry_delay=30.0,
        no_output_timeout=600.0,
        on_no_output="kill",
        grace=60.0,
        hold=True,
        order="longest-first",
        cwd=str((tmp_path / "code").resolve()),
    )


def test_begin_is_read_as_the_flag_reads_it_when_the_file_is_read() -> None:
    before = time.time()
    later = parse_sweep(SPEC + 'begin: "+2h"\n', "s.yaml").options.begin
    assert later is not None and before + 7200 <= later <= time.time() + 7200
    tonight = parse_sweep(SPEC + "begin: '22:00'\n", "s.yaml").options.begin
    assert tonight == parse_begin("22:00", time.time())  # the next 22:00, as --begin 22:00
    # Unquoted too: read as YAML 1.2 reads it (YAML 1.1 read 1320, base 60, refused).
    unquoted = parse_sweep(SPEC + "begin: 22:00\n", "s.yaml").options.begin
    assert unquoted == parse_begin("22:00", time.time())
    assert parse_sweep(SPEC + 'begin: "2030-01-02T03:04"\n', "s.yaml").options.begin == (
        parse_begin("2030-01-02T03:04", 0)
    )


def test_a_relative_cwd_is_the_files_folder_s_not_the_submitter_s(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "project" / "code").mkdir(parents=True)
    (tmp_path / "project" / "sweeps").mkdir()
    (tmp_path / "elsewhere").mkdir()
    path = tmp_path / "project" / "sweeps" / "s.yaml"
    path.write_text(SPEC + "cwd: ../code\n")
    monkeypatch.chdir(tmp_path / "elsewhere")
    assert load_sweep(os.path.relpath(path)).options.cwd == str(tmp_path / "project" / "code")
    path.write_text(SPEC + "cwd: .\n")
    assert load_sweep(path).options.cwd == str(tmp_path / "project" / "sweeps")
    path.write_text(SPEC + f"cwd: {tmp_path / 'elsewhere'}\n")  # absolute: as it is
    assert load_sweep(path).options.cwd == str(tmp_path / "elsewhere")
    monkeypatch.setenv("HOME", str(tmp_path))
    path.write_text(SPEC + "cwd: ~/project\n")
    assert load_sweep(path).options.cwd == str(tmp_path / "project")


def test_left_out_keys_are_the_flags_defaults() -> None:
    options = parse_sweep(SPEC, "s.yaml").options
    assert options == SubmitOptions()
    assert (options.grace, options.order, options.on_no_output, options.cwd) == (
        None,  # the daemon's `config grace`
        "given",
        "flag",
        None,
    )


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("only_gpus: 0,x", r"only_gpus: invalid GPU index 'x' in '0,x': use GPU indices like"),
        ("only_gpus: [0, true]", r"only_gpus: \[0, True\] is not GPU indices: give a list"),
        ("only_gpus: [0, 5000]", r"only_gpus: GPU 5000 in '\[0, 5000\]' is not a GPU index: at"),
        ("ram: 16", r"ram: 16 is 16 bytes: give a unit, e.g. 16GiB"),
        ("ram: lots", r"ram: invalid size 'lots'"),
        ("ram: [1]", r"ram: invalid size \[1\]: use a value like 24GiB"),
        ("oom_retry: 1", r"oom_retry: give true or false, not 1$"),
        ("exclusive: 'yes please'", r"exclusive: give true or false, not 'yes please'$"),
        # YAML 1.2's booleans: an unquoted yes is the text 'yes' (was true in YAML 1.1).
        ("hold: yes", r"hold: give true or false, not 'yes'$"),
        ("exclusive: on", r"exclusive: give true or false, not 'on'$"),
        ("retry_delay: soon", r"retry_delay: invalid duration 'soon'"),
        ("no_output_timeout: -5", r"no_output_timeout: invalid duration '-5'"),
        ("grace: [30]", r"grace: invalid duration \[30\]: use a value like 90s"),
        ("on_no_output: stop", r"on_no_output: 'stop' is not a choice: use 'flag' or 'kill'$"),
        ("hold: later", r"hold: give true or false, not 'later'$"),
        ("begin: 2200", r"begin: 2200 is not a time: give it as --begin takes it: '22:00'"),
        ("begin: 'at ten'", r"begin: invalid time 'at ten': use now, \+DURATION"),
        ("begin: '25:00'", r"begin: invalid time '25:00': no such time of day"),
        ("begin: 2030-01-02", r"begin: 2030-01-02 is a date: .*quote it"),
        ("order: fastest", r"order: 'fastest' is not a choice: use 'given' or 'longest-first'$"),
        ("cwd: no-such-folder", r"cwd: 'no-such-folder' is not a folder \(/.*/no-such-folder\)"),
        ("cwd: ''", r"cwd: empty: give a folder \('\.' is the sweep file's own\)"),
        ("cwd: 5", r"cwd: give text \(quoted, '5', if it reads as something else\), not 5$"),
        ("env: {1A: x}", r"env\.1A: '1A' is not an environment variable name: use letters, digits"),
        ("env: {A-B: 1}", r"env\.A-B: 'A-B' is not an environment variable name: .*not starting"),
        ("env: {'': 1}", r"env: '' is not an environment variable name"),
        ("hold: true\nbegin: '+1h'", r"begin: hold: true and begin are one choice, .*keep one"),
    ],
)
def test_a_bad_value_is_one_line_naming_file_line_and_key(line: str, message: str) -> None:
    with pytest.raises(SweepFileError, match=message) as caught:
        parse_sweep(SPEC + line + "\n", "s.yaml")
    at = 3 + line.count("\n")  # the line of the last key: `begin` after `hold`
    assert str(caught.value).startswith(f"s.yaml:{at}: ") and "\n" not in str(caught.value)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("after: 3", r":3: after: job ids are given on the command line \(--after 12, or --after"),
        ("after_any: last", r":3: after_any: job ids are given on the command line \(--after-any"),
        ("after-any: 3", r":3: after-any: job ids are given on the command line"),
        ("force: true", r":3: force: given on the command line \(--force\)"),
        ("'yes': true", r":3: yes: given on the command line \(--yes\)"),
        ("dry_run: true", r":3: dry_run: given on the command line \(--dry-run\)"),
    ],
)
def test_what_is_the_command_lines_only_is_refused_saying_so(line: str, message: str) -> None:
    with pytest.raises(SweepFileError, match=message):
        parse_sweep(SPEC + line + "\n", "s.yaml")


def test_a_key_spelt_as_its_flag_names_the_key_to_write() -> None:
    with pytest.raises(
        SweepFileError, match=r"^s\.yaml:3: unknown key 'retry-delay': write retry_delay"
    ):
        parse_sweep(SPEC + "retry-delay: 5s\n", "s.yaml")
    with pytest.raises(SweepFileError) as caught:
        parse_sweep(SPEC + "exclusiv: true\n", "s.yaml")
    assert "unknown key 'exclusiv' (did you mean 'exclusive'?); known keys: name, command," in str(
        caught.value
    )
    assert "exclusive, " in str(caught.value) and "begin, " in str(caught.value)


@pytest.mark.parametrize(
    ("key", "said"),
    [
        ("gpu: 1", ":3: unknown key 'gpu' (did you mean 'gpus'?); known keys: name, "),
        ("retry-dela: 5s", ":3: unknown key 'retry-dela' (did you mean 'retry_delay'?); "),
        ("separators: {itme: ','}", ":3: separators: unknown key 'itme' (did you mean 'item'?);"),
        ("random: {y: {unifrom: [0, 1]}}", ":3: random.y: unknown key 'unifrom' (did you mean "),
        ("lrr: 1", ":3: unknown key 'lrr'; known keys: "),  # nothing close: no guess
        ("parameters: 1", ":3: unknown key 'parameters'; known keys: "),  # (W&B's, not separators)
        ("program: x.py", ":3: unknown key 'program'; known keys: "),  # (W&B's, not ram)
        ("memory: 8GiB", ":3: unknown key 'memory' (did you mean 'mem'?); "),  # (it starts so)
        ("GPUS: 1", ":3: unknown key 'GPUS' (did you mean 'gpus'?); "),  # case aside
        ("random_seed: 1", ":3: unknown key 'random_seed'; known keys: "),  # no `random`
        ("env_file: a", ":3: unknown key 'env_file'; known keys: "),  # no `env`
    ],
)
def test_an_unknown_key_names_the_known_one_it_is_close_to(key: str, said: str) -> None:
    """As the Python API's keywords do (pyapi_checks.refuse_unknown): `gpu: 1` said only
    `unknown key 'gpu'`, and the list of 34 keys."""
    with pytest.raises(SweepFileError) as caught:
        parse_sweep(SPEC + key + "\n", "s.yaml")
    assert str(caught.value).startswith("s.yaml" + said), caught.value


def test_an_option_given_replaces_the_files_and_those_of_its_choice() -> None:
    options = SubmitOptions(hold=True, grace=30.0, on_no_output="kill", env={"A": "1"})
    kept = kept_options(options, ["begin", "kill_on_no_output"])
    assert "hold" not in kept and "begin" not in kept and "on_no_output" not in kept
    assert (kept["grace"], kept["env"]) == (30.0, {"A": "1"})
    assert kept_options(options, ["grace"])["hold"] is True


def test_hold_and_begin_in_one_file_are_refused_at_begins_line_whatever_their_order() -> None:
    # Was refused by the daemon only, at submission, without the file's line.
    with pytest.raises(SweepFileError, match=r"^s\.yaml:3: begin: hold: true and begin are one"):
        parse_sweep(SPEC + "begin: '+1h'\nhold: true\n", "s.yaml")
    with pytest.raises(SweepFileError, match=r"^s\.toml: begin: hold: true and begin are one"):
        parse_sweep('command = "echo {x}"\nhold = true\nbegin = "+1h"\n[grid]\nx = [1]\n', "s.toml")
    assert parse_sweep(SPEC + "hold: false\nbegin: '+1h'\n", "s.yaml").options.begin


def test_an_env_variable_over_128_kib_is_refused_as_python_refuses_it() -> None:
    with pytest.raises(SweepFileError, match=r"^s\.yaml:3: env\.A: 'A' is 131,074 bytes with its"):
        parse_sweep(SPEC + f"env: {{A: {'x' * 131_072}}}\n", "s.yaml")
    assert parse_sweep(SPEC + f"env: {{A: {'x' * 131_069}}}\n", "s.yaml").options.env["A"]
