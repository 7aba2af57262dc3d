"""The `#SBATCH` options that have no option of the same name here, read for their answer
(core/sbatch_directives.py): an array's indices for a sweep's `-p i`, a dependency's ids,
a signal's time, and `--mem-per-gpu`, which was "not used here" where `submit --mem-per-gpu`
was told `--mem SIZE`."""

from __future__ import annotations

from gpuherd.core.sbatch_directives import (
    array_values,
    dependency_options,
    slurm_signal,
    submit_options,
    values,
)


def test_an_arrays_indices_are_the_words_of_a_sweeps_values_and_its_cap() -> None:
    assert array_values("1-3") == ("$(seq 1 3)", None)
    assert array_values("0-99%4") == ("$(seq 0 99)", 4)
    assert array_values("1-7:2") == ("$(seq 1 2 7)", None)
    assert array_values("1,3,5-6%2") == ("1 3 $(seq 5 6)", 2)
    assert array_values("4") == ("4", None)
    assert array_values("0-9%0") == ("$(seq 0 9)", None)  # (no cap)
    for unread in ("", "1-", "a-b", "1-3%x", "1-3:"):
        assert array_values(unread) is None, unread


def test_a_dependency_is_submits_options_when_one_waits_alike() -> None:
    assert dependency_options("afterok:3") == [("--after", "3")]
    assert dependency_options("afterok:3:4,afterany:5,afternotok:6") == [
        ("--after", "3,4"),
        ("--after-any", "5"),
        ("--after-fail", "6"),
    ]
    for none in ("after:3", "singleton", "afterok:3?afterany:4", "aftercorr:3", "afterok:3+5"):
        assert dependency_options(none) is None, none


def test_a_signal_before_the_time_limit_is_the_grace_after_it_and_mem_per_gpu_is_mem() -> None:
    assert slurm_signal("B:USR1@90") == ("USR1", 90)
    assert slurm_signal("SIGTERM") == ("TERM", 60)  # (Slurm's 60 s without @)
    assert slurm_signal("@@") is None
    words = ["--signal=R:USR2@120", "--mem-per-gpu=20G", "-a", "0-9", "-d", "afterok:1"]
    assert submit_options(words) == (
        [("--grace", "120s"), ("--mem", "20G")],
        ["--array", "--dependency"],
    )
    assert submit_options(["--mem-per-gpu", "2048"]) == ([("--mem", "2048M")], [])
    assert values(words)["--array"] == "0-9"


def test_digits_int_cannot_read_are_left_out_not_a_traceback() -> None:
    # `²` is a digit to str.isdigit(), not to int(): `#SBATCH --nice=²` ended the submission
    # in a ValueError, and so did an array's cap `%²`.
    assert array_values("0-3%²") is None
    assert submit_options(["--nice=²"]) == ([], ["--nice"])
    assert submit_options(["--nice=-5"]) == ([("--priority", "5")], [])
