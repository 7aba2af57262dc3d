"""int64.whole: a number of more digits than int() reads is refused as too large, in the
words a number of 20 digits is; and the on-end hook's environment holds no GPUHERD_TOKEN."""

from __future__ import annotations

import pytest

from gpuherd.core.idspec import parse_job_ids
from gpuherd.core.int64 import LARGEST, MOST_DIGITS, LongNumber, whole
from gpuherd.core.model import Job, JobSpec
from gpuherd.core.states import JobState
from gpuherd.hooks import hook_env


def test_whole_reads_what_int_reads() -> None:
    assert whole("12") == 12
    assert whole("-7") == -7
    assert whole("9" * MOST_DIGITS) == int("9" * MOST_DIGITS)
    assert whole("0" * 5000 + "5") == 5  # leading zeros are no digits of the number


@pytest.mark.parametrize("sign", ["", "-", "+"])
def test_more_digits_than_int_reads_is_a_long_number(sign: str) -> None:
    number = whole(sign + "9" * (MOST_DIGITS + 1))
    assert isinstance(number, LongNumber)
    assert (number > LARGEST) == (sign != "-") and (number < -LARGEST) == (sign == "-")
    shown = f"{'-' if sign == '-' else ''}99999...99999 (4,301 digits)"
    assert (str(number), f"{number}", repr(number)) == (shown, shown, shown)


def test_a_job_id_of_5000_digits_is_too_large() -> None:
    with pytest.raises(ValueError, match=r"^job id 99999\.\.\.99999 \(5,000 digits\) is too large"):
        parse_job_ids("9" * 5000)


def test_the_hook_is_not_given_the_daemons_token(tmp_path: object) -> None:
    job = Job(id=3, spec=JobSpec(command="true", cwd="/"), state=JobState.SUCCEEDED, attempt=1)
    env = hook_env({"PATH": "/bin", "GPUHERD_TOKEN": "secret"}, job, "/a", "/j", 0)
    assert "GPUHERD_TOKEN" not in env
    assert env["PATH"] == "/bin" and env["GPUHERD_JOB_ID"] == "3"
