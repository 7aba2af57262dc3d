"""A folder-name separator that is no text, refused as the wrong kind in the words of where it
came from: `SweepSpec(item_sep=1)` raised Python's bare `object of type 'int' has no len()`,
and a request's or a GTS config's `1` was made text first, then refused as the character '1'
(a null as 'None'). Pure: no daemon."""

from __future__ import annotations

from typing import Any

import pytest

from gpuherd.core.sweep import SweepError, SweepSpec, SweepTypeError, spec_from_dict
from gpuherd.core.sweep_config import SweepFileError, from_config

GRID = ({"a": (1, 2)},)


@pytest.mark.parametrize("key", ["item_sep", "kv_sep"])
@pytest.mark.parametrize("bad", [1, None, b",", [","]])
def test_a_spec_s_separator_of_another_kind_is_a_type_error(key: str, bad: Any) -> None:
    with pytest.raises(TypeError) as refused:
        SweepSpec(name="s", command="echo {a}", grids=GRID, **{key: bad})
    default = "','" if key == "item_sep" else "'='"
    assert str(refused.value) == (
        f"{key} is one punctuation character as text ({default}), "
        f"got {bad!r} ({type(bad).__name__})"
    )
    # Still a SweepError: the CLI and the daemon say those in one line.
    assert isinstance(refused.value, SweepTypeError | SweepError)


@pytest.mark.parametrize("key", ["item_sep", "kv_sep"])
@pytest.mark.parametrize(("bad", "kind"), [(1, "a number"), (True, "a boolean"), ([","], "a list")])
def test_a_request_s_separator_of_another_kind_is_named_as_json_names_it(
    key: str, bad: Any, kind: str
) -> None:
    data = {"name": "s", "command": "echo {a}", "grids": [{"a": [1, 2]}], key: bad}
    with pytest.raises(SweepError) as refused:
        spec_from_dict(data)
    assert str(refused.value) == f"{key}: must be a string, got {kind}"
    assert refused.value.loc == (key,)


def test_a_request_s_null_separator_is_the_default_and_text_is_checked_as_before() -> None:
    data: dict[str, Any] = {"name": "s", "command": "echo {a}", "grids": [{"a": [1]}]}
    spec = spec_from_dict({**data, "item_sep": None, "kv_sep": None})  # (was 'None', refused)
    assert (spec.item_sep, spec.kv_sep) == (",", "=")
    assert spec_from_dict({**data, "item_sep": ";", "kv_sep": ":"}).kv_sep == ":"
    with pytest.raises(SweepError, match=r"^separators.item: '1' must be one punctuation"):
        spec_from_dict({**data, "item_sep": "1"})


@pytest.mark.parametrize(
    ("key", "default"),
    [("test_config_string_separator", "','"), ("test_config_string_indicator", "'-'")],
)
def test_a_gts_config_s_separator_of_another_kind_names_its_key(key: str, default: str) -> None:
    config = {"scheduler_config": {key: 1}, "test_config": {"a": [1, 2]}}
    with pytest.raises(SweepFileError) as refused:
        from_config(config, command="echo {a}")
    assert str(refused.value) == (
        f"config: scheduler_config.{key} is one punctuation character as text ({default}),"
        " got 1 (int)"
    )
    spec = from_config({"test_config": {"a": [1]}}, command="echo {a}")
    assert (spec.item_sep, spec.kv_sep) == (",", "-")  # GPU Task Scheduler's, as before
