"""Numbers that name something in a path or a query (a job's id, a GPU's index, an attempt's
number): plain decimal digits only.

FastAPI read `/jobs/{job_id}` as pydantic's lax integer does: `/api/v1/jobs/1.0`,
`/jobs/+1`, `/jobs/%201` and `/jobs/1_0` (job 10) each named a job, where `/jobs/abc` was
refused, and `/jobs/-1` was looked up (`no job -1`). Each is now refused as `abc` is, one line
naming what it is not: `invalid request: path.job_id: '1.0' is no job id: give its number in
plain digits, as 12` (422). A number past 64 bits is digits still, and still told too large
(numbers.py). A GPU's index and an attempt's number may have a minus sign: their range checks
say what a negative one is (`GPU -1 is not a GPU index: use 0 to 4095`, as a body's `index`
is told; `attempts are numbered from 1, got -1`).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator
from pydantic_core import PydanticCustomError


def _plain_digits(what: str, example: str, signed: bool = False) -> BeforeValidator:
    """A check run before pydantic reads the text as an integer: ASCII digits, nothing else
    (`str.isdigit` alone takes `١`, `²`), after a minus sign if `signed`."""

    def check(value: Any) -> Any:
        digits = value.removeprefix("-") if signed and isinstance(value, str) else value
        if isinstance(digits, str) and not (digits.isascii() and digits.isdigit()):
            raise PydanticCustomError(
                "plain_digits",
                "{given} is no {what}: give its number in plain digits, as {example}",
                {"given": repr(value), "what": what, "example": example},
            )
        return value

    return BeforeValidator(check)


JobId = Annotated[int, _plain_digits("job id", "12")]
GpuIndex = Annotated[int, _plain_digits("GPU index", "0 (`gpuherd gpus` lists them)", True)]
AttemptNumber = Annotated[int, _plain_digits("attempt number", "1 (numbered from 1)", True)]
