"""The installed console scripts (`gpuherd`, `herd`, `python -m gpuherd`): errors, JSON, id lists.

Every mistake gets one line on stderr starting with "gpuherd: error:", a non-zero exit, no
traceback, and leaves the queue as it was.

The console scripts are run as real processes where they are what is tested (the name typed,
the process's own standard streams); the other checks run `python -m gpuherd` forked by the
worker's fork server (entry "forked": tests/forks.py), the same program without an
interpreter's start and imports (~0.3 CPU-s a call here, ~100 calls).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import forks
from conftest import Herd, Recorder, wait_for
from gpuherd import __version__

BIN = Path(sys.executable).parent
ENTRY_POINTS = {
    "gpuherd": [str(BIN / "gpuherd")],
    "herd": [str(BIN / "herd")],
    "module": [sys.executable, "-m", "gpuherd"],
}


def run(herd: Herd, entry: str, *args: str) -> subprocess.CompletedProcess[str]:
    """`ARGS` through `entry`: an ENTRY_POINTS key (a real process), or "forked"."""
    if entry == "forked":
        return forks.gpuherd(list(args), env=herd.env, cwd=herd.home.parent, timeout=60)
    return subprocess.run(
        [*ENTRY_POINTS[entry], *args],
        env=herd.env,
        cwd=herd.home.parent,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Herd]:
    """One daemon for the read-only checks: job 1 held, job 2 succeeded."""
    herd = Herd(tmp_path_factory.mktemp("e2e") / "home")
    try:
        herd.start("--fake-gpus", "4")
        assert herd.submit("--hold", "--name", "held", "--", "true") == 1
        assert herd.submit("--", "true") == 2
        herd.wait_state(2, "succeeded")
        yield herd
    finally:
        herd.cleanup()


HOLD_WITH_BEGIN = [
    (
        "forked",
        [cmd, "--hold", "--begin", "+1h", *args],
        "give --hold (held until a release) or --begin (held until then), not both",
    )
    for cmd, args in (("submit", ["true"]), ("sweep", ["echo {x}", "-p", "x", "1"]))
]

ERRORS = [
    pytest.param("forked", ["show", "999"], "999", id="show-unknown-id"),
    pytest.param("forked", ["kill", "999"], "999", id="kill-unknown-id"),
    pytest.param("herd", ["log", "999"], "999", id="log-unknown-id"),
    pytest.param("forked", ["daemon", "start", "--gpus", "a,b"], "'a'", id="malformed-gpus"),
    pytest.param("module", ["priority", "1", "high"], "high", id="priority-not-a-number"),
    pytest.param("forked", ["submit", "--after", "999", "--", "true"], "999", id="after-unknown"),
    pytest.param("forked", ["submit", "--timeout", "2x", "--", "true"], "2x", id="bad-duration"),
    pytest.param("forked", ["submit", "--gpus", "9", "--", "true"], "9", id="never-fits"),
    pytest.param("forked", ["submit", "--env", "NOEQUALS", "--", "true"], "NOEQUALS", id="env"),
    pytest.param("forked", ["submit"], "command", id="submit-nothing"),
    pytest.param("forked", ["kill", "3-1"], "3-1", id="bad-range"),
    pytest.param("forked", ["move", "1"], "--first", id="move-nowhere"),
    pytest.param("forked", ["log", "2", "--attempt", "3"], "run once", id="log-no-attempt"),
    pytest.param("forked", ["submit", "--begin", "tomorrow", "true"], "use now, +", id="begin"),
    pytest.param("forked", ["submit", "--begin", "24:00", "true"], "24:00", id="begin-clock"),
    pytest.param("forked", ["daemon", "stop", "--drain", "--kill"], "not both", id="stop"),
    pytest.param("forked", ["submit", "-q", "--json", "true"], "not both", id="q-json"),
    pytest.param("forked", ["ls", "-q", "--json"], "not both", id="ls-q-json"),
    pytest.param("forked", ["sweep", "echo {x}", "-p", "x", "1", "-q", "--json"], "not", id="sq"),
    pytest.param("forked", ["submit", "--on-no-output", "kill", "true"], "needs", id="stall"),
    pytest.param(
        "forked",
        ["gpus", "add", "0", "--slots", "99999999999999999999"],
        "--slots: 99999999999999999999 is out of range: use a whole number from 1 to 1024",
        id="slots",
    ),
    # Missing ids as ranges: a line per million ids was 7.8 MB.
    pytest.param("forked", ["submit", "--after", "1-9999", "true"], "no job 3-9999 ", id="ar"),
    pytest.param("forked", ["submit", "--file", sys.executable], "not text", id="binary-file"),
    # Read until memory ran out: a line longer than any command is refused at its 128 KiB.
    pytest.param(
        "forked", ["submit", "--file", "/dev/zero"], "/dev/zero: line 1 is longer", id="endless"
    ),
    # GPU indices are capped as --only-gpus's are: these were taken, or failed in the daemon.
    pytest.param(
        "forked", ["daemon", "start", "--gpus", "9223372036854775807"], "at most 4095", id="big"
    ),
    pytest.param(
        "forked",
        ["gpus", "drain", "99999999999999999999"],
        "GPUs are numbered from 0 to 4095",
        id="drain",
    ),
    # Both --after count: only the last did, and the job would have waited for job 2 alone.
    pytest.param("forked", ["submit", "--after", "999", "--after", "2", "true"], "999", id="a2"),
    # Commands about one job: click said "'1-2' is not a valid integer range".
    pytest.param("forked", ["show", "1-2"], "show takes one job id, not '1-2'", id="show-ids"),
    pytest.param("herd", ["log", "1,2"], "log takes one job id, not '1,2'", id="log-ids"),
    pytest.param("forked", ["show", "x"], "invalid job id 'x': give a number", id="show-x"),
    pytest.param("forked", ["log", "0"], "invalid job id '0': ids start at 1", id="log-0"),
    # `priority IDS P` takes ids as the other verbs do; the ids without P are a mistake.
    pytest.param(
        "forked", ["priority", "3-7"], "no priority given: gpuherd priority IDS P", id="prio-1"
    ),
    pytest.param("forked", ["move", "1", "--before", "2-3"], "--before takes one", id="before"),
    # A negative value was "No such option '-1'": now the setting's own refusal.
    pytest.param(
        "forked", ["config", "set", "retries", "-1"], "retries: invalid count '-1'", id="cfg-r"
    ),
    pytest.param(
        "forked", ["config", "set", "keep-free", "-5%"], "invalid fraction '-5%'", id="cfg-kf"
    ),
    pytest.param(
        "forked", ["config", "set", "reserve-after", "-5m"], "must be greater", id="cfg-ra"
    ),
    # An empty filter (`--name "$RUN"`, RUN unset) listed "no jobs": refused.
    pytest.param("forked", ["ls", "--name", ""], "--name is empty", id="ls-name"),
    pytest.param("forked", ["ls", "-q", "--project", ""], "--project is empty", id="ls-project"),
    pytest.param("forked", ["ls", "--sweep", ""], "--sweep is empty", id="ls-sweep"),
    # An option's values given space-separated: the rest was queued as the command `1 -- true`.
    pytest.param(
        "forked",
        ["submit", "--after", "2", "1", "--", "true"],
        "the command starts '1 --': --after takes its ids comma-separated (--after 2,1)",
        id="after-spaced",
    ),
    pytest.param(
        "forked",
        ["submit", "-q", "--only-gpus", "0", "2", "3", "--", "true"],
        "'2 3 --': --only-gpus takes its GPU indices comma-separated (--only-gpus 0,2,3)",
        id="only-gpus-spaced",
    ),
    pytest.param(
        "forked",
        ["submit", "--hold", "2", "--", "true"],
        "'2 --': --after and --only-gpus take their values comma-separated",
        id="ids-after-a-flag",
    ),
    # Taken as 10 bytes: any number of such jobs shared a GPU.
    pytest.param(
        "forked", ["submit", "--mem", "10", "true"], "--mem 10 is 10 bytes: give a unit", id="mem"
    ),
    pytest.param(
        "forked",
        ["submit", "-g", "0", "--mem", "1GiB", "true"],
        "--mem with --gpus 0: a CPU-only job gets no GPU memory",
        id="cpu-mem",
    ),
    pytest.param(*HOLD_WITH_BEGIN[0], id="hold-begin"),
    pytest.param(*HOLD_WITH_BEGIN[1], id="sweep-hold-begin"),
    pytest.param(
        "forked",
        ["config", "set", "on-end", 'echo "unterminated'],
        "on-end: the hooks' shell /bin/sh cannot parse it: ",
        id="cfg-hook",
    ),
]


@pytest.mark.parametrize(("entry", "args", "names"), HOLD_WITH_BEGIN)
def test_hold_with_begin_is_a_command_line_mistake(
    shared: Herd, entry: str, args: list[str], names: str
) -> None:
    """Exit 2, as every mistake in the command line: the daemon's refusal exited 1."""
    proc = run(shared, entry, *args)
    assert (proc.returncode, names in proc.stderr) == (2, True), proc.stderr


@pytest.mark.parametrize(
    ("setting", "value", "said"),
    [
        (
            "max-running",
            "0",
            "max-running: invalid count '0': use a number from 1 to 2**63 - 1, or none (no cap)",
        ),
        (
            "project-limits",
            "p=0",
            "project-limits: invalid limit 'p=0': use PROJECT=N with N from 1 to 2**63 - 1, "
            "comma-separated (lr-sweep=2,eval=1), or none",
        ),
        # The largest count was said in its 19 digits (9223372036854775807).
        (
            "project-limits",
            "a=99999999999999999999",
            "project-limits: invalid limit 'a=99999999999999999999': use PROJECT=N with N from"
            " 1 to 2**63 - 1, comma-separated (lr-sweep=2,eval=1), or none",
        ),
        (
            "max-running",
            "99999999999999999999",
            "max-running: invalid count '99999999999999999999': use a number from 1 to"
            " 2**63 - 1, or none (no cap)",
        ),
        # An empty value (a script's unset `$HOOK`) turned the hook, or the limits, off.
        ("on-end", "", "on-end is empty: give a command, or none to turn the hook off"),
        (
            "project-limits",
            " ",
            "project-limits is empty: give PROJECT=N,... (lr-sweep=2,eval=1), or none for "
            "no limits",
        ),
        (
            "keep-free",
            "100%",
            "keep-free: invalid fraction '100%': use a percentage like 10% (from 0%, under "
            "100%), or a fraction like 0.1",
        ),
        (
            "nonesuch",
            "1",
            "unknown setting 'nonesuch': use one of foreign, keep-free, keep-ram, "
            "reserve-after, max-running, cpu-jobs, project-limits, retries, grace, on-end, "
            "max-log-size",
        ),
    ],
)
def test_a_setting_the_daemon_refuses_is_a_command_line_mistake(
    shared: Herd, setting: str, value: str, said: str
) -> None:
    """Exit 2 and the help tail, as for the values the CLI checks itself: the settings'
    rules are the daemon's, and its refusal exited 1."""
    before = run(shared, "forked", "config", "--json").stdout
    proc = run(shared, "forked", "config", "set", setting, value)
    assert (proc.returncode, proc.stdout, proc.stderr) == (
        2,
        "",
        f"gpuherd: error: {said} (see gpuherd config set --help)\n",
    )
    assert run(shared, "forked", "config", "--json").stdout == before


@pytest.mark.parametrize(
    "args", [["get", "nosuch"], ["set", "nosuch", "1"], ["set", "nosuch"]], ids=" ".join
)
def test_an_unknown_setting_is_said_alike_by_get_and_set(shared: Herd, args: list[str]) -> None:
    """`config get` said click's "Invalid value: unknown setting ...", `set` the daemon's;
    `set nosuch` with no value said `no VALUE given`, of the second mistake."""
    proc = run(shared, "forked", "config", *args)
    assert (proc.returncode, proc.stdout, proc.stderr) == (
        2,
        "",
        "gpuherd: error: unknown setting 'nosuch': use one of foreign, keep-free, keep-ram, "
        "reserve-after, max-running, cpu-jobs, project-limits, retries, grace, on-end, "
        f"max-log-size (see gpuherd config {args[0]} --help)\n",
    )


def test_a_known_setting_without_its_value_is_told_to_give_one(shared: Herd) -> None:
    proc = run(shared, "forked", "config", "set", "retries")
    assert (proc.returncode, proc.stdout, proc.stderr) == (
        2,
        "",
        "gpuherd: error: no VALUE given: gpuherd config set [OPTIONS] NAME VALUE"
        " (see gpuherd config set --help)\n",
    )


@pytest.mark.parametrize(("entry", "args", "names"), ERRORS)
def test_mistakes_get_one_error_line_and_change_nothing(
    shared: Herd, entry: str, args: list[str], names: str
) -> None:
    before = shared.all_jobs()
    pid = shared.pid
    proc = run(shared, entry, *args)
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"{'herd' if entry == 'herd' else 'gpuherd'}: error:")
    assert names in lines[0]  # it says what was wrong
    assert proc.stdout == ""
    assert shared.all_jobs() == before
    assert shared.pid == pid


BIG = "9" * 20
CLICK_WORDING = (
    "Invalid value",
    "integer range",
    "No such option",
    "not in the range",
    "Missing argument",
)


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (
            ["show", "1-2"],
            "show takes one job id, not '1-2': one job at a time (gpuherd show 1, then "
            "gpuherd show 2); gpuherd ls --all lists every job",
        ),
        (
            ["priority", "3", "abc"],
            "a priority is a whole number, not 'abc': higher runs first (the default is 0), "
            "e.g. gpuherd priority 3 10 (see gpuherd priority --help)",
        ),
        (
            ["move", "1", "--before", "abc"],
            "invalid job id 'abc': give a number, e.g. --before 3; gpuherd ls --all lists "
            "every job",
        ),
        (
            ["config", "set", "retries", "-1"],
            "retries: invalid count '-1': use a number from 0 to 2**63 - 1",
        ),
        # Past 64 bits the daemon's refusal named its field: `job_id N`, `ids N is too large`.
        (["show", BIG], f"job id {BIG} is too large (at most 2**63 - 1) (see gpuherd show"),
        (["kill", "2", BIG], f"job id {BIG} is too large (at most 2**63 - 1) (see"),
        (["move", "1", "--before", BIG], f"job id {BIG} is too large (at most 2**63 - 1)"),
        (
            ["ls", "--name", ""],
            "--name is empty: give a name or a pattern like 'resnet-*', or leave --name out",
        ),
        # White space alone went on to the daemon, whose refusal named `project (--project)`.
        (
            ["ls", "--project", "  "],
            "--project '  ' is only white space: give a project, or leave --project out",
        ),
        (
            ["wait", "--sweep", " "],
            "--sweep ' ' is only white space: give a sweep's name (gpuherd sweep ls lists them), "
            "or leave --sweep out",
        ),
        (
            ["submit", "-g", "1.5", "true"],
            "--gpus takes a whole number of GPUs, not '1.5': e.g. -g 2",
        ),
        # An argument left out was click's "Missing argument 'JOB_ID'.".
        (["move"], "no JOB_ID given: gpuherd move [OPTIONS] JOB_ID (see gpuherd move --help)"),
        (["config", "set", "retries"], "no VALUE given: gpuherd config set [OPTIONS] NAME VALUE"),
        (
            ["sweep", "rm"],
            "no NAME given: gpuherd sweep rm [OPTIONS] NAME...; gpuherd sweep ls lists the "
            "sweeps (see gpuherd sweep rm --help)",
        ),
        (["sweep", "status"], "no NAME given: gpuherd sweep status [OPTIONS] NAME; gpuherd sweep"),
        # Another verb where a sweep's template goes was click's "Got unexpected extra
        # argument (lr)", or a refusal to sweep over the one-word command `results`.
        (
            ["sweep", "kill", "lr"],
            "No such command 'kill': gpuherd kill $(gpuherd ls -q --sweep lr) stops a sweep's jobs",
        ),
        (["sweep", "results"], "No such command 'results': gpuherd sweep status NAME shows"),
        # `sweep log t1` was "'t1' is one argument too many: gpuherd sweep [OPTIONS] SOURCE".
        (
            ["sweep", "log", "t1"],
            "No such command 'log': gpuherd log ID prints a point's output, ID being its JOB "
            "in gpuherd sweep status t1 (whose --json gives each point's log_files)",
        ),
        # A word too many was click's "Got unexpected extra argument (3)".
        (["ls", "3"], "'3' is one argument too many: gpuherd ls [OPTIONS]; gpuherd show ID"),
        (
            ["daemon", "stop", "3"],
            "'3' is one argument too many: gpuherd daemon stop [OPTIONS]; "
            "gpuherd kill IDS stops jobs",
        ),
        (
            ["show", "3", "4", "5"],
            "'4', '5' are arguments too many: gpuherd show [OPTIONS] [JOB_ID]",
        ),
        # An array job typed as Slurm or gflow would was told to `submit -- ./job.sh`.
        (["sbatch", "--array=0-3", "x.sh"], "No such command 'sbatch': gpuherd sweep './job.sh"),
        (["gbatch", "--array", "0-3", "x"], "No such command 'gbatch': gpuherd sweep './job.sh"),
        (
            ["submit", "--mem", "10", "true"],
            "--mem 10 is 10 bytes: give a unit, e.g. --mem 10GiB (a number without one is "
            "bytes, taken from 1 MiB up)",
        ),
    ],
    ids=lambda value: " ".join(value) if isinstance(value, list) else "",
)
def test_mistakes_are_said_in_gpuherds_words_with_what_to_do(
    shared: Herd, args: list[str], said: str
) -> None:
    proc = run(shared, "forked", *args)
    assert proc.returncode != 0 and proc.stdout == ""
    (line,) = proc.stderr.splitlines()
    assert line.startswith(f"gpuherd: error: {said}"), line
    assert not [words for words in CLICK_WORDING if words in line], line


def test_a_verbs_word_given_parameters_is_still_a_sweeps_template(shared: Herd) -> None:
    # `sweep kill lr` is answered with the way to stop a sweep; `sweep list -p x 1 2` sweeps.
    proc = run(shared, "forked", "sweep", "list {x}", "-p", "x", "1", "2", "--dry-run")
    assert (proc.returncode, proc.stdout) == (0, "list 1\nlist 2\n"), proc.stderr
    proc = run(shared, "forked", "sweep", "list", "-p", "x", "1", "--dry-run")
    assert (proc.returncode, proc.stdout) == (0, "list\n"), proc.stderr


@pytest.mark.parametrize(("entry", "name"), [("herd", "herd"), ("gpuherd", "gpuherd")])
def test_usage_and_hints_say_the_name_typed(shared: Herd, entry: str, name: str) -> None:
    # `herd --help` said `Usage: gpuherd ...`, and its hints `(see gpuherd ls --help)`.
    assert run(shared, entry, "--help").stdout.startswith(
        f"Usage: {name} [OPTIONS] COMMAND [ARGS]...\n"
    )
    assert f"Usage: {name} ls [OPTIONS]\n" in run(shared, entry, "ls", "--help").stdout
    wrong = run(shared, entry, "ls", "--xyzzy")  # (`--bogus`: "Did you mean '--columns'?")
    assert wrong.stderr == f"{name}: error: No such option '--xyzzy'. (see {name} ls --help)\n"
    # Error lines said `gpuherd: error:` whatever the name typed; the daemon's refusals too.
    assert run(shared, entry, "show", "999").stderr.startswith(f"{name}: error: ")
    # Job 2 has ended: a refusal per job (of release: a kill of it is no refusal now).
    refused = run(shared, entry, "release", "2").stderr
    assert refused.startswith(f"{name}: error: "), refused
    sweep = run(shared, entry, "sweep", "--help").stdout.splitlines()
    assert sweep[1] == f"   or: {name} sweep FILE.yaml|.toml|.json [OPTIONS]"
    # `herd --version` said `gpuherd, version ...`.
    assert run(shared, entry, "--version").stdout == f"{name}, version {__version__}\n"


def test_python_dash_m_says_gpuherd(shared: Herd) -> None:
    # `python -m gpuherd` is gpuherd, not `__main__.py` (a real `python -m`, as typed).
    assert run(shared, "module", "--help").stdout.startswith("Usage: gpuherd [OPTIONS]")
    assert run(shared, "module", "--version").stdout == f"gpuherd, version {__version__}\n"
    assert run(shared, "module", "show", "999").stderr.startswith("gpuherd: error: ")


def test_one_job_commands_still_take_one_id_and_a_name_filter_still_matches(
    shared: Herd,
) -> None:
    assert shared.json("show", " 2 ")["id"] == 2  # spaces around an id, as before
    assert shared.cli("show", "002").stdout.startswith("job        2\n")
    assert shared.cli("ls", "-q", "--all", "--name", "h*").stdout == "1\n"


def closed(herd: Herd, redirect: str, *args: str) -> subprocess.CompletedProcess[str]:
    """`gpuherd ARGS` with standard streams closed by `redirect` (`>&-`, `<&- 2>&-`)."""
    return subprocess.run(
        ["sh", "-c", f'exec "$0" "$@" {redirect}', *ENTRY_POINTS["gpuherd"], *args],
        env=herd.env,
        cwd=herd.home.parent,
        capture_output=True,
        text=True,
        timeout=60,
    )


STDOUT_CLOSED = (
    "gpuherd: error: standard output is closed: point it at a file, or at /dev/null "
    "(> /dev/null) to drop what gpuherd prints\n"
)


@pytest.mark.parametrize(
    "args",
    [
        ["ls"],
        ["ls", "-a"],
        ["show", "2"],
        ["log", "2"],
        ["gpus"],
        ["sweep", "ls"],
        ["sweep", "status", "X"],
        ["submit", "--", "true"],
    ],
    ids=" ".join,
)
def test_a_closed_stdout_gets_one_line_and_nothing_is_done(shared: Herd, args: list[str]) -> None:
    # They failed with a traceback ('NoneType' object has no attribute 'isatty' / 'buffer').
    before = shared.all_jobs()
    proc = closed(shared, ">&-", *args)
    assert (proc.returncode, proc.stderr, proc.stdout) == (1, STDOUT_CLOSED, "")
    both = closed(shared, ">&- 2>&-", *args)  # nowhere to say it: the exit status tells
    assert (both.returncode, both.stderr, both.stdout) == (1, "", "")
    assert shared.all_jobs() == before


STDIN_CLOSED = (
    "gpuherd: error: standard input is closed: give a job file, or pipe the jobs in (< jobs.txt)\n"
)


def test_a_closed_stdin_is_refused_only_where_it_is_read(shared: Herd) -> None:
    before = shared.all_jobs()
    proc = closed(shared, "<&-", "submit", "--file", "-")  # was: 'NoneType' has no 'flush'
    assert (proc.returncode, proc.stderr, proc.stdout) == (1, STDIN_CLOSED, "")
    on_stdout = closed(shared, "<&- 2>&-", "submit", "--file", "-")  # the stream still open
    assert (on_stdout.returncode, on_stdout.stderr, on_stdout.stdout) == (1, "", STDIN_CLOSED)
    assert shared.all_jobs() == before
    listing = closed(shared, "<&-", "ls", "-q", "--all")  # (the waiting job 1 last, as in ls)
    assert (listing.returncode, listing.stdout, listing.stderr) == (0, "2\n1\n", "")


def test_submit_file_drops_a_byte_order_mark(shared_daemon: Herd, tmp_path: Path) -> None:
    # It began the first command ("\ufeffecho one": sh found no such command).
    daemon = shared_daemon
    jobs = tmp_path / "jobs.txt"
    jobs.write_bytes(b"\xef\xbb\xbfecho one\r\necho two\r\n")
    submitted = daemon.cli("submit", "-q", "--file", str(jobs)).stdout
    first = int(submitted.split()[0])
    assert submitted == f"{first}\n{first + 1}\n"
    assert [daemon.job(i)["command"] for i in (first, first + 1)] == ["echo one", "echo two"]
    assert daemon.wait_state(first, "succeeded", "failed")["state"] == "succeeded"


REQUIRED = {
    "id", "name", "state", "outcome", "exit_code", "gpus", "pid", "attempt", "command",
    "created_at", "started_at", "ended_at",
}  # fmt: skip


def test_json_listings_have_the_documented_fields(shared: Herd) -> None:
    listed = {job["id"]: job for job in shared.json("ls", "--all")}
    assert sorted(listed) == [1, 2]
    for job_id in (1, 2):
        shown = shared.json("show", str(job_id))
        for job in (listed[job_id], shown):
            assert not REQUIRED - set(job), REQUIRED - set(job)
    done = shared.json("show", "2")
    assert (done["state"], done["outcome"], done["exit_code"], done["attempt"]) == (
        "succeeded", "exit", 0, 1,
    )  # fmt: skip
    assert done["command"] == "true" and len(done["gpus"]) == 1 and done["pid"] > 0
    assert done["created_at"] <= done["started_at"] <= done["ended_at"]
    held = listed[1]
    assert (held["state"], held["name"], held["pid"], held["started_at"]) == (
        "held", "held", None, None,
    )  # fmt: skip


def test_ids_accept_ranges_and_lists(shared_daemon: Herd, recorder: Recorder) -> None:
    daemon = shared_daemon
    ids = daemon.submit_lines([recorder.cmd("runs", wait="go")] * 6)
    one, two, three, four, five, six = ids
    assert ids == list(range(one, one + 6))
    wait_for(lambda: all(daemon.job(j)["state"] == "running" for j in ids[:4]), what="4 running")
    proc = run(daemon, "forked", "kill", f"{two}-{four},{six}")
    assert proc.returncode == 0, proc.stderr
    said = [line.split(":")[0] for line in proc.stdout.splitlines()]
    assert said == [f"jobs {two}-{four}", f"job {six}"]
    for job_id in (two, three, four):
        assert daemon.wait_state(job_id, "killed", "failed", "succeeded")["state"] == "killed"
    assert daemon.job(six)["state"] == "cancelled"
    daemon.wait_state(five, "running")  # took a freed GPU
    recorder.go()
    assert daemon.wait_state(one, "succeeded", "failed")["state"] == "succeeded"
    assert daemon.wait_state(five, "succeeded", "failed")["state"] == "succeeded"
    assert sorted(r["id"] for r in recorder.lines("runs")) == [one, five]


@pytest.mark.parametrize(
    ("home", "says"),
    [
        ("afile", "GPUHERD_HOME {tmp}/afile is a file, not a folder: point it at a folder"),
        ("afile/sub", "GPUHERD_HOME {tmp}/afile/sub: {tmp}/afile is a file, not a folder"),
    ],
)
@pytest.mark.parametrize("args", [["ls"], ["daemon", "start", "--fake-gpus", "1"]])
def test_a_home_that_is_a_file_gets_one_line_that_says_so(
    tmp_path: Path, home: str, says: str, args: list[str]
) -> None:
    (tmp_path / "afile").write_text("not a folder\n")
    env = {**os.environ, "GPUHERD_HOME": str(tmp_path / home)}
    env.pop("XDG_RUNTIME_DIR", None)
    proc = forks.gpuherd(args, env=env, cwd=tmp_path, timeout=60)
    assert proc.returncode != 0
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("gpuherd: error: " + says.format(tmp=tmp_path))


def test_a_home_that_cannot_be_created_gets_one_line(tmp_path: Path) -> None:
    env = {**os.environ, "GPUHERD_HOME": "/proc/gpuherd-cannot-be-here"}
    proc = forks.gpuherd(["daemon", "start", "--fake-gpus", "1"], env=env, cwd=tmp_path, timeout=60)
    assert proc.returncode != 0
    assert proc.stderr.splitlines() == [
        "gpuherd: error: cannot create the daemon's home /proc/gpuherd-cannot-be-here: No such "
        "file or directory; point GPUHERD_HOME at a folder you can write"
    ]


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_output_that_cannot_be_written_gets_one_line_not_a_traceback(shared: Herd) -> None:
    for args in (("ls", "--all"), ("show", "2"), ("ls", "-q", "--all"), ("--help",)):
        with open("/dev/full", "w") as full:
            proc = subprocess.run(
                [*ENTRY_POINTS["gpuherd"], *args],
                env=shared.env,
                stdout=full,
                stderr=subprocess.PIPE,
                text=True,
                timeout=60,
            )
        assert (proc.returncode, proc.stderr) == (
            1,
            "gpuherd: error: No space left on device (writing the output)\n",
        ), args


def test_commands_with_a_dash_dash_of_their_own_and_likely_mistakes_are_taken(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    daemon = shared_daemon
    # A `--` inside the command is no sign of stray ids: queued as written.
    job = daemon.submit("--", "sh", "-c", 'echo "$@"', "x", "--nproc", "2", "--", "train.py")
    assert daemon.job(job)["command"] == "sh -c 'echo \"$@\"' x --nproc 2 -- train.py"
    assert daemon.wait_state(job, "succeeded", "failed")["state"] == "succeeded"
    out = Path(daemon.job(job)["job_dir"]) / "attempt-1" / "stdout.log"
    assert out.read_text() == "--nproc 2 -- train.py\n"
    # A byte count (1 MiB and more) is taken as bytes, as scripts pass it.
    assert daemon.job(daemon.submit("--mem", "1048576", "--", "true"))["mem"] == 2**20
    # +0s is now (it was refused as not a +DURATION); a past time warns, on one line.
    soon = daemon.cli("submit", "-q", "--begin", "+0s", "--", "true")
    assert soon.stderr == ""
    assert daemon.wait_state(int(soon.stdout), "succeeded")["state"] == "succeeded"
    past = daemon.cli("submit", "-q", "--begin", "2020-01-01", "--", "true")
    assert past.stderr == (
        "gpuherd: warning: --begin 2020-01-01 00:00 is already past: the job may start now\n"
    )
    assert daemon.wait_state(int(past.stdout), "succeeded")["state"] == "succeeded"
    swept = daemon.cli("sweep", "true {x}", "-p", "x", "1", "2", "--begin", "2020-01-01", "-q")
    assert swept.stderr == (
        "gpuherd: warning: --begin 2020-01-01 00:00 is already past: the jobs may start now\n"
    )
