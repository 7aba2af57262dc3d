"""An on-end hook (or a job) whose program starts with `~`: `config set on-end
'~/bin/notify'` (quoted for the user's shell, expanded by the hook's) naming no file was set
unsaid, while the same typed unquoted (expanded to /home/me/bin/notify by the user's shell)
was warned of; and one whose `~` is quoted in the command itself, which no shell expands,
failed at every job's end with `not found` (exit 127), the file there or not. Both are said
when set, in one line with the fix; the hook is set all the same, as other warnings leave it."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import Herd, hooks_log, wait_for


@pytest.fixture
def me(herd: Herd, tmp_path: Path) -> Path:
    """The user's home folder, with bin/notify (executable): the CLI's and the daemon's HOME."""
    me = tmp_path / "me"
    (me / "bin").mkdir(parents=True)
    notify = me / "bin" / "notify"
    notify.write_text('#!/bin/sh\necho "told of $GPUHERD_JOB_ID"\n')
    notify.chmod(0o755)
    herd.env["HOME"] = str(me)
    herd.start("--fake-gpus", "1")
    return me


def test_a_hook_from_tilde_that_names_no_file_is_warned_of_when_set(herd: Herd, me: Path) -> None:
    said = herd.cli("config", "set", "on-end", "~/bin/notfy")
    assert (said.stdout, said.stderr) == (
        "on-end = ~/bin/notfy\n",
        f"gpuherd: warning: on-end: {me}/bin/notfy does not exist: the hook will fail unless "
        "it is made before it starts; check the path\n",
    )
    said = herd.cli("config", "set", "on-end", '~/bin/notify "$GPUHERD_JOB_ID"')
    assert said.stderr == ""  # there: nothing to say


def test_a_hook_whose_tilde_is_quoted_is_warned_of_with_the_fix(herd: Herd, me: Path) -> None:
    said = herd.cli("config", "set", "on-end", "'~/bin/notify' done")
    assert (said.stdout, said.stderr) == (
        "on-end = '~/bin/notify' done\n",
        "gpuherd: warning: on-end: the program '~/bin/notify' has its ~ quoted, and the shell "
        'does not expand ~ inside quotes: the hook will fail with "not found"; write the ~ '
        "unquoted: gpuherd config set on-end '~/bin/notify done'\n",
    )
    # As warned: set all the same, its shell finds nothing at the job's end.
    job = herd.submit("--gpus", "0", "--", "true")
    log = herd.home / "daemon.log"
    wait_for(lambda: f"on-end hook for job {job} exited 127" in log.read_text(), 15, "its fail")
    # The fix, as given, runs the script.
    herd.cli("config", "set", "on-end", "~/bin/notify done")
    job = herd.submit("--gpus", "0", "--", "true")
    wait_for(lambda: f"told of {job}" in hooks_log(herd.home), 15, "the hook")


def test_a_job_whose_program_has_its_tilde_quoted_is_warned_of_at_submit(
    herd: Herd, me: Path
) -> None:
    """`submit -- '~/bin/notify' 'a b'`: its words joined, the ~ stays quoted."""
    said = herd.cli("submit", "--hold", "--", "~/bin/notify", "a b")
    assert said.stderr == (
        "gpuherd: warning: the program '~/bin/notify' has its ~ quoted, and the shell does not "
        'expand ~ inside quotes: the job will fail with "not found"; write the ~ unquoted: '
        "gpuherd submit -- ~/bin/notify 'a b'\n"
    )
