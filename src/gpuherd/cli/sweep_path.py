"""A sweep on the daemon, by name: for the commands that name one (`sweep status`, `sweep rm`,
`wait --sweep`)."""

from __future__ import annotations

from urllib.parse import quote

from gpuherd.client import Client
from gpuherd.errors import HerdError, NotFound
from gpuherd.typed_name import typed_name


def sweep_path(name: str) -> str:
    """/sweeps/NAME, or NotFound, in the daemon's words, for a name it would not even route."""
    # deferred: sweep_spec (dataclasses, random, hashlib) would cost every `wait` ~5 ms
    from gpuherd.core.sweep_spec import is_sweep_name

    if not is_sweep_name(name):
        raise NotFound(f"no sweep named {name!r}: `{typed_name()} sweep ls` lists the sweeps")
    return f"/sweeps/{quote(name, safe='')}"


def known_sweep(client: Client, name: str) -> None:
    """NotFound (the daemon's `no sweep named 'x': ...`) unless a sweep of that name exists.
    Asked only when its name found no job: its jobs prove a sweep exists (`sweep rm` takes
    them with it), and its table, even of one row, is read whole."""
    client.get(sweep_path(name), limit=1)


def recorded_seed(name: str) -> int | None:
    """The seed the daemon recorded for the sweep, which a submission without --seed draws
    with (so the dry run lists the points it would run, not others); None when no daemon
    runs or it does not know the sweep."""
    try:
        seed = Client().get(sweep_path(name)).get("seed")
    except HerdError:
        return None
    return seed if isinstance(seed, int) and not isinstance(seed, bool) else None
