"""Text holding a lone surrogate (`"\\udc80"`: valid JSON, but no character UTF-8 encodes).

One in a sweep point's metrics.json failed every view of the whole sweep, `internal error
(PydanticSerializationError ...)`: json_parse.parse_json took it, and the daemon could not write
its answer. It is now refused as the file's one unreadable reason (a `metrics_error`), and the
worker stores a task's return value holding one (a file name decoded with "surrogateescape")
with it escaped, so that it writes no such file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuherd.json_parse import NotText, parse_json
from gpuherd.sweep_files import read_metrics
from gpuherd.task_values import Storable
from gpuherd.worker import write_metrics

SAID = "holds \\udc80, a lone surrogate (half of a UTF-16 pair), which is no character; write"
ESCAPED = '{"tag": "a\\udc80b"}'  # (JSON's escape, as json.dumps writes the surrogate)


@pytest.mark.parametrize(
    "data",
    [
        ESCAPED,
        ESCAPED.encode(),
        ESCAPED.encode("utf-16"),
        b'{"tag": "a\xed\xb2\x80b"}',  # (its UTF-8 bytes, which json.loads took too)
        '{"a\\udc80": 1}',  # a key
        '{"deep": [1, {"x": ["ok", "\\uDC80"]}]}',
        '{"high": "\\ud83d alone"}',
    ],
)
def test_a_lone_surrogate_is_not_text(data: str | bytes) -> None:
    with pytest.raises(NotText) as refused:
        parse_json(data)
    assert str(refused.value).startswith("holds \\ud")
    assert "a lone surrogate (half of a UTF-16 pair), which is no character" in str(refused.value)


def test_a_pair_and_escaped_backslashes_are_read_as_before() -> None:
    # A pair is the one character it stands for; `\\udc80` is a backslash and text.
    assert parse_json('{"e": "\\ud83d\\ude00", "t": "\\\\udc80"}') == {"e": "😀", "t": "\\udc80"}


def test_such_a_metrics_json_is_unread_with_its_reason(tmp_path: Path) -> None:
    (tmp_path / "metrics.json").write_text(ESCAPED)
    found = read_metrics(str(tmp_path))
    assert found["metrics"] == {}
    assert found["metrics_error"] == f"{tmp_path / 'metrics.json'}: {SAID} its text as UTF-8"
    json.dumps(found).encode()  # (what the daemon's answer must be able to hold)


def test_the_worker_stores_such_text_escaped(tmp_path: Path) -> None:
    returned = {"file": "a\udc80b", "a\udcff": 1, "files": ["\udc80"], "acc": 0.5}
    note = write_metrics(str(tmp_path), returned)
    stored = {"file": "a\\udc80b", "a\\udcff": 1, "files": ["\\udc80"], "acc": 0.5}
    assert json.loads((tmp_path / "result.json").read_text()) == stored
    assert read_metrics(str(tmp_path)) == {"metrics": stored}
    assert note is not None
    assert "result['file'] (text holding a surrogate, no character: as 'a\\\\udc80b')" in note
    assert "result[<a key>] (text holding a surrogate, no character: as 'a\\\\udcff')" in note
    note.encode()  # (printed on the job's stderr)
    write_metrics(str(tmp_path), "a\udc80b")
    assert read_metrics(str(tmp_path)) == {"metrics": {"result": "a\\udc80b"}}


def test_an_escaped_key_is_kept_apart_from_one_written_so() -> None:
    stored = Storable({"a\\udc80": 1, "a\udc80": 2})
    assert stored.value == {"a\\udc80": 1, "a\\udc80 (str)": 2}
    assert stored.note() is not None


def test_text_without_one_is_stored_as_it_is() -> None:
    assert Storable({"é": "ü 😀", "a\\udc80": "\\"}).note() is None
