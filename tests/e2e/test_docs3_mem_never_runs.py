"""A job asking for more memory per GPU than the largest GPU has is refused at submit with
what to do, as the --ram refusal is (docs/gpus.md, "A job that could never run"): by the
CLI, the Python API and the dashboard's submit form alike, from the one line the daemon
writes (core/reasons.py, never_fits), each in its own words for the field."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from test_dashboard_pages import post

from conftest import Herd
from gpuherd.core.units import format_size_down
from gpuherd.errors import InvalidValue
from gpuherd.host_memory import host_memory_total
from gpuherd.pyapi import connect

NEVER = "asks for 100.0 GiB per GPU but the largest GPU has 24.0 GiB: give a smaller "


def test_a_mem_larger_than_any_gpu_is_refused_saying_how_much_fits(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    refused = shared_daemon.cli("submit", "--mem", "100GiB", "--", "true", check=False)
    assert (refused.returncode, refused.stderr) == (
        1,
        f"gpuherd: error: this job can never run: {NEVER}mem (--mem), at most 24.0 GiB\n",
    )  # was "... has 24.0 GiB", and no way out
    accepted = shared_daemon.submit("--hold", "--mem", "24GiB", "--", "true")  # as it says
    assert shared_daemon.job(accepted)["state"] == "held"

    api = connect(shared_daemon.home, start=False)
    with pytest.raises(InvalidValue) as from_python:
        api.submit(["true"], mem="100GiB")
    assert str(from_python.value) == f"this job can never run: {NEVER}mem (--mem), at most 24.0 GiB"

    typed = {"commands": "true", "cwd": str(tmp_path), "mem": "100GiB"}
    answer = post(shared_daemon, "/submit", htmx=False, **typed)
    [said] = re.findall(r'id="submit-error">(.*?)</div>', answer.body)
    assert answer.status == 422
    assert html.unescape(said) == (
        f"this job can never run: {NEVER}'memory per GPU', at most 24.0 GiB"
    )  # the form's box, not the CLI's option


def test_a_ram_larger_than_the_machine_is_said_in_the_forms_words(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    typed = {"commands": "true", "cwd": str(tmp_path), "gpus": "0", "ram": "100TiB"}
    answer = post(shared_daemon, "/submit", htmx=False, **typed)
    [said] = re.findall(r'id="submit-error">(.*?)</div>', answer.body)
    assert answer.status == 422
    most = format_size_down(host_memory_total())
    assert html.unescape(said).endswith(f": give a smaller 'host memory', at most {most}"), said
    api = connect(shared_daemon.home, start=False)
    with pytest.raises(InvalidValue) as from_python:
        api.submit(["true"], gpus=0, ram="100TiB")
    assert str(from_python.value).endswith(f": give a smaller ram (--ram), at most {most}")
