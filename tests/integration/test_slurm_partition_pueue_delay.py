"""Two habits answered in gpuherd's words (docs/switching.md): Slurm's `-p gpu` (a partition)
was refused as a bad priority alone, and pueue's `add --delay 10m -- CMD` typed after
`gpuherd pueue` got the generic `gpuherd submit -- CMD` answer, its delay dropped."""

from __future__ import annotations

from conftest import Herd


def refused(herd: Herd, *args: str) -> str:
    """The one line of a usage error (exit 2), its `(see ... --help)` tail left off."""
    said = herd.usage_error(*args)
    return said.removeprefix("gpuherd: error: ").rpartition(" (see gpuherd ")[0]


PRIORITY = "higher runs first (the default is 0), e.g. -p 10"


def test_slurms_partition_given_to_p_is_answered_as_one(herd: Herd) -> None:
    assert refused(herd, "submit", "-p", "gpu", "--", "python", "train.py") == (
        f"--priority takes a whole number, not 'gpu': {PRIORITY}; -p is --priority here, not "
        "Slurm's partition: a daemon has one queue, of this machine's GPUs (--only-gpus 0,1 "
        "keeps a job on some of them; --project gpu groups jobs)"
    )
    said = refused(herd, "submit", "-pgpu long", "--", "true")  # (quoted as a shell word)
    assert said.endswith("--project 'gpu long' groups jobs)"), said
    # A number in other digits, or of no letters, is no partition: the priority's words alone.
    for given in ("٣", "1.5"):
        said = f"--priority takes a whole number, not {given!r}: {PRIORITY}"
        assert refused(herd, "submit", "-p", given, "--", "true") == said
    # sweep's -p is a parameter: its --priority is refused as a priority alone.
    assert refused(herd, "sweep", "echo {a}", "-p", "a", "1", "--priority", "gpu") == (
        "--priority takes a whole number, not 'gpu': higher runs first (the default is 0), "
        "e.g. --priority 10"
    )


def test_pueues_delay_after_pueue_add_is_a_begin(herd: Herd) -> None:
    def answer(*words: str) -> str:
        return refused(herd, "pueue", "add", *words)

    queued = "queues it (pueue add)"
    for delay in ("--delay", "-d"):
        assert answer(delay, "10m", "--", "python", "train.py") == (
            f"No such command 'pueue': gpuherd submit --begin +10m -- python train.py {queued}"
        )
    assert answer("--delay=23:30", "--label", "x", "--", "true") == (
        f"No such command 'pueue': gpuherd submit --begin 23:30 --name x -- true {queued}"
    )
    assert answer("--delay", "600", "--", "true") == (  # (pueue's seconds)
        f"No such command 'pueue': gpuherd submit --begin +600 -- true {queued}"
    )
    # Typed to submit itself, the answer has the delay's time too (it had --begin +2h).
    assert refused(herd, "submit", "--delay", "10m", "--", "true") == (
        "No such option '--delay': use --begin +10m (pueue's -d, --delay)"
    )
