"""task_metrics: what a task's return value puts in metrics.json (the sweep table's cells;
the whole value is in result.json), and keys that JSON would write alike (task_values)."""

from __future__ import annotations

import json

from gpuherd import sweep_files
from gpuherd.task_metrics import METRIC_MAX_CHARS, METRICS_MAX_BYTES, table_metrics
from gpuherd.task_values import Storable


def test_a_curve_leaves_the_final_values_in_the_table() -> None:
    # Before: metrics.json held the whole value, 1.2 MiB: not read, every metric lost.
    curve = [float(k) for k in range(150_000)]
    value = {"acc": 0.9, "curve": curve, "per_class": {"cat": 0.5}, "note": "x" * 500}
    assert table_metrics(value) == {"acc": 0.9, "per_class": {"cat": 0.5}}
    assert table_metrics({"deep": [[curve]], "ok": True, "none": None}) == {
        "ok": True,
        "none": None,
    }
    assert table_metrics(0.5) == {"result": 0.5}
    assert table_metrics(curve) == {}  # (result.json has it)
    assert table_metrics("s" * METRIC_MAX_CHARS) == {}  # (its quotes make it longer)


def test_many_entries_stop_under_what_the_daemon_reads() -> None:
    kept = table_metrics({f"m{i}": i / 7 for i in range(50_000)})
    assert 1000 < len(kept) < 50_000 and "m0" in kept
    assert len(json.dumps(kept, indent=2)) <= sweep_files.JSON_MAX_BYTES
    assert METRICS_MAX_BYTES <= sweep_files.KEEP_MAX_BYTES


def test_keys_written_alike_keep_both_values_and_say_so() -> None:
    # Before: {"1": 0.75}, the 0.25 gone without a word (the key "1" written twice).
    for value in ({1: 0.25, "1": 0.75}, {"1": 0.75, 1: 0.25}):
        stored = Storable(value)
        assert json.loads(json.dumps(stored.value)) == {"1 (int)": 0.25, "1": 0.75}
        assert stored.note() == (
            "the return value was stored in result.json, with what JSON cannot hold as its "
            "text: result[1] (an int key written '1', as another key is: stored as '1 (int)')"
        )
    both = Storable({"x": {True: 1, "true": 2, None: 3, "null": 4, 1.5: 5}})
    assert both.value == {
        "x": {"true (bool)": 1, "true": 2, "null (NoneType)": 3, "null": 4, 1.5: 5}
    }
    again = Storable({1: "a", "1 (int)": "b", "1": "c"})
    assert again.value == {"1 (int 2)": "a", "1 (int)": "b", "1": "c"}
    plain = Storable({3: 0.5, "acc": 1})  # (keys that differ: as JSON writes them, no note)
    assert json.dumps(plain.value) == '{"3": 0.5, "acc": 1}' and plain.note() is None
