"""A program not on this machine's PATH (`pyhton`, `nvidia-smix`) is warned of at submit; on a
Ray cluster the job runs on a node, whose PATH this machine's says nothing of for sure (the
daemon's machine may be a login node without the nodes' tools). Before, the warning said the
program was on no PATH of the job's and that the job would fail: it now says where it looked
("on this machine") and where the job runs, alike from `submit`, `sweep` (the daemon's),
`sweep --dry-run`, the Python API and the dashboard's form."""

from __future__ import annotations

import html
import re
import warnings
from pathlib import Path
from urllib.parse import urlencode

import pytest
from ray_fixtures import RayHerd, cluster_fixture, rherd_fixture  # noqa: F401

import gpuherd
from conftest import UnixConnection

pytestmark = pytest.mark.timeout(180)  # (with its module's cluster start: ~30 s under load)

ONE = (
    "pyhton is no program on the job's PATH on this machine nor a shell builtin: the job will"
    " fail with 'not found' unless installed on the Ray node where it starts; check the"
    " spelling"
)
POINTS = (
    "nvidia-smix is no program on the points' PATH on this machine nor a shell builtin: every"
    " point will fail with 'not found' unless installed on the Ray nodes where they start;"
    " check the spelling"
)


def warned(stderr: str) -> list[str]:
    prefix = "gpuherd: warning: "
    return [line.removeprefix(prefix) for line in stderr.splitlines() if line.startswith(prefix)]


def form_page(rherd: RayHerd, cwd: Path, commands: str) -> str:
    """The jobs page the dashboard's submit form leads to, for `commands` (held, no GPU)."""
    body = urlencode({"commands": commands, "gpus": "0", "hold": "1", "cwd": str(cwd)})
    conn = UnixConnection(rherd.client.socket_path, timeout=30)
    try:
        conn.request("POST", "/submit", body, {"Content-Type": "application/x-www-form-urlencoded"})
        answer = conn.getresponse()
        assert answer.status == 303, answer.read()
        return rherd.page(str(answer.headers["location"]))
    finally:
        conn.close()


def test_a_program_not_found_here_is_said_of_this_machine(rherd: RayHerd, tmp_path: Path) -> None:
    proc = rherd.cli("submit", "--gpus", "0", "--hold", "--", "pyhton", "train.py", cwd=tmp_path)
    assert warned(proc.stderr) == [ONE]

    template = "nvidia-smix --lr {lr}"
    swept = rherd.cli(
        "sweep", template, "-p", "lr", "1", "2", "--gpus", "0", "--hold", cwd=tmp_path
    )  # fmt: skip
    assert warned(swept.stderr) == [POINTS]
    dry = rherd.cli("sweep", template, "-p", "lr", "1", "2", "--dry-run", cwd=tmp_path)
    assert warned(dry.stderr) == [POINTS]

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gpuherd.connect(rherd.home).submit("pyhton train.py", gpus=0, hold=True, cwd=tmp_path)
    assert [str(w.message) for w in caught] == [ONE]

    page = form_page(rherd, tmp_path, "pyhton")
    shown = re.findall(r'class="flash warning missing-script-warning">(.*?)</div>', page)
    assert [html.unescape(w) for w in shown] == [f"warning: {ONE}"]
