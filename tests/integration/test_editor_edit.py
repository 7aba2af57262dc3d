"""`gpuherd edit ID` alone at a terminal, as `pueue edit ID`: the job's command opens in
$VISUAL / $EDITOR (here small sh scripts standing in for an editor) and what is saved
replaces it as `--command` would; an editor that fails, is missing or empties the file
changes nothing, a job that cannot be edited is refused before any editor opens, and one
that starts while the editor is open gets nothing, the edited command printed instead."""

from __future__ import annotations

import shlex
import sys
import tempfile
from pathlib import Path

from conftest import Herd, on_a_terminal


def fake_editor(folder: Path, body: str, name: str = "editor.sh") -> Path:
    """An editor: a sh script given the file last (after any arguments of $EDITOR), as
    `$f`; it copies what it was given to `seen.sh` and the arguments to `args.txt`, then
    runs `body`."""
    script = folder / name
    script.write_text(
        "#!/bin/sh\n"
        "for f; do :; done\n"  # the last argument: the file to edit
        f'cp "$f" {folder}/seen.sh; echo "$@" > {folder}/args.txt\n'
        f"{body}\n"
    )
    script.chmod(0o755)
    return script


def at_terminal(herd: Herd, args: list[str], timeout: float = 30, **env: str) -> tuple[int, str]:
    """`gpuherd ARGS` with stdin, stdout and stderr on a pseudo-terminal (as typed in one),
    `env` added to the home's environment (VISUAL and EDITOR only as given): its exit
    status and all it wrote there."""
    environ = {k: v for k, v in herd.env.items() if k not in ("VISUAL", "EDITOR")}
    args = [sys.executable, "-m", "gpuherd", *args]
    status, seen = on_a_terminal(args, {**environ, **env}, herd.home.parent, timeout, typed=True)
    return status, seen.decode().replace("\r\n", "\n")


def edits(herd: Herd, job: int) -> list[str]:
    return [e["detail"] for e in herd.job(job)["events"] if e["event"] == "edit"]


def test_the_saved_command_replaces_the_jobs_as_command_does(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    herd = shared_daemon
    job = herd.submit("--hold", "--", "python train.py --lr 0.1")
    editor = fake_editor(tmp_path, "sed -i 's/--lr 0.1/--lr 0.01/' \"$f\"")
    status, said = at_terminal(herd, ["edit", str(job)], EDITOR=str(editor))
    # Warned of as `edit --command` is (and `submit`): train.py is not in the job's folder.
    assert (status, said.splitlines()[0]) == (0, f"job {job}: edited (command)")
    assert said.splitlines()[1].startswith(f"gpuherd: warning: job {job}: train.py does not ")
    assert herd.job(job)["command"] == "python train.py --lr 0.01"
    assert (herd.job(job)["state"], edits(herd, job)) == ("held", ["command"])
    # The editor had the command in a shell file of its own, removed once read back.
    opened = Path((tmp_path / "args.txt").read_text().strip())
    assert opened.parent == Path(tempfile.gettempdir())
    assert opened.name.startswith(f"gpuherd-job-{job}-") and opened.suffix == ".sh"
    assert (tmp_path / "seen.sh").read_text() == "python train.py --lr 0.1\n"
    assert not opened.exists()

    # Lines are kept as typed (the job runs `sh -c`); trailing newlines are not the command's.
    lines = fake_editor(tmp_path, "printf 'cd data &&\\\n  python train.py\\n\\n\\n' > \"$f\"")
    assert at_terminal(herd, ["edit", str(job)], EDITOR=str(lines))[0] == 0
    assert herd.job(job)["command"] == "cd data &&\\\n  python train.py"


def test_a_command_saved_as_it_was_or_emptied_changes_nothing(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    herd = shared_daemon
    job = herd.submit("--hold", "--", "python train.py")
    status, said = at_terminal(herd, ["edit", str(job)], EDITOR=str(fake_editor(tmp_path, ":")))
    assert (status, said) == (0, f"job {job}: unchanged\n")

    emptied = fake_editor(tmp_path, 'printf "\\n  \\n" > "$f"')
    status, said = at_terminal(herd, ["edit", str(job)], EDITOR=str(emptied))
    assert (status, said) == (
        1,
        f"gpuherd: error: job {job}: the command is empty: unchanged (to remove the job, "
        f"gpuherd rm {job})\n",
    )
    assert (herd.job(job)["command"], edits(herd, job)) == ("python train.py", [])


def test_an_editor_that_fails_or_is_missing_changes_nothing(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    herd = shared_daemon
    job = herd.submit("--hold", "--", "python train.py")
    # It saved a change, then exited 3 (git: "There was a problem with the editor"): not applied.
    failing = fake_editor(tmp_path, 'echo "rm -rf data" > "$f"; exit 3')
    status, said = at_terminal(herd, ["edit", str(job)], EDITOR=str(failing))
    assert (status, said) == (
        1,
        f"gpuherd: error: the editor exited with status 3: job {job} unchanged\n",
    )

    missing = str(tmp_path / "no-such-editor")
    status, said = at_terminal(herd, ["edit", str(job)], EDITOR=f"{missing} --wait")
    assert status == 1
    assert said == (
        f"gpuherd: error: the editor EDITOR='{missing} --wait' cannot be run (No such file or "
        f"directory): set EDITOR to an editor you have (export EDITOR=nano); job {job} "
        "unchanged\n"
    )
    assert (herd.job(job)["command"], edits(herd, job)) == ("python train.py", [])


def test_visual_wins_over_editor_and_an_editor_may_hold_arguments(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    herd = shared_daemon
    job = herd.submit("--hold", "--", "echo a")
    fails = fake_editor(tmp_path, "exit 3", name="fails.sh")
    works = fake_editor(tmp_path, "echo 'echo b' > \"$f\"")
    # `code --wait`, `emacsclient -t`: words split as sh would, run without a shell.
    status, said = at_terminal(
        herd, ["edit", str(job)], VISUAL=f"sh {works} --flag 'two words'", EDITOR=str(fails)
    )
    assert (status, said) == (0, f"job {job}: edited (command)\n")
    assert herd.job(job)["command"] == "echo b"
    given = (tmp_path / "args.txt").read_text().split()
    assert given[:3] == ["--flag", "two", "words"] and given[3].endswith(".sh")


def test_one_job_at_a_time_and_not_one_that_cannot_be_edited(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    herd = shared_daemon
    first = herd.submit("--hold", "--", "true")
    second = herd.submit("--hold", "--", "true")
    ended = herd.submit("--", "true")
    go = tmp_path / "go"
    running = herd.running_until(go)
    herd.wait_state(ended, "succeeded")
    opens = fake_editor(tmp_path, f"touch {tmp_path}/opened")

    status, said = at_terminal(herd, ["edit", f"{first}-{second}"], EDITOR=str(opens))
    assert status == 2
    assert said == (
        f"gpuherd: error: the editor opens one job's command at a time, and {first}-{second} "
        f"names 2 jobs: gpuherd edit {first} alone opens its command; for many, give the new "
        "one with --command CMD (see gpuherd edit --help)\n"
    )
    # Refused before any editor opens, in edit's own words.
    refusals = {
        running: f"job {running} is running: only queued or held jobs can be edited",
        ended: f"job {ended} already ended (succeeded): `gpuherd retry --hold {ended}` puts it "
        f"back held, to edit it before it runs again (`gpuherd release {ended}` runs it)",
        99999: "no job 99999: `gpuherd ls --all` lists the jobs there are",
    }
    for job, refusal in refusals.items():
        status, said = at_terminal(herd, ["edit", str(job)], EDITOR=str(opens))
        assert (status, said) == (1, f"gpuherd: error: {refusal}\n")
    assert not (tmp_path / "opened").exists()
    assert herd.job(running)["command"] == f"while [ ! -e {go} ]; do sleep 0.02; done"
    go.touch()


def test_a_job_that_starts_while_the_editor_is_open_is_not_edited_and_nothing_is_lost(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    herd = shared_daemon
    started = tmp_path / "started"
    command = f"touch {started}; while [ ! -e {tmp_path}/go ]; do sleep 0.02; done"
    job = herd.submit("--hold", "--", command)
    gpuherd = f"{shlex.quote(sys.executable)} -m gpuherd"
    # The editor releases the held job and saves once it runs (a wait with a time limit).
    body = (
        f"{gpuherd} release {job} >/dev/null\n"
        f"i=0; while [ ! -e {started} ] && [ $i -lt 1500 ]; do sleep 0.02; i=$((i+1)); done\n"
        'echo "python train.py --lr \'0.01\'" > "$f"'
    )
    status, said = at_terminal(herd, ["edit", str(job)], EDITOR=str(fake_editor(tmp_path, body)))
    assert started.exists()
    assert status == 1
    edited = "python train.py --lr '0.01'"
    assert said == (
        f"gpuherd: error: job {job} started while you edited it; your command was not "
        f"applied: {edited} (gpuherd submit -- {shlex.quote(edited)} queues it as a new job)\n"
    )
    assert (herd.job(job)["command"], edits(herd, job)) == (command, [])
    (tmp_path / "go").touch()
    herd.wait_state(job, "succeeded")


def test_another_edit_made_while_the_editor_is_open_is_not_undone(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    herd = shared_daemon
    job = herd.submit("--hold", "--", "echo a")
    gpuherd = f"{shlex.quote(sys.executable)} -m gpuherd"
    body = f"{gpuherd} edit {job} --command 'echo other' >/dev/null\necho 'echo mine' > \"$f\""
    status, said = at_terminal(herd, ["edit", str(job)], EDITOR=str(fake_editor(tmp_path, body)))
    assert (status, said) == (
        1,
        f"gpuherd: error: job {job}'s command was changed by another edit while you edited "
        f"it; yours was not applied: echo mine (gpuherd edit {job} opens its new one)\n",
    )
    assert herd.job(job)["command"] == "echo other"


def test_not_at_a_terminal_it_says_what_to_change_and_how_the_editor_opens(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    herd = shared_daemon
    job = herd.submit("--hold", "--", "true")
    opens = fake_editor(tmp_path, f"touch {tmp_path}/opened")
    said = herd.cli("edit", str(job), check=False, env={**herd.env, "EDITOR": str(opens)})
    assert said.returncode == 2 and len(said.stderr.splitlines()) == 1
    assert said.stderr.startswith("gpuherd: error: say what to change: --command")
    assert said.stderr.endswith(
        f"--clear FIELD; at a terminal, gpuherd edit {job} alone opens its command in "
        "$EDITOR (see gpuherd edit --help)\n"
    )
    assert not (tmp_path / "opened").exists()


def test_with_the_daemon_down_it_says_so_before_any_editor(herd: Herd, tmp_path: Path) -> None:
    opens = fake_editor(tmp_path, f"touch {tmp_path}/opened")
    status, said = at_terminal(herd, ["edit", "3"], EDITOR=str(opens))
    assert status == 3
    assert said.startswith(f"gpuherd: error: no gpuherd daemon is running for {herd.home}: ")
    assert len(said.splitlines()) == 1
    assert not (tmp_path / "opened").exists()


def test_ctrl_c_while_the_editor_is_open_goes_to_the_editor_alone(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    herd = shared_daemon
    job = herd.submit("--hold", "--", "echo a")
    # Ctrl-C signals the terminal's whole foreground group, as `kill -INT 0` does here: vi
    # takes it as "cancel", and gpuherd must not end, killing the editor with it.
    body = f"trap 'touch {tmp_path}/caught' INT\nkill -INT 0\necho 'echo b' > \"$f\""
    status, said = at_terminal(herd, ["edit", str(job)], EDITOR=str(fake_editor(tmp_path, body)))
    assert (status, said) == (0, f"job {job}: edited (command)\n")
    assert (tmp_path / "caught").exists() and herd.job(job)["command"] == "echo b"
