"""A job whose --ram is more than the machine has is refused at submit, in a line that says
how much the machine has and what to do (docs/gpus.md, "A job that could never run")."""

from __future__ import annotations

from conftest import Herd
from gpuherd.core.units import format_size, format_size_down
from gpuherd.host_memory import host_memory_total


def test_a_ram_larger_than_the_machine_is_refused_naming_what_it_has(shared_daemon: Herd) -> None:
    asked = ("submit", "--gpus", "0", "--ram", "100TiB", "--", "true")
    refused = shared_daemon.cli(*asked, check=False)
    assert refused.returncode != 0, refused
    assert refused.stderr == (
        "gpuherd: error: this job can never run: asks for 100.0 TiB of host memory, more than "
        f"this machine has ({format_size(host_memory_total())}): give a smaller ram (--ram), "
        f"at most {format_size_down(host_memory_total())}\n"
    )
    # The size said is taken (held: it would wait for that much to be free).
    most = format_size_down(host_memory_total()).replace(" ", "")
    shared_daemon.cli("submit", "--hold", "--gpus", "0", "--ram", most, "--", "true")
