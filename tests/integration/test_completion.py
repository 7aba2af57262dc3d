"""Shell completion, asked as the shells ask it: the console script run with _GPUHERD_COMPLETE
(or _HERD_COMPLETE) and the command line in COMP_WORDS/COMP_CWORD, against a real daemon;
and the script `gpuherd completion bash` prints, sourced in a real bash."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import click
import pytest

from conftest import Herd, load_stretch
from gpuherd.cli.config_cmds import VALUE_WORDS
from gpuherd.cli.main import COMMAND_TABLE
from gpuherd.config import SETTINGS

BIN = Path(sys.executable).parent
FINISHED = ["cancelled", "failed", "killed", "lost", "succeeded"]
PATIENT = {"GPUHERD_TEST_ASK_BUDGET": "10"}
"""The seconds completion gives the daemon to answer (completion_cmd.ASK_BUDGET: 0.5), for a
test that expects its candidates: a daemon on a loaded machine may take longer, and then
nothing is offered. The tests of a daemon that does not answer in time keep the 0.5 s."""


def complete(
    herd: Herd, line: str, shell: str = "bash", prog: str = "gpuherd", patient: bool = True
) -> tuple[list[tuple[str, str, str]], subprocess.CompletedProcess[str]]:
    """What the console script `prog` answers the `shell` script for `line` (the cursor at its
    end): (type, value, description) per candidate, and the process. `patient`: the daemon
    gets 10 s to answer (PATIENT), else the 0.5 s a user's Tab gives it."""
    env = {**herd.env, f"_{prog.upper()}_COMPLETE": f"{shell}_complete", "COMP_WORDS": line}
    if patient:
        env |= PATIENT
    else:
        env.pop("GPUHERD_TEST_ASK_BUDGET", None)
    words = line.split()
    current = "" if line.endswith(" ") else words[-1]
    if shell == "fish":  # fish gives the word being typed itself
        env["COMP_CWORD"] = current
    else:  # bash and zsh give its index
        env["COMP_CWORD"] = str(len(words) if line.endswith(" ") else len(words) - 1)
    proc = subprocess.run(
        [str(BIN / prog)], env=env, capture_output=True, text=True, timeout=30, cwd=herd.home.parent
    )
    answer = proc.stdout.removesuffix("\n")  # (click prints a line even of nothing)
    lines = answer.split("\n") if answer else []
    if shell == "bash":  # type,value
        found = [(kind, value, "") for kind, _, value in (x.partition(",") for x in lines)]
    elif shell == "zsh":  # type, value, description ("_": none) on three lines
        triples = zip(lines[::3], lines[1::3], lines[2::3], strict=True)
        found = [(kind, value, "" if said == "_" else said) for kind, value, said in triples]
    else:  # fish: type,value TAB description
        found = []
        for x in lines:
            kind, _, rest = x.partition(",")
            value, _, said = rest.partition("\t")
            found.append((kind, value, said))
    return found, proc


def values(herd: Herd, line: str, shell: str = "bash") -> list[str]:
    found, proc = complete(herd, line, shell)
    assert (proc.returncode, proc.stderr) == (0, ""), proc
    return [value for _, value, _ in found]


def test_commands_complete_from_the_table_for_both_names(herd: Herd) -> None:
    assert values(herd, "gpuherd ") == sorted(COMMAND_TABLE)
    assert values(herd, "gpuherd s") == ["show", "submit", "sweep"]
    found, _ = complete(herd, "herd com", prog="herd")
    assert [value for _, value, _ in found] == ["completion"]
    found, _ = complete(herd, "gpuherd sh", shell="zsh")  # with its help, as `--help` has it
    show = click.Command("show", help=COMMAND_TABLE["show"][1]).get_short_help_str()
    assert found == [("plain", "show", show)]
    assert values(herd, "gpuherd --v") == ["--version"]
    assert values(herd, "gpuherd sweep ") == ["", "ls", "rm", "status", "wait"]  # "": a file
    assert values(herd, "gpuherd daemon st") == ["start", "status", "stop"]


def test_options_and_choices_of_one_command(herd: Herd) -> None:
    options = values(herd, "gpuherd log --")
    assert {"--follow", "--stderr", "--attempt"} <= set(options)
    assert "--gpus" not in options
    assert values(herd, "gpuherd sweep run.yaml --order ") == ["given", "longest-first"]
    assert values(herd, "gpuherd submit --on-no-output ") == ["flag", "kill"]
    assert values(herd, "gpuherd edit 3 --clear after") == ["after", "after_any", "after_fail"]
    for line in (
        "gpuherd submit --after-",
        "gpuherd edit 3 --after-",
        "gpuherd sweep x.yaml --after-",
    ):
        assert values(herd, line) == ["--after-any", "--after-fail"]
    # An option before the file, as `sweep` takes it: its options, not a file named `--after-`.
    assert values(herd, "gpuherd sweep --after-") == ["--after-any", "--after-fail"]
    assert values(herd, "gpuherd ls --state f") == ["failed"]
    assert values(herd, "gpuherd ls --state d") == []  # a job is never `done`: a point is
    assert values(herd, "gpuherd sweep status s --state d") == ["done"]
    assert values(herd, "gpuherd sweep status s --state m") == ["missing"]
    assert values(herd, "gpuherd clean --state ") == FINISHED
    assert values(herd, "gpuherd completion ") == ["bash", "zsh", "fish"]
    assert values(herd, "gpuherd daemon start --executor ") == ["local", "ray"]
    assert values(herd, "gpuherd daemon start --address ") == ["auto"]  # (else: type one)
    assert values(herd, "gpuherd daemon start --address 10.") == []


def test_paths_are_left_to_the_shell(herd: Herd) -> None:
    # click's own types: "dir" or "file" tells the script to complete paths itself.
    assert complete(herd, "gpuherd submit --cwd /tm")[0] == [("dir", "/tm", "")]
    assert complete(herd, "gpuherd submit --file jo")[0] == [("file", "jo", "")]
    assert complete(herd, "gpuherd submit -- python tra")[0] == [("file", "tra", "")]
    assert complete(herd, "gpuherd run jobs")[0] == [("file", "jobs", "")]


def test_command_names_load_no_command_and_options_load_only_theirs(herd: Herd) -> None:
    """`gpuherd --help` and `ls` stay fast because a command's module loads only when it
    runs; completing a command's name must not load them all, nor one's options the rest."""
    code = (
        "import atexit, json, sys\n"
        "atexit.register(lambda: print(json.dumps(sorted(sys.modules)), file=sys.stderr))\n"
        "from gpuherd.cli.main import main\n"
        "main()\n"
    )

    def loaded(line: str) -> set[str]:
        env = {**herd.env, "_GPUHERD_COMPLETE": "bash_complete", "COMP_WORDS": line}
        env["COMP_CWORD"] = str(len(line.split()) - (0 if line.endswith(" ") else 1))
        proc = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=30
        )
        assert proc.returncode == 0, proc.stderr
        modules = {m.rsplit(".", 1)[-1] for m in json.loads(proc.stderr) if "gpuherd.cli." in m}
        return modules & {module for module, _ in COMMAND_TABLE.values()}

    assert loaded("gpuherd s") == {"completion_cmd"}  # (which answers the shell)
    assert loaded("gpuherd ls --") == {"completion_cmd", "job_cmds"}


@pytest.fixture
def jobs(shared_daemon: Herd) -> dict[str, int]:
    """One job in each state the verbs tell apart: running, queued (after the running one),
    held and succeeded; and a sweep of two finished points."""
    herd = shared_daemon
    done = herd.submit("-n", "done-job", "--gpus", "0", "--", "true")
    running = herd.submit("-n", "runner", "--", "sleep", "300")
    queued = herd.submit("--after", str(running), "--", "echo", "queued, after the runner")
    held = herd.submit("--hold", "-n", "kept", "--", "true")
    herd.wait_state(running, "running")
    herd.wait_state(done, "succeeded")
    herd.cli("sweep", "true {x}", "-p", "x", "1", "2", "--name", "lr-grid", "--gpus", "0")
    herd.cli("wait", "--sweep", "lr-grid")
    return {"done": done, "running": running, "queued": queued, "held": held}


def ids(herd: Herd, line: str, shell: str = "bash") -> list[str]:
    return [value for value in values(herd, line, shell) if value.isdigit()]


def test_job_ids_of_the_jobs_each_verb_can_act_on(
    shared_daemon: Herd, jobs: dict[str, int]
) -> None:
    herd = shared_daemon
    every = {str(i) for i in jobs.values()}
    assert every <= set(ids(herd, "gpuherd show "))
    assert every <= set(ids(herd, "gpuherd log "))
    assert every <= set(ids(herd, "gpuherd submit --after "))

    def offered(verb: str) -> set[str]:
        return {name for name, i in jobs.items() if str(i) in ids(herd, f"gpuherd {verb} ")}

    assert offered("kill") == {"running", "queued", "held"}
    assert offered("release") == {"held"}
    assert offered("hold") == {"queued"}
    assert offered("pause") == {"running"}
    assert offered("resume") == set()
    assert offered("retry") == {"running", "done"}
    assert offered("rm") == {"queued", "held", "done"}
    assert offered("edit") == offered("priority") == offered("move") == {"queued", "held"}
    assert offered("wait") == {"running", "queued", "held"}
    assert {"queued", "held"} == {
        name for name, i in jobs.items() if str(i) in ids(herd, "gpuherd move 1 --before ")
    }
    # not the command's own job: `move 3 --swap <Tab>` offered 3, `edit 3 --after` too
    moved, kept = jobs["queued"], jobs["held"]
    assert {"held"} == {
        name for name, i in jobs.items() if str(i) in ids(herd, f"gpuherd move {moved} --swap ")
    }
    after = ids(herd, f"gpuherd edit {kept},{jobs['done']} --after ")
    assert str(kept) not in after and str(jobs["done"]) not in after
    assert str(jobs["running"]) in after
    # the newest first, then `last`; only those whose id starts as typed
    listed = values(herd, "gpuherd show ")
    assert listed[-1] == "last"
    assert [int(i) for i in listed[:-1]] == sorted(map(int, listed[:-1]), reverse=True)
    assert values(herd, "gpuherd show l") == ["last"]
    typed = str(jobs["held"])
    assert all(i.startswith(typed) for i in ids(herd, f"gpuherd rm {typed}"))
    assert typed in ids(herd, f"gpuherd rm {typed}")
    # several ids: the one after the last comma is completed
    assert f"{jobs['running']},{jobs['held']}" in values(herd, f"gpuherd kill {jobs['running']},")


def test_job_ids_come_with_their_name_or_command_where_the_shell_shows_one(
    shared_daemon: Herd, jobs: dict[str, int]
) -> None:
    herd = shared_daemon
    for shell in ("zsh", "fish"):
        found, proc = complete(herd, "gpuherd kill ", shell)
        assert (proc.returncode, proc.stderr) == (0, "")
        said = {value: description for _, value, description in found}
        assert said[str(jobs["running"])] == "runner (running)"
        assert said[str(jobs["held"])] == "kept (held)"
        assert said[str(jobs["queued"])] == "echo 'queued, after the runner' (queued)"
        assert said["last"] == "the job submitted last"


def test_sweep_names(shared_daemon: Herd, jobs: dict[str, int]) -> None:
    herd = shared_daemon
    assert values(herd, "gpuherd sweep status lr-") == ["lr-grid"]
    assert "lr-grid" in values(herd, "gpuherd sweep rm ")
    assert "lr-grid" in values(herd, "gpuherd ls --sweep ")
    assert "lr-grid" in values(herd, "gpuherd wait --sweep l")
    found, _ = complete(herd, "gpuherd sweep status lr-", "zsh")
    assert found == [("plain", "lr-grid", "2 points: 2 succeeded")]


def test_setting_names(shared_daemon: Herd) -> None:
    assert values(shared_daemon, "gpuherd config get keep-") == ["keep-free", "keep-ram"]
    assert values(shared_daemon, "gpuherd config set max-r") == ["max-running"]
    assert values(shared_daemon, "gpuherd config unset reserve") == ["reserve-after"]


def test_a_settings_words_are_offered_after_its_name(herd: Herd) -> None:
    """`config set foreign <Tab>` offered nothing: its four modes were to be read in the
    table's help. The words need no daemon; each is one the setting takes."""
    assert values(herd, "gpuherd config set foreign ") == [*VALUE_WORDS["foreign"], "default"]
    assert values(herd, "gpuherd config set cpu-jobs a") == ["auto"]
    assert values(herd, "gpuherd config set retries ") == ["default"]
    assert values(herd, "gpuherd config set grace auto ") == []  # (one value)
    for name, words in VALUE_WORDS.items():
        for word in words:
            SETTINGS[name].parse(word)  # (raises on a word it does not take)


def test_without_a_daemon_nothing_is_offered_and_nothing_said(herd: Herd) -> None:
    for line in ("gpuherd kill ", "gpuherd show ", "gpuherd sweep status ", "gpuherd config get "):
        started = time.monotonic()
        found, proc = complete(herd, line, "zsh", patient=False)
        assert (found, proc.returncode, proc.stderr) == ([], 0, "")
        assert time.monotonic() - started < 10
    assert not herd.home.exists()  # (nor is a home made for it)


def test_a_line_click_cannot_read_yet_offers_nothing_quietly(herd: Herd) -> None:
    found, proc = complete(herd, 'gpuherd sweep "train {x}" -p ')  # -p before its NAME
    assert (found, proc.returncode, proc.stderr) == ([], 0, "")


@contextmanager
def stalling_daemon(path: Path, dribble: bool) -> Iterator[None]:
    """A socket where the daemon's would be, whose daemon never answers, or answers a byte
    every 0.1 s (each within the client's timeout: only a deadline for the whole request
    ends the wait)."""
    path.parent.mkdir(parents=True)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(8)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            with conn:
                conn.recv(65536)
                answer = b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n" + b" " * 1000
                for byte in answer if dribble else b"":
                    if stop.wait(0.1):
                        return
                    try:
                        conn.send(bytes([byte]))
                    except OSError:  # the client gave up
                        break
                stop.wait(60 if not dribble else 0)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        listener.shutdown(socket.SHUT_RDWR)
        listener.close()
        thread.join(10)


@pytest.mark.parametrize("dribble", [False, True], ids=["silent", "dribbling"])
def test_a_daemon_that_does_not_answer_in_time_offers_nothing(herd: Herd, dribble: bool) -> None:
    with stalling_daemon(herd.client.socket_path, dribble):
        started = time.monotonic()
        found, proc = complete(herd, "gpuherd kill ", "zsh", patient=False)
        took = time.monotonic() - started
    assert (found, proc.returncode, proc.stderr) == ([], 0, "")
    # 0.5 s for the daemon, the rest Python's start on a busy machine: the daemon here would
    # keep Tab waiting for a minute, or (dribbling) for more than a minute and a half
    assert took < 5 * load_stretch()


def test_completion_prints_each_shells_script_for_the_name_typed(herd: Herd) -> None:
    bash = herd.cli("completion", "bash").stdout
    assert "_GPUHERD_COMPLETE=bash_complete" in bash
    assert "complete -o nosort -F _gpuherd_completion gpuherd" in bash
    zsh = subprocess.run(
        [str(BIN / "herd"), "completion", "zsh"], env=herd.env, capture_output=True, text=True
    )
    assert zsh.stdout.startswith("#compdef herd\n")
    assert "_HERD_COMPLETE=zsh_complete" in zsh.stdout
    fish = herd.cli("completion", "fish").stdout
    assert 'complete --no-files --command gpuherd --arguments "(_gpuherd_completion)"' in fish


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["tcsh"], "no completion for tcsh: give bash, zsh or fish, e.g. gpuherd completion bash"),
        ([], "give the shell: bash, zsh or fish, e.g. gpuherd completion bash"),
    ],
)
def test_a_shell_it_cannot_complete_is_refused_in_one_line(
    herd: Herd, args: list[str], said: str
) -> None:
    proc = herd.cli("completion", *args, check=False)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr == f"gpuherd: error: {said} (see gpuherd completion --help)\n"


def in_shell(herd: Herd, shell: list[str], script: str) -> subprocess.CompletedProcess[str]:
    """`script` run by `shell`, with the console scripts first on PATH (as installed), the
    daemon given 10 s to answer a completion (PATIENT)."""
    env = {**herd.env, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", **PATIENT}
    return subprocess.run(
        [*shell, "-c", script], env=env, capture_output=True, text=True, timeout=60
    )


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
def test_bash_sourcing_the_script_completes_on_tab(
    shared_daemon: Herd, jobs: dict[str, int]
) -> None:
    """As bash does on Tab: COMP_WORDS holds the words, COMP_CWORD the index of the one being
    typed, and the function named by `complete -F` fills COMPREPLY (its arguments: the
    command, the word, the word before)."""
    script = """
        source <(gpuherd completion bash)
        source <(herd completion bash)
        complete -p gpuherd herd
        COMP_WORDS=(gpuherd sh); COMP_CWORD=1
        _gpuherd_completion gpuherd sh gpuherd
        echo "commands: ${COMPREPLY[*]}"
        COMPREPLY=(); COMP_WORDS=(herd release ""); COMP_CWORD=2
        _herd_completion herd "" release
        echo "held: ${COMPREPLY[*]}"
    """
    proc = in_shell(shared_daemon, ["bash", "--norc", "--noprofile"], script)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "complete -o nosort -F _gpuherd_completion gpuherd",
        "complete -o nosort -F _herd_completion herd",
        "commands: show",
        f"held: {jobs['held']} last",
    ]


# CI installs fish (.ci/run): there a missing one fails the test instead of skipping it.
@pytest.mark.skipif(
    shutil.which("fish") is None and not os.environ.get("CI"), reason="fish is not installed"
)
def test_fish_loading_the_script_completes(shared_daemon: Herd, jobs: dict[str, int]) -> None:
    script = 'gpuherd completion fish | source; complete -C "gpuherd release "'
    proc = in_shell(shared_daemon, ["fish", "--no-config"], script)
    assert (proc.returncode, proc.stderr) == (0, "")
    assert proc.stdout.splitlines() == [
        f"{jobs['held']}\tkept (held)",
        "last\tthe job submitted last",
    ]
