"""task_values: a task's return value made storable as JSON, and numpy values as Python's."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest

from gpuherd.pyapi_values import plain, python_spelling
from gpuherd.task_values import Storable, from_numpy


class Scalar:
    """A torch-like tensor: `.item()` raises for more than one number, `.tolist()` works."""

    def __init__(self, values: list[float]) -> None:
        self.values = values

    def item(self) -> float:
        if len(self.values) != 1:
            raise RuntimeError("a Tensor with 2 elements cannot be converted to Scalar")
        return self.values[0]

    def tolist(self) -> list[float]:
        return list(self.values)


class Unprintable:
    def __str__(self) -> str:
        raise ValueError("no text")


def stored(value: Any) -> tuple[Any, str | None]:
    result = Storable(value)
    json.dumps(result.value)  # what the worker writes: it must not raise
    return result.value, result.note()


def test_json_values_are_stored_as_they_are_and_tuples_and_sets_as_lists() -> None:
    value = {"a": [1, 2.5, None, True], "t": (1, 2), 3: "int key", None: 0, 1.5: "f"}
    assert stored(value) == (value | {"t": [1, 2]}, None)
    assert stored({3, 1, 2}) == ([1, 2, 3], None)
    assert stored(frozenset({"b", "a"})) == (["a", "b"], None)
    unsortable, note = stored({1, "a"})
    assert sorted(map(str, unsortable)) == ["1", "a"] and note is None


def test_what_json_cannot_hold_is_its_text_and_named_in_the_note() -> None:
    value, note = stored({("a", 1): 1, "o": object.__new__(Unprintable), "x": [1j]})
    assert value == {"('a', 1)": 1, "o": "<Unprintable object>", "x": ["1j"]}
    assert note == (
        "the return value was stored in result.json, with what JSON cannot hold as its text: "
        "result[('a', 1)] (a tuple key), result['o'] (an Unprintable), result['x'][0] (a complex)"
    )
    _, note = stored([object() for _ in range(7)])
    assert note is not None and note.endswith("result[4] (an object) and 2 more")


def test_scalars_and_tensors_are_numbers_and_lists() -> None:
    assert stored({"one": Scalar([0.5]), "two": Scalar([1.0, 2.0])}) == (
        {"one": 0.5, "two": [1.0, 2.0]},
        None,
    )


def test_a_value_that_refers_to_itself_or_nests_too_deep_is_still_stored() -> None:
    loop: dict[str, Any] = {"a": 1}
    loop["self"] = loop
    value, note = stored(loop)
    assert value == {"a": 1, "self": "{'a': 1, 'self': {...}}"}
    assert note is not None and note.endswith("result['self'] (a reference to itself)")
    deep: list[Any] = []
    for _ in range(100_000):
        deep = [deep]
    value, note = stored(deep)
    assert value == "<list object>"
    assert note is not None and note.endswith("result (a value nested too deep to walk)")


def test_numpy_values_are_the_numbers_they_show() -> None:
    np = pytest.importorskip("numpy")
    assert from_numpy(np.float32(0.01)) == 0.01  # .item() gives 0.009999999776482582
    assert from_numpy(np.float16(0.1)) == 0.1
    assert from_numpy(np.array([[0.01, 0.3]], dtype=np.float32)) == [[0.01, 0.3]]
    assert from_numpy(np.float64(0.1)) == 0.1 and from_numpy(np.int64(3)) == 3
    assert type(from_numpy(np.longdouble(0.5))) is float
    assert plain({"lr": [np.float32(0.01)], "n": (np.int32(2),)}) == {"lr": [0.01], "n": (2,)}
    value, note = stored({np.int64(3): np.float32(0.5), np.str_("k"): np.bool_(True)})
    assert (value, note) == ({3: 0.5, "k": True}, None)


def test_the_clis_option_names_in_a_warning_are_spelled_as_keywords() -> None:
    text = "give another --results-dir; use another --name (--force runs them again)"
    assert python_spelling(text) == (
        "give another results_dir=; use another name= (force=True runs them again)"
    )
    assert python_spelling('x: "--name" and --names-x') == 'x: "--name" and --names-x'


def test_an_int_too_long_for_jsons_readers_is_stored_as_its_digits_or_its_length() -> None:
    # Its text raised ValueError (Python's 4,300-digit limit) as result.json was written, and
    # the job failed after the function ended; a key so long too.
    limit = sys.get_int_max_str_digits()
    value, note = stored({"n": -(10**5000), 10**4400: 1, "fits": 10**4299, "huge": [10**200_000]})
    assert value == {
        "n": "-1" + "0" * 5000,
        "1" + "0" * 4400: 1,
        "fits": 10**4299,  # (4,300 digits: kept as a number, Python reads it back)
        "huge": ["<an int of 200,001 digits>"],
    }
    assert note == (
        "the return value was stored in result.json, with what JSON cannot hold as its text: "
        "result['n'] (an int of 5,001 digits, over the 4,300 Python reads back), result[<a key>] "
        "(an int of 4,401 digits, over the 4,300 Python reads back), result['huge'][0] (an int "
        "of 200,001 digits, over the 4,300 Python reads back, stored as its length: too long to "
        "write out)"
    )
    assert json.loads(json.dumps(value)) == value  # (read back as job.result() reads it)
    assert sys.get_int_max_str_digits() == limit  # lifted to write the digits, then put back
