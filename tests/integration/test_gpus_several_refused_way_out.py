"""`gpuherd gpus remove 0 9` with no GPU 9 is refused whole, nothing removed: it said so, and
that `gpus add 9` adds GPU 9 (the opposite of a removal), never what to type. (A GPU removed
already is no refusal: test_gpus_remove_twice.py.)
The refusal of several GPUs now gives the command without those gpuherd does not have, for
`remove`, `drain` and `enable`; `add` of several, which names one command per GPU, keeps the
--slots given (it left them out)."""

from __future__ import annotations

from conftest import Herd
from integration.test_gpus_unknown_and_lost_drained import states


def test_several_gpus_refused_say_the_command_without_the_absent_ones(daemon: Herd) -> None:
    daemon.cli("gpus", "remove", "2")
    refused = daemon.cli("gpus", "remove", "0", "9", check=False)
    assert (refused.returncode, refused.stdout) == (1, "")
    assert refused.stderr == (
        "gpuherd: error: GPU 9 is not configured (configured: 0,1,3): nothing removed; "
        "leave it out: `gpuherd gpus remove 0`\n"
    )
    # A GPU that is not there too (9): `drain` also says how to add the one the probe sees.
    refused = daemon.cli("gpus", "drain", "0-1", "2", "9", check=False)
    assert refused.stderr == (
        "gpuherd: error: GPUs 2,9 are not configured (configured: 0,1,3): nothing drained; "
        "leave them out: `gpuherd gpus drain 0-1`; `gpuherd gpus add 2` adds GPU 2\n"
    )
    assert states(daemon) == {0: "enabled", 1: "enabled", 3: "enabled"}  # none changed
    # The command said does it.
    assert daemon.cli("gpus", "drain", "0-1").stdout.count("draining") == 2
    refused = daemon.cli("gpus", "enable", "0", "1", "2", check=False)
    assert refused.stderr.endswith(
        "leave it out: `gpuherd gpus enable 0-1`; `gpuherd gpus add 2` adds GPU 2\n"
    )
    assert daemon.cli("gpus", "remove", "0").stdout == "GPU 0 removed; jobs running on it go on\n"
    # None of them configured: nothing else to type (0 and 2 are removed already).
    refused = daemon.cli("gpus", "remove", "0", "2", "8-9", check=False)
    assert refused.stderr == (
        "gpuherd: error: GPUs 8-9 are not configured (configured: 1,3): nothing removed\n"
    )


def test_add_of_several_gpus_keeps_the_slots_in_its_commands(daemon: Herd) -> None:
    for given in (["0-1"], ["0", "1"]):
        assert daemon.usage_error("gpus", "add", *given, "--slots", "2") == (
            "gpuherd: error: `gpuherd gpus add` takes one GPU (its --slots are its own): "
            "`gpuherd gpus add 0 --slots 2`, then `gpuherd gpus add 1 --slots 2` "
            "(see gpuherd gpus add --help)\n"
        )
    assert daemon.cli("gpus", "add", "0", "--slots", "2").stdout == "GPU 0: 2 slots (was 1)\n"
