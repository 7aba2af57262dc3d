"""A sweep file's job options (--exclusive, --ram, --grace, --hold, --begin, --cwd, ... as
keys) reach its points' jobs through a real daemon; the command line's flags and the Python
API's keywords override them."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import Herd
from gpuherd.core.sweep import SweepSpec
from gpuherd.pyapi import SweepWarning, connect, make_spec

GiB = 2**30

# In work/sweeps/; its cwd is work/code (relative to the file's folder, not the submitter's).
OPTIONS_YAML = """\
command: pwd > {run_dir}/where.txt
grid: {x: [1, 2]}
cwd: ../code
only_gpus: 1,2
exclusive: true
ram: 2GiB
oom_retry: true
retry_delay: 5s
no_output_timeout: 10m
on_no_output: kill
grace: 30s
hold: true
priority: 3
project: opts
env: {A: file, B: file}
"""


def write_sweep(work: Path, name: str, text: str) -> Path:
    (work / "sweeps").mkdir(exist_ok=True)
    (work / "code").mkdir(exist_ok=True)
    path = work / "sweeps" / name
    path.write_text(text)
    return path


def submit(herd: Herd, work: Path, *args: str) -> list[dict[str, Any]]:
    """The points' jobs (`gpuherd show --json` of each) of a `gpuherd sweep` run in `work`."""
    answer = json.loads(herd.cli("sweep", *args, "--json", cwd=work).stdout)
    return [herd.json("show", str(job_id)) for job_id in answer["ids"]]


def test_a_sweep_files_keys_are_its_points_options(shared_daemon: Herd, shared_work: Path) -> None:
    daemon, work = shared_daemon, shared_work
    write_sweep(work, "opts.yaml", OPTIONS_YAML)
    jobs = submit(daemon, work, "sweeps/opts.yaml")
    code = str((work / "code").resolve())
    for job in jobs:
        assert job["state"] == "held" and job["reason"] == "held"
        assert (job["exclusive"], job["ram"], job["grace"]) == (True, 2 * GiB, 30.0)
        assert (job["only_gpus"], job["retry_delay"], job["no_output_timeout"]) == ([1, 2], 5, 600)
        assert (job["kill_on_no_output"], job["oom_retries"] > 0) == (True, True)
        assert (job["priority"], job["project"], job["cwd"]) == (3, "opts", code)
        assert job["env_overrides"] == {"A": "file", "B": "file"}
        assert job["job_dir"].startswith(code + "/results/opts/")  # results_dir from the cwd
    daemon.cli("release", *(str(job["id"]) for job in jobs))
    ended = [daemon.wait_state(job["id"], "succeeded", "failed") for job in jobs]
    assert [job["state"] for job in ended] == ["succeeded", "succeeded"]
    assert all(set(job["gpus"]) <= {1, 2} and len(job["gpus"]) == 1 for job in ended)
    assert [(Path(j["job_dir"]) / "where.txt").read_text().strip() for j in ended] == [code] * 2


def test_flags_override_the_files_keys(shared_daemon: Herd, shared_work: Path) -> None:
    daemon, work = shared_daemon, shared_work
    write_sweep(work, "opts.yaml", OPTIONS_YAML)
    write_sweep(work, "later.yaml", OPTIONS_YAML.replace("hold: true", 'begin: "+1h"'))
    (work / "elsewhere").mkdir()
    before = time.time()
    jobs = submit(daemon, work, "sweeps/later.yaml", "--name", "flags", "--grace", "5s")
    assert [job["grace"] for job in jobs] == [5.0, 5.0]
    assert all(job["reason"].endswith("(--begin)") for job in jobs)
    assert all(3500 < job["begin"] - before < 3700 for job in jobs)  # the file's +1h
    flags = ["--ram", "1GiB", "--only-gpus", "3", "--env", "A=flag", "--cwd", "elsewhere"]
    jobs = submit(daemon, work, "sweeps/opts.yaml", "--name", "flags2", "--begin", "+3h", *flags)
    for job in jobs:
        assert (job["ram"], job["only_gpus"]) == (GiB, [3])
        assert job["cwd"] == str((work / "elsewhere").resolve())
        assert job["env_overrides"] == {"A": "flag", "B": "file"}  # name by name
        # --begin replaces the file's hold (one choice: held until released, or until then)
        assert 3 * 3600 - 100 < job["begin"] - before < 3 * 3600 + 100
        assert (job["exclusive"], job["grace"], job["state"]) == (True, 30.0, "held")  # file's
    jobs = submit(daemon, work, "sweeps/later.yaml", "--name", "flags3", "--hold")
    assert [(job["begin"], job["reason"]) for job in jobs] == [(None, "held")] * 2


def test_a_switchs_no_form_turns_off_the_files_true(shared_daemon: Herd, shared_work: Path) -> None:
    # The file says hold, exclusive and oom_retry: true; only editing it turned them off.
    daemon, work = shared_daemon, shared_work
    write_sweep(work, "opts.yaml", OPTIONS_YAML)
    off = ["--no-hold", "--no-exclusive", "--no-oom-retry"]
    jobs = submit(daemon, work, "sweeps/opts.yaml", "--name", "off", *off)
    ended = [daemon.wait_state(job["id"], "succeeded", "failed") for job in jobs]
    assert [job["state"] for job in ended] == ["succeeded", "succeeded"]  # never held
    for job in ended:
        assert (job["exclusive"], job["oom_retries"], job["ram"]) == (False, None, 2 * GiB)


def test_python_keywords_override_a_files_keys(shared_daemon: Herd, shared_work: Path) -> None:
    daemon, work = shared_daemon, shared_work
    path = write_sweep(work, "py.yaml", OPTIONS_YAML.replace("pwd >", "sleep {x} >"))
    herd = connect(daemon.home, start=False)
    sweep = herd.sweep(path, hold=False, kill_on_no_output=False, grace="2s", priority=0)
    code = str((work / "code").resolve())
    for job_id in sweep.ids:  # hold=False: they run, where the file says
        job = daemon.wait_state(job_id, "succeeded", "failed")
        assert (job["state"], job["cwd"], job["exclusive"]) == ("succeeded", code, True)
        assert (job["grace"], job["kill_on_no_output"], job["priority"]) == (2.0, False, 0)
    # The file's `order: longest-first`: the point that ran longest (sleep 2) comes first;
    # order="given" keeps the grid's order.
    longest = path.with_name("longest.yaml")
    longest.write_text(path.read_text() + "name: py\norder: longest-first\n")
    assert [c.split()[1] for c in herd.sweep(longest, force=True, dry_run=True).commands] == [
        "2",
        "1",
    ]
    given = herd.sweep(longest, force=True, dry_run=True, order="given").commands
    assert [c.split()[1] for c in given] == ["1", "2"]


def test_a_bad_key_is_one_line_before_anything_is_submitted(
    shared_daemon: Herd, shared_work: Path
) -> None:
    daemon, work = shared_daemon, shared_work
    write_sweep(work, "bad.yaml", "command: echo {x}\ngrid: {x: [1]}\nafter: 3\n")
    done = daemon.cli("sweep", "sweeps/bad.yaml", check=False, cwd=work)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.startswith("gpuherd: error: sweeps/bad.yaml:3: after: job ids are given")
    assert done.stderr.count("\n") == 1
    assert "bad" not in [sweep["name"] for sweep in daemon.json("sweep", "ls")]


def test_options_that_contradict_are_refused_as_submit_refuses_them(
    shared_daemon: Herd, shared_work: Path
) -> None:
    # They reached the daemon and came back in its field names, exit 1 (`kill_on_no_output
    # (--on-no-output kill) needs no_output_timeout ...`); a file's values are named as its
    # keys, once the flags have overridden them (its `gpus: 0` mended by `--gpus 1`).
    daemon, work = shared_daemon, shared_work
    write_sweep(work, "cpu.yaml", "command: echo {x}\ngrid: {x: [1]}\ngpus: 0\nexclusive: true\n")
    write_sweep(work, "kill.yaml", "command: echo {x}\ngrid: {x: [1]}\non_no_output: kill\n")
    template = ["echo {x}", "-p", "x", "1"]
    refused = {
        (*template, "--on-no-output", "kill"): "--on-no-output kill needs --no-output-timeout D: "
        "how long a job may print nothing before it is stopped (e.g. --no-output-timeout 30m)",
        (*template, "--exclusive", "--gpus", "0"): "--exclusive with --gpus 0: a CPU-only job "
        "gets no GPU to itself; drop one of them",
        (*template, "--gpus", "0", "--mem", "1GiB"): "--mem with --gpus 0: a CPU-only job gets "
        "no GPU memory; drop one of them (--ram is host memory)",
        ("sweeps/cpu.yaml",): "exclusive: true with gpus: 0 in sweeps/cpu.yaml: a CPU-only job "
        "gets no GPU to itself; drop one of them",
        ("sweeps/cpu.yaml", "--mem", "1GiB", "--no-exclusive"): "--mem with gpus: 0 in "
        "sweeps/cpu.yaml: a CPU-only job gets no GPU memory; drop one of them (--ram is host "
        "memory)",
        ("sweeps/kill.yaml",): "on_no_output: kill in sweeps/kill.yaml needs no_output_timeout: "
        "how long a job may print nothing before it is stopped (e.g. `no_output_timeout: 30m` "
        "in the file, or --no-output-timeout 30m)",
    }
    for args, message in refused.items():
        done = daemon.cli("sweep", *args, check=False, cwd=work)
        assert (done.returncode, done.stdout) == (2, ""), args
        assert done.stderr == f"gpuherd: error: {message} (see gpuherd sweep --help)\n"
    assert not {"cpu", "kill"} & {sweep["name"] for sweep in daemon.json("sweep", "ls")}
    mended = [("sweeps/cpu.yaml", "--gpus", "1"), ("sweeps/kill.yaml", "--no-output-timeout", "1m")]
    for args in mended:
        (job,) = submit(daemon, work, *args)
        daemon.wait_state(job["id"], "succeeded", timeout=30)


def test_an_env_entry_naming_a_placeholder_is_warned_of_as_the_files(
    shared_daemon: Herd, shared_work: Path
) -> None:
    # The warning named `--env SEED={y}` and a `gpuherd sweep '...'` line, for a value the
    # user wrote as the file's `env:` entry: the dry run, the submission and Python alike.
    daemon, work = shared_daemon, shared_work
    spec = "name: seeded\ngrid: {y: [1]}\nenv: {SEED: '{y}'}\nhold: true\n"
    write_sweep(work, "env.yaml", "command: echo {y}\n" + spec)
    said = (
        "env: SEED={y} in sweeps/env.yaml: placeholders are filled in the command only, so each"
        " point gets '{y}' as it is; set the variable in the file's command instead (command:"
        " SEED={y} echo {y}) and drop SEED from the file's env"
    )
    for extra in (["--dry-run"], ["--dry-run", "--json"], []):
        done = daemon.cli("sweep", "sweeps/env.yaml", *extra, cwd=work)
        assert f"gpuherd: warning: {said}" in done.stderr.splitlines(), (extra, done.stderr)
    herd = connect(daemon.home, start=False)
    with pytest.warns(SweepWarning) as warned:
        herd.sweep(work / "sweeps" / "env.yaml", dry_run=True)
    assert said.replace("sweeps/", f"{work}/sweeps/") in [str(w.message) for w in warned]
    # `--env` over the file's entry is the flag's, said as one; a command that sets it already.
    flag = daemon.cli("sweep", "sweeps/env.yaml", "--env", "SEED={y}", "--dry-run", cwd=work)
    assert "gpuherd: warning: --env SEED={y}: placeholders are filled" in flag.stderr
    write_sweep(work, "sets.yaml", "command: SEED={y} echo {y}\n" + spec)
    sets = daemon.cli("sweep", "sweeps/sets.yaml", "--name", "sets", cwd=work)
    assert (
        "gpuherd: warning: env: SEED={y} in sweeps/sets.yaml: placeholders are filled in the"
        " command only, so the environment gets '{y}' as it is; the command sets SEED itself"
        " already, with each point's value: drop SEED from the file's env"
    ) in sets.stderr.splitlines()


def test_an_env_keyword_naming_a_placeholder_is_warned_of_in_pythons_words(
    shared_daemon: Herd, shared_work: Path
) -> None:
    # Python's env= was warned of as `--env SEED={y}`, with a `gpuherd sweep '...'` line.
    herd, work = connect(shared_daemon.home, start=False), shared_work
    said = "env={'SEED': '{y}'}: placeholders are filled in the command only, so "
    each = said + "each point gets '{y}' as it is; set the variable in the "
    write_sweep(work, "plain.yaml", "command: echo {y}\ngrid: {y: [1]}\n")
    cases: list[tuple[str | Path | SweepSpec, str]] = [
        (
            "echo {y}",
            each + "command instead and drop SEED from env=: herd.sweep('SEED={y} echo {y}', ...)",
        ),
        (
            "SEED={y} echo {y}",
            said + "the environment gets '{y}' as it is; the command sets SEED"
            " itself already, with each point's value: drop SEED from env=",
        ),
        (
            make_spec("spec", "echo {y}", {"y": [1]}, {}),
            each + "SweepSpec's command instead "
            "(command='SEED={y} echo {y}') and drop SEED from env=",
        ),
        (
            work / "sweeps" / "plain.yaml",
            each + "file's command instead (command: SEED={y} echo {y}) and drop SEED from env=",
        ),
    ]
    for command, warning in cases:
        params = None if isinstance(command, Path | SweepSpec) else {"y": [1]}
        with pytest.warns(SweepWarning) as warned:
            herd.sweep(command, params, env={"SEED": "{y}"}, name="pyenv", dry_run=True)
        messages = [str(w.message) for w in warned]
        assert warning in messages and not any("--env" in m for m in messages), command
