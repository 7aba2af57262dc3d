from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpuherd.core.idspec import (
    MAX_IDS,
    format_ids,
    no_job_with,
    parse_gpu_indices,
    parse_ids,
    parse_job_ids,
    split_items,
    summarize,
)


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("5", [5]),
        ("3-7,9", [3, 4, 5, 6, 7, 9]),
        ("9,3-7", [3, 4, 5, 6, 7, 9]),
        ("3-3", [3]),
        ("1 2 3", [1, 2, 3]),
        (["1", "2", "3"], [1, 2, 3]),
        (["3-5,9", "4", "10"], [3, 4, 5, 9, 10]),
        ("3, 4 ,5", [3, 4, 5]),
        ("2,2,1", [1, 2]),
        (" 7 ", [7]),
    ],
)
def test_parse_ids(spec: str | list[str], expected: list[int]) -> None:
    assert parse_ids(spec) == expected


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("a", "invalid job id 'a'"),
        ("3,a", "invalid job id 'a' in '3,a'"),
        ("-3", "invalid job id '-3'"),
        ("3-", "invalid job id '3-'"),
        ("1.5", "invalid job id '1.5'"),
        ("7-3", "invalid range '7-3': write it as 3-7"),
        ("0", "ids start at 1"),
        ("0-4", "ids start at 1"),
        ("", "no job ids given"),
        ("  ", "no job ids given"),
        ([], "no job ids given"),
        ("3,,4", "empty job id in '3,,4'"),
        ("3,", "empty job id"),
        ("1-1000001", "too many job ids"),
        ("1-600000,700000-1300000", "too many job ids"),
        # Past 64 bits: the daemon refused it naming its field (`ids N is too large`).
        (str(2**63), f"job id {2**63} is too large (at most 2**63 - 1)"),
        (f"5,{2**63 - 2}-{2**64}", f"job id {2**64} is too large (at most 2**63 - 1)"),
    ],
)
def test_parse_ids_errors_are_one_clear_line(spec: str | list[str], message: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_job_ids(spec)  # parse_ids, and no id past 64 bits (the CLI's)
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_the_limit_itself_is_allowed() -> None:
    assert len(parse_ids(f"1-{MAX_IDS}")) == MAX_IDS
    assert parse_job_ids(str(2**63 - 1)) == [2**63 - 1]  # the largest id the queue stores


def test_split_items_keeps_empty_items_for_the_caller_to_reject() -> None:
    assert split_items("0,,1") == ["0", "", "1"]
    assert split_items(["0, 1", "2"]) == ["0", "1", "2"]


@pytest.mark.parametrize(
    ("ids", "spec"),
    [([], ""), ([5], "5"), ([3, 4, 5, 9], "3-5,9"), ([9, 1, 2, 2], "1-2,9"), ([1, 3], "1,3")],
)
def test_format_ids(ids: list[int], spec: str) -> None:
    assert format_ids(ids) == spec


@given(st.sets(st.integers(min_value=1, max_value=500), min_size=1))
def test_format_then_parse_round_trips(ids: set[int]) -> None:
    assert parse_ids(format_ids(ids)) == sorted(ids)


@given(st.lists(st.integers(min_value=1, max_value=10**9), min_size=1, max_size=20))
def test_any_order_and_repeats_give_sorted_unique(ids: list[int]) -> None:
    assert parse_ids([str(i) for i in ids]) == sorted(set(ids))
    assert parse_ids(",".join(map(str, ids))) == sorted(set(ids))


def test_summarize_puts_jobs_with_one_answer_on_one_line() -> None:
    results = [(1, True, "cancelled"), (2, True, "stopping"), (3, True, "cancelled")]
    results += [(9, True, "cancelled"), (4, False, "job 4 already ended (killed)")]
    assert summarize(results) == [
        (True, "jobs 1,3,9: cancelled"),
        (True, "job 2: stopping"),
        (False, "job 4 already ended (killed)"),
    ]


def test_summarize_says_the_ids_that_name_no_job_on_one_line_with_the_hint() -> None:
    """The service answers each missing id as `log 99` says it: `kill 99` said `no job 99`
    alone, and `kill 1 99 100` a line for each."""
    results = [(1, True, "held"), (120, False, no_job_with([120])), (99, False, no_job_with([99]))]
    results += [(4, False, "job 4 already ended (killed)"), (121, False, no_job_with([121]))]
    hint = "`gpuherd ls --all` lists the jobs there are"
    assert summarize(results, refusals_shown=1) == [
        (True, "job 1: held"),
        (False, f"no job 99, 120-121: {hint}"),
        (False, "job 4 already ended (killed)"),
    ]
    assert summarize([(99, False, no_job_with([99]))]) == [(False, f"no job 99: {hint}")]


def test_summarize_says_a_refusal_of_several_jobs_once_naming_them() -> None:
    """`edit 1-2000 --mem 2GiB` of CPU-only jobs said its refusal once per job, naming none:
    refusals that begin with their job share a line, as answers alike do."""
    said = "mem (--mem) with gpus 0 (--gpus 0): a CPU-only job gets no GPU memory"
    results = [(i, False, f"job {i}: {said}") for i in (1, 2, 3, 7)]
    results += [(4, False, "job 4 is running: kill it first"), (5, False, "job 5: other")]
    results += [(6, False, f"job 6: {said}"), (8, True, "edited (name none -> x)")]
    assert summarize(results) == [
        (True, "job 8: edited (name none -> x)"),
        (False, f"jobs 1-3,6-7: {said}"),
        (False, "job 4 is running: kill it first"),
        (False, "job 5: other"),
    ]
    assert summarize(results, refusals_shown=1)[2:] == [(False, "2 more jobs refused too: 4-5")]


def test_summarize_says_jobs_that_would_never_run_alike_once() -> None:
    """`edit 180-182 --mem 100GiB` said `job N would never run: ...` once per job (500 jobs:
    10 lines, then the rest), where the README promises one line for jobs refused alike."""
    said = "asks for 100.0 GiB per GPU but the largest GPU has 24.0 GiB"
    results = [(i, False, f"job {i} would never run: {said}") for i in (180, 181, 182)]
    results += [(183, False, "job 183 would never run: asks for 183 GPUs")]
    assert summarize(results) == [
        (False, f"jobs 180-182 would never run: {said}"),
        (False, "job 183 would never run: asks for 183 GPUs"),
    ]


def test_summarize_shows_the_first_refusals_and_lists_the_rest() -> None:
    refused = [(i, False, f"job {i}: reason {chr(ord('a') + i)}") for i in range(1, 15)]
    lines = summarize(refused, refusals_shown=3)
    assert lines == [
        (False, "job 1: reason b"),
        (False, "job 2: reason c"),
        (False, "job 3: reason d"),
        (False, "11 more jobs refused too: 4-14"),
    ]
    assert summarize(refused[:3], refusals_shown=3) == lines[:3]
    refused = [(i, False, f"job {i}: reason {chr(ord('a') + i)}") for i in range(1, 1201)]
    rest = (False, "1,190 more jobs refused too: 11-1200")  # (a count grouped, ids not)
    assert summarize(refused)[-1] == rest
    assert summarize([]) == []


def test_summarize_lists_the_rest_of_the_jobs_removed_with_files_left_as_removed() -> None:
    # Before: "3 more jobs refused too", of jobs `clean` had removed (their folders left).
    left = [(i, False, f"job {i}: removed, but not its folder") for i in (1, 2, 5, 6, 7)]
    refused = [(3, False, "job 3 is running: kill it first"), (4, False, "job 4 is paused")]
    lines = summarize(left[:2] + refused + left[2:], refusals_shown=2, left={1, 2, 5, 6, 7})
    assert lines[2:] == [
        (False, "3 more jobs removed, but not all their files either: 5-7"),
        (False, "2 more jobs refused too: 3-4"),
    ]
    assert summarize(refused, refusals_shown=1)[1:] == [(False, "1 more job refused too: 4")]


@given(
    st.lists(
        st.tuples(st.integers(1, 50), st.booleans(), st.sampled_from("ab")),
        unique_by=lambda result: result[0],
    )
)
def test_summarize_names_every_job_once(results: list[tuple[int, bool, str]]) -> None:
    """Each id is named once: on its answer's line, on a refusal line (of the jobs refused
    alike), or on the rest line."""
    results = [(i, ok, answer if ok else f"job {i} is {answer}") for i, ok, answer in results]
    named: list[int] = []
    for _, line in summarize(results, refusals_shown=2):
        if "refused too" in line:
            named += parse_ids(line.rsplit(": ", 1)[1])
        else:  # `jobs 1-3: a`, `job 4 is b`, `jobs 5-6 are a`
            named += parse_ids(line.split(" ")[1].rstrip(":"))
    assert sorted(named) == sorted(i for i, _, _ in results)


def test_summarize_says_refusals_naming_no_job_once_naming_the_jobs() -> None:
    """`edit 1-5 --after 9999` said `after (--after): no job 9999 (...)` five times, naming
    no job: a refusal said alike for several jobs names them, once."""
    said = f"after (--after): no job 9999 ({no_job_with([1]).split(': ', 1)[1]})"
    results = [(i, False, said) for i in (1, 2, 3, 5)] + [(4, True, "edited (retries 0 -> 1)")]
    assert summarize(results) == [
        (True, "job 4: edited (retries 0 -> 1)"),
        (False, f"jobs 1-3,5: {said}"),
    ]
    assert summarize(results[:1]) == [(False, said)]  # one job's: as it was said


def test_summarize_says_refusals_naming_each_its_own_job_once() -> None:
    """`edit`/`priority` of 15 ended jobs said 10 lines, each naming its job twice over: the
    jobs refused in the same words but for their own id share one, naming them there; the
    verb after them agrees. A number that is another job's, or part of a size, stays."""

    def ended(i: int) -> str:
        return (
            f"job {i} already ended (succeeded): `gpuherd retry --hold {i}` puts it back "
            f"held, to edit it before it runs again (`gpuherd release {i}` runs it)"
        )

    assert summarize([(i, False, ended(i)) for i in range(20, 35)]) == [
        (
            False,
            "jobs 20-34 already ended (succeeded): `gpuherd retry --hold 20-34` puts it back "
            "held, to edit it before it runs again (`gpuherd release 20-34` runs it)",
        )
    ]
    running = [(i, False, f"job {i} is running: kill it first (gpuherd kill {i})") for i in (7, 8)]
    assert summarize(running) == [(False, "jobs 7-8 are running: kill it first (gpuherd kill 7-8)")]
    sizes = [(i, False, f"job {i}: mem {i}GiB is more than 8.5 GiB") for i in (8, 9)]
    others = [(i, False, f"job {i} waits for job 8") for i in (8, 9)]
    assert summarize(sizes + others) == [(False, said) for _, _, said in sizes + others]


def test_parse_gpu_indices_takes_zero_ranges_and_lists() -> None:
    assert parse_gpu_indices("0") == [0]
    assert parse_gpu_indices("2,0-1, 2") == [0, 1, 2]
    assert parse_gpu_indices(["3", "1"]) == [1, 3]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("", "no GPU given: use GPU indices like 0, 0-3 or 0,2"),
        ("0,,1", "empty GPU index in '0,,1'"),
        ("gpu0", "invalid GPU index 'gpu0'"),
        ("3-1", "invalid range '3-1': write it as 1-3"),
        ("0-70000", "GPU 70000 in '0-70000' is not a GPU index: at most 4095"),
    ],
)
def test_parse_gpu_indices_errors_are_one_clear_line(spec: str, message: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_gpu_indices(spec)
    assert message in str(info.value)
