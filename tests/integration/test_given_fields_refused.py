"""What a job may not be given, refused at submit and edit for every client (the daemon's
submission_text.check_given): a name or project with a control character (`show` printed
it over two lines, `ls` as spaces, and GPUHERD_JOB_NAME carried it), and --env pairs of the
variables gpuherd sets in every job (taken, shown, and silently replaced)."""

from __future__ import annotations

import pytest

from conftest import Herd


@pytest.mark.parametrize(
    ("option", "value", "said"),
    [
        (
            "--name",
            "line1\nline2",
            "name (--name) $'line1\\nline2' holds a control character ('\\n')",
        ),
        ("--name", "a\tb", "name (--name) $'a\\tb' holds a control character ('\\t')"),
        ("--project", "p\rq", "project (--project) $'p\\rq' holds a control character ('\\r')"),
        (
            "--env",
            "GPUHERD_ATTEMPT=7",
            "env (--env): gpuherd sets GPUHERD_ATTEMPT in every job (the attempt's number), over"
            " yours: leave it out, or pass the value under another name",
        ),
        ("--env", "CUDA_DEVICE_ORDER=FASTEST_FIRST", "gpuherd sets CUDA_DEVICE_ORDER in every job"),
    ],
)
def test_submit_and_edit_refuse_it_and_change_nothing(
    shared_daemon: Herd, option: str, value: str, said: str
) -> None:
    herd = shared_daemon
    before = herd.client.get("/jobs", all=True)["jobs"]
    refused = herd.cli("submit", "--hold", option, value, "--", "true", check=False)
    assert refused.returncode != 0 and said in refused.stderr, refused.stderr
    assert herd.client.get("/jobs", all=True)["jobs"] == before

    job = herd.submit("--hold", "--name", "kept", "--", "true")
    edited = herd.cli("edit", str(job), option, value, check=False)
    assert edited.returncode != 0 and f"job {job}: " in edited.stderr, edited.stderr
    assert said in edited.stderr, edited.stderr
    shown = herd.job(job)
    assert (shown["name"], shown["project"], shown["env_overrides"]) == ("kept", None, {})
    herd.cli("rm", str(job))


def test_a_name_of_other_scripts_and_a_printable_variable_are_taken(shared_daemon: Herd) -> None:
    herd = shared_daemon
    job = herd.submit("--hold", "--name", "ünï çödé 训练", "--env", "MY_ATTEMPT=7", "--", "true")
    assert herd.job(job)["name"] == "ünï çödé 训练"
    assert herd.job(job)["env_overrides"] == {"MY_ATTEMPT": "7"}
    herd.cli("rm", str(job))
