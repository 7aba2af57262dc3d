"""task_values: a task's return value made storable as JSON, and numpy values as Python's."""

from __future__ import annotations

import json
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
