"""The daemon's `GET /jobs` answer, encoded off the loop in chunks (listing_reader.encoded):
the same bytes the route's response model gave when it was encoded whole on the loop."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import TypeAdapter

from gpuherd.listing_reader import ENCODE_CHUNK, encoded

WHOLE = TypeAdapter(dict[str, Any])


@pytest.mark.parametrize("count", [0, 1, ENCODE_CHUNK - 1, ENCODE_CHUNK, 2 * ENCODE_CHUNK + 7])
@pytest.mark.parametrize("rest", [{}, {"more": 3, "filtered": ["project", "since"]}])
def test_chunks_join_into_the_whole_answer(count: int, rest: dict[str, Any]) -> None:
    views = [
        {"id": i, "name": "réseau\u2028", "gpus": [0, 1], "mem": 1e-05, "reason": None}
        for i in range(count)
    ]
    assert encoded(views, rest) == WHOLE.dump_json({"jobs": views, **rest})
