"""A sweep's spec as stored, checked, and its points expanded: both kept for the last few
sweeps asked about, as `sweep status` and a resubmission of a big sweep ask again and again.
"""

from __future__ import annotations

import threading

from gpuherd.core.sweep import Point, SweepError, SweepSpec, expand, spec_from_dict
from gpuherd.errors import HerdError, InvalidValue
from gpuherd.store import SweepRow

EXPANSIONS_KEPT = 8
"""Expanded specs kept (status and resubmission of a big sweep expand it each time)."""
_expansions: dict[str, tuple[Point, ...]] = {}
_expansions_lock = threading.Lock()
_specs: dict[str, SweepSpec] = {}


def stored_spec(row: SweepRow) -> SweepSpec:
    """The sweep's spec, checked; the last EXPANSIONS_KEPT are kept, as the stored dict's repr
    says (checking every value of a 40,000-point grid again took `sweep status` 50 ms)."""
    data = {k: v for k, v in row.spec.items() if k != "submission"}
    key = repr(data)
    with _expansions_lock:
        spec = _specs.pop(key, None)
    if spec is None:
        try:
            spec = spec_from_dict(data, stored=True)
        except SweepError as exc:
            raise HerdError(f"sweep {row.name!r}: its stored spec is invalid: {exc}") from None
    with _expansions_lock:
        if len(_specs) >= EXPANSIONS_KEPT:
            del _specs[next(iter(_specs))]  # the least recently used
        _specs[key] = spec
    return spec


def expand_points(spec: SweepSpec) -> list[Point]:
    """The spec's points; the last EXPANSIONS_KEPT specs' are kept, as the spec's repr (every
    field, 1, 1.0 and "1" told apart) says: `sweep status` expands the same spec each time,
    and 5,000 points took a fifth of a second. (Points are frozen; the list is a copy.)"""
    key = repr(spec)
    with _expansions_lock:  # (a submission expands on a worker thread, `status` on the loop)
        kept = _expansions.pop(key, None)
    if kept is None:
        kept = tuple(_expand(spec))
    with _expansions_lock:
        if len(_expansions) >= EXPANSIONS_KEPT:
            del _expansions[next(iter(_expansions))]  # the least recently used (dicts keep order)
        _expansions[key] = kept
    return list(kept)


def _expand(spec: SweepSpec) -> list[Point]:
    try:
        points = expand(spec)
    except SweepError as exc:
        raise InvalidValue(f"invalid sweep: {exc}") from None
    seen: dict[str, int] = {}
    for point in points:
        if point.run_dir in seen:  # folder_name keeps names unique; guard the invariant
            raise HerdError(
                f"points {seen[point.run_dir]} and {point.index} share the folder {point.run_dir}"
            )
        seen[point.run_dir] = point.index
    return points
