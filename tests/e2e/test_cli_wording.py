"""Mistakes that click used to word (`No such option '-1'`, `'high' is not a valid integer.`,
`Invalid value for '--begin': invalid --begin ...`) get gpuherd's one line: the option first,
then what is wrong,
what to do, exit status 2 as for every other usage error, and nothing done."""

from __future__ import annotations

import pytest
from test_cli_errors import BIG, run, shared

from conftest import Herd

__all__ = ["shared"]  # the module's daemon (job 1 held, job 2 succeeded), by name

EVERY_JOB = "gpuherd ls --all lists every job"
NEGATIVE = f"invalid job id '-1': job ids are positive numbers; {EVERY_JOB}"
BEGIN_FORMS = (
    "use now, +DURATION (+30m, +2h), a time of day (23:30) or a date and time (2026-11-26T02:00)"
)
GPU_FORMS = "use GPU indices like 0, 0-3 or 0,2"
ONLY_GPUS = {
    "9x": f"invalid GPU index '9x': {GPU_FORMS}",
    "-1": f"invalid GPU index '-1': {GPU_FORMS}",
    BIG: f"GPU {BIG} is not a GPU index: at most 4095",
}
ONLY_GPUS_VERBS = {  # what comes before --only-gpus, and after it
    "submit": ([], ["true"]),
    "sweep": (["true {x}", "-p", "x", "1"], []),
    "edit": (["1"], []),
}
DURATION_FORMS = (
    "use a number of seconds or a value like 90s, 10m, 2h, 1h30m, 2:00:00 ([D-]HH:MM:SS or MM:SS)"
)
SIZE_FORMS = "use bytes or a value like 512MiB, 24GiB, 1.5GiB (GB = 10**9 bytes, GiB = 2**30)"
BAD_VALUES = {  # an option taking a size or a duration: a bad value, and what is wrong with it
    "--mem": ("10XB", f"invalid size '10XB': {SIZE_FORMS}"),
    "--ram": ("10XB", f"invalid size '10XB': {SIZE_FORMS}"),
    "--timeout": ("5x", f"invalid duration '5x': {DURATION_FORMS}"),
    "--retry-delay": ("5x", f"invalid duration '5x': {DURATION_FORMS}"),
    "--grace": ("0", f"invalid duration '0': must be greater than zero; {DURATION_FORMS}"),
    "--no-output-timeout": ("5x", f"invalid duration '5x': {DURATION_FORMS}"),
}
SIZE_AND_DURATION_VERBS = {  # what comes before the option, and after it; which it takes
    "submit": ([], ["true"], list(BAD_VALUES)),
    "sweep": (["true {x}", "-p", "x", "1"], [], list(BAD_VALUES)),
    "edit": (["1"], [], ["--mem", "--ram", "--timeout", "--retry-delay", "--grace"]),
    "run": ([], ["true"], ["--mem", "--ram", "--timeout"]),
    "wait": ([], [], ["--timeout"]),
}
FAKE_FORMS = "use a count (4), sizes (2x24GiB,1x80GiB) or a .json state file"
NOT_AN_INDEX = "GPUs are numbered from 0 to 4095, as `gpuherd gpus` lists them"


WORDING = [
    # A negative job id was taken for an option: "No such option '-1'".
    (["show", "-1"], NEGATIVE, "show"),
    *[([verb, "-1"], NEGATIVE, verb) for verb in ("log", "kill", "rm", "retry", "wait")],
    *[([verb, "-1"], NEGATIVE, verb) for verb in ("hold", "release", "pause", "resume")],
    (["kill", "2", "-1"], NEGATIVE, "kill"),
    (["retry", "--hold", "-1"], NEGATIVE, "retry"),
    (["edit", "-1", "--gpus", "1"], NEGATIVE, "edit"),
    (["move", "-1", "--first"], NEGATIVE, "move"),
    (["move", "2", "--before", "-1"], NEGATIVE, "move"),
    (["priority", "-1", "5"], NEGATIVE, "priority"),
    (
        ["kill", "-3-5"],
        f"invalid job id '-3-5': job ids are positive numbers; {EVERY_JOB}",
        "kill",
    ),
    # After `--`, an id: refused by the id parser, without click's "Invalid value for IDS".
    (["kill", "--", "-1"], "invalid job id '-1': use ids like 5, 3-7,9 or 1 2 3", "kill"),
    # A word where a priority goes: "'high' is not a valid integer."
    (
        ["priority", "1", "high"],
        "a priority is a whole number, not 'high': higher runs first (the default is 0), "
        "e.g. gpuherd priority 1 10",
        "priority",
    ),
    (
        ["submit", "-p", "1.5", "--", "true"],
        "--priority takes a whole number, not '1.5': higher runs first (the default is 0), "
        "e.g. -p 10",
        "submit",
    ),
    (
        ["sweep", "true {x}", "-p", "x", "1", "--priority", "high"],
        "--priority takes a whole number, not 'high': higher runs first (the default is 0), "
        "e.g. --priority 10",
        "sweep",
    ),
    # Attempts are numbered from 1: "0 is not in the range x>=1."
    (
        ["log", "--attempt", "0", "2"],
        "--attempt 0: attempts are numbered from 1; job 2's latest is 1 (what `gpuherd log 2` "
        "shows)",
        "log",
    ),
    (
        ["log", "1", "--attempt", "0"],
        "--attempt 0: attempts are numbered from 1; job 1 has not started yet",
        "log",
    ),
    (
        ["log", "2", "--attempt", "x"],
        "--attempt takes a whole number, not 'x': attempts are numbered from 1 (gpuherd show "
        "lists them), e.g. --attempt 2",
        "log",
    ),
    # --begin, --env and --fake-gpus: option first, as every other bad value (they were
    # `invalid --begin 'tomorrow': ...`, the option inside the line).
    (
        ["submit", "--begin", "tomorrow", "true"],
        f"--begin: invalid time 'tomorrow': {BEGIN_FORMS}",
        "submit",
    ),
    (
        ["sweep", "true {x}", "-p", "x", "1", "--begin", "+5x"],
        f"--begin: invalid time '+5x': {BEGIN_FORMS}",
        "sweep",
    ),
    (
        ["edit", "1", "--begin", "25:00"],
        f"--begin: invalid time '25:00': no such time of day; {BEGIN_FORMS}",
        "edit",
    ),
    (
        ["submit", "--env", "SEED", "true"],
        "--env: invalid variable 'SEED': use NAME=VALUE, e.g. --env SEED=1",
        "submit",
    ),
    (
        ["sweep", "true {x}", "-p", "x", "1", "--env", "1X=2"],
        "--env: invalid variable '1X=2': '1X' is not an environment variable name: use letters, "
        "digits and _, not starting with a digit (e.g. SEED)",
        "sweep",
    ),
    *[
        (
            [*verb.split(), "--fake-gpus", "2y24GiB", *after],
            f"--fake-gpus: invalid item '2y24GiB': {FAKE_FORMS}",
            verb,
        )
        for verb, after in (("daemon start", []), ("run", ["jobs.txt"]))  # (no file: said after)
    ],
    (
        ["daemon", "start", "--fake-gpus", "2x24GiB,,1"],
        f"--fake-gpus: empty item in '2x24GiB,,1': {FAKE_FORMS}",
        "daemon start",
    ),
    # A number too large got the hint for a word too: "..., or last (the job submitted last)".
    (
        ["submit", "--after", BIG, "true"],
        f"--after: job id {BIG} is too large (at most 2**63 - 1)",
        "submit",
    ),
    (
        ["edit", "1", "--after-any", BIG],
        f"--after-any: job id {BIG} is too large (at most 2**63 - 1)",
        "edit",
    ),
    (
        ["submit", "-a", "lats", "true"],
        # Not "or 1 2 3": an option's value is one word (`--after 1 2 3` is refused).
        "--after: invalid job id 'lats': use ids like 5 or 3-7,9 (comma-separated), or last"
        " (the job submitted last)",
        "submit",
    ),
    # --only-gpus's own words, without click's "Invalid value for '--only-gpus':" before them,
    # named as daemon start's `--gpus: invalid GPU index ...`.
    *[
        ([verb, *before, "--only-gpus", given, *after], f"--only-gpus: {said}", verb)
        for verb, (before, after) in ONLY_GPUS_VERBS.items()
        for given, said in ONLY_GPUS.items()
    ],
    # Sizes and durations: click's "Invalid value for '--timeout': invalid duration ...".
    *[
        ([verb, *before, flag, BAD_VALUES[flag][0], *after], f"{flag}: {BAD_VALUES[flag][1]}", verb)
        for verb, (before, after, flags) in SIZE_AND_DURATION_VERBS.items()
        for flag in flags
    ],
    # Click's "Invalid value for 'INDEX': 99999999999999999999 is not in the range 0<=x<=4095."
    *[
        (["gpus", verb, given], f"invalid GPU index {given!r}: {NOT_AN_INDEX}", f"gpus {verb}")
        for verb, given in (("drain", BIG), ("add", BIG), ("add", "x"))
    ],
    # drain takes several GPUs, as remove does: what it takes is said so.
    (
        ["gpus", "drain", "x"],
        "invalid GPU index 'x': use GPU indices like 0, 0-3 or 0,2",
        "gpus drain",
    ),
    # Counts: click's "-1 is not in the range x>=0." and "'x' is not a valid integer range."
    (
        ["submit", "--retries", "-1", "true"],
        "--retries: -1 is out of range: use a whole number from 0 up",
        "submit",
    ),
    (
        ["submit", "-g", "65", "true"],
        "--gpus: 65 is out of range: use a whole number from 0 to 64",
        "submit",
    ),
    (
        ["edit", "1", "--gpus", "x"],
        "--gpus takes a whole number of GPUs, not 'x': e.g. --gpus 2",
        "edit",
    ),
    (["ls", "--limit", "0"], "--limit: 0 is out of range: use a whole number from 1 up", "ls"),
    # Checked before a daemon is started (the daemon refused it once the home was made and
    # its GPUs remembered: `ls` then said to start it again "as the last one did").
    (
        ["daemon", "start", "--fake-gpus", "1", "--listen", "x"],
        "--listen: invalid listen address 'x': use HOST:PORT, e.g. 127.0.0.1:8888",
        "daemon start",
    ),
    (
        ["daemon", "start", "--listen", "127.0.0.1:99999"],
        "--listen: invalid port in listen address '127.0.0.1:99999': use 0-65535",
        "daemon start",
    ),
    # Past 64 bits: said by the CLI, not the daemon's "invalid request: query.limit: ...".
    (["ls", "--limit", BIG], f"--limit: {BIG} is too large (at most 2**63 - 1)", "ls"),
    (
        ["submit", "--retries", BIG, "true"],
        f"--retries: {BIG} is too large (at most 2**63 - 1)",
        "submit",
    ),
    (
        ["sweep", "status", "s", "--limit", BIG],
        f"--limit: {BIG} is too large (at most 2**63 - 1)",
        "sweep status",
    ),
    # A whole number the daemon stores (a priority, an attempt): said by the CLI too, not as
    # "priority N is too large" with exit 1, nor "invalid request: query.attempt: ...".
    (
        ["submit", "--priority", BIG, "true"],
        f"--priority: {BIG} is too large (at most 2**63 - 1)",
        "submit",
    ),
    (
        ["sweep", "true {x}", "-p", "x", "1", "--priority", f"-{BIG}"],
        f"--priority: -{BIG} is too small (at least -2**63)",
        "sweep",
    ),
    (["priority", "1", BIG], f"priority {BIG} is too large (at most 2**63 - 1)", "priority"),
    (["log", "2", "--attempt", BIG], f"--attempt: {BIG} is too large (at most 2**63 - 1)", "log"),
    (
        ["log", "2", "-n", "x"],
        "--lines: 'x' is not a whole number: use a whole number from 0 up",
        "log",
    ),
    (
        ["run", "--max-parallel", "0", "true"],
        "--max-parallel: 0 is out of range: use a whole number from 1 up",
        "run",
    ),
    (
        ["daemon", "start", "--slots", "0"],
        "--slots: 0 is out of range: use a whole number from 1 to 1024",
        "daemon start",
    ),
    (
        ["sweep", "true {x}", "-p", "x", "1", "--seed", "x"],
        "--seed takes a whole number, not 'x': the same seed draws the same points, e.g. --seed 7",
        "sweep",
    ),
    # Choices: click's "'stop' is not one of 'flag', 'kill'."
    (
        ["submit", "--on-no-output", "stop", "true"],
        "--on-no-output: 'stop' is not a choice: use flag or kill",
        "submit",
    ),
    (
        ["clean", "--state", "held"],
        "--state: 'held' is not a choice: use one of cancelled, failed, killed, lost, succeeded",
        "clean",
    ),
    # A state: the daemon's "unknown state 'x': ..." (exit 1) did not name the option.
    (
        ["ls", "--state", "faild"],
        "--state: 'faild' is not a choice: use one of queued, held, running, paused, succeeded, "
        "failed, killed, cancelled, lost",
        "ls",
    ),
    (
        ["sweep", "status", "s", "--state", "faild"],
        "--state: 'faild' is not a choice: use one of queued, held, running, paused, succeeded, "
        "failed, killed, cancelled, lost, done, missing",
        "sweep status",
    ),
    (
        ["daemon", "start", "--executor", "slurm"],
        "--executor: 'slurm' is not a choice: use local or ray",
        "daemon start",
    ),
    # A folder: click's "Directory '/nonexistent' does not exist."
    (
        ["submit", "--cwd", "/nonexistent", "true"],
        "--cwd: directory '/nonexistent' does not exist: give a folder that exists",
        "submit",
    ),
]


@pytest.mark.parametrize(
    ("args", "said", "command"), WORDING, ids=lambda v: " ".join(v) if isinstance(v, list) else ""
)
def test_mistakes_get_gpuherds_one_line_and_exit_2(
    shared: Herd, args: list[str], said: str, command: str
) -> None:
    before = shared.all_jobs()
    proc = shared.cli(*args, check=False)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == f"gpuherd: error: {said} (see gpuherd {command} --help)\n"
    assert shared.all_jobs() == before


@pytest.mark.parametrize(("entry", "name"), [("herd", "herd"), ("gpuherd", "gpuherd")])
def test_a_flagged_refusal_and_its_hint_say_the_name_typed(
    shared: Herd, entry: str, name: str
) -> None:
    # Under herd, `--timeout` was click's "Invalid value for"; the hints quoted `gpuherd`.
    said = {
        ("submit", "--timeout", "5x", "true"): (
            f"--timeout: invalid duration '5x': {DURATION_FORMS} (see {name} submit --help)"
        ),
        ("submit", "--timeout"): f"--timeout: no value given (see {name} submit --help)",
        ("daemon", "start", "--fake-gpus"): (
            f"--fake-gpus: no value given (see {name} daemon start --help)"
        ),
        ("gpus", "drain", BIG): (
            f"invalid GPU index '{BIG}': GPUs are numbered from 0 to 4095, as `{name} gpus` "
            f"lists them (see {name} gpus drain --help)"
        ),
        ("show", "x"): (
            f"invalid job id 'x': give a number, e.g. {name} show 3; {name} ls --all lists every "
            f"job (see {name} show --help)"
        ),
        ("log", "2", "--attempt", "x"): (
            "--attempt takes a whole number, not 'x': attempts are numbered from 1 "
            f"({name} show lists them), e.g. --attempt 2 (see {name} log --help)"
        ),
        ("ls", "--sweep", ""): (
            f"--sweep is empty: give a sweep's name ({name} sweep ls lists them), or leave "
            f"--sweep out (see {name} ls --help)"
        ),
        ("status",): (
            f"No such command 'status': {name} ls lists the jobs, --json for scripts (pueue's "
            f"status); {name} daemon status and {name} gpus show the daemon and the GPUs "
            f"(gpulimit's status) (see {name} --help)"
        ),
    }
    before = shared.all_jobs()
    for args, line in said.items():
        proc = run(shared, entry, *args)
        assert (proc.returncode, proc.stdout) == (2, ""), args
        assert proc.stderr == f"{name}: error: {line}\n"
    assert shared.all_jobs() == before


MISSING_VALUES = {  # an option given last without its value: the command whose option it is
    ("ls", "--limit"): "ls",
    ("submit", "--timeout"): "submit",
    ("sweep", "status", "s", "--state"): "sweep status",
    ("sweep", "true {x}", "-p", "x", "1", "--begin"): "sweep",  # (its hidden `submit`)
    ("daemon", "start", "--fake-gpus"): "daemon start",
    ("edit", "1", "--env"): "edit",
    ("run", "--prefix"): "run",
}


@pytest.mark.parametrize(
    ("args", "command"), MISSING_VALUES.items(), ids=[" ".join(a) for a in MISSING_VALUES]
)
def test_an_option_given_last_without_its_value_is_one_line(
    shared: Herd, args: tuple[str, ...], command: str
) -> None:
    # Click said "Option '--limit' requires an argument.": not the option first, as every
    # other mistake of an option's value is said; then it lacked the `(see ... --help)` they
    # have (click's parser gives that error no command).
    proc = shared.cli(*args, check=False)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == (
        f"gpuherd: error: {args[-1]}: no value given (see gpuherd {command} --help)\n"
    )
