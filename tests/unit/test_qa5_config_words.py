"""`config set` refusals that misled: cpu-jobs' left out `auto`, which it takes, and a project
given twice in project-limits was taken at its last count without a word."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuherd.config import SETTINGS, load_policy
from gpuherd.core.model import Policy
from gpuherd.store import Store


def test_a_wrong_cpu_jobs_names_every_word_it_takes() -> None:
    with pytest.raises(ValueError) as refused:
        SETTINGS["cpu-jobs"].parse("-1")
    assert str(refused.value) == (
        "invalid count '-1': use a number from 1 to 2**63 - 1, auto (one per core of this "
        "machine) or none (no cap)"
    )
    assert SETTINGS["cpu-jobs"].parse("auto") == "auto"  # as the refusal says


def test_a_project_given_twice_saved_before_the_refusal_keeps_its_last_count(
    tmp_path: Path,
) -> None:
    """A value an older gpuherd saved is read as it took it: dropped at the load, every
    project's limit was lost in silence."""
    store = Store(tmp_path / "herd.db")
    try:
        store.set_setting("config.project-limits", "a=1,b=3,a=2")
        assert load_policy(store, Policy()).project_limits == (("a", 2), ("b", 3))
    finally:
        store.close()


def test_a_project_given_twice_in_project_limits_is_refused() -> None:
    with pytest.raises(ValueError) as refused:
        SETTINGS["project-limits"].parse("a=1,b=3, a=2")
    assert str(refused.value) == "project 'a' is given twice (a=1, a=2): keep one"
