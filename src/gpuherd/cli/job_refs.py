"""`last` where the CLI takes job ids: the job submitted last (`gpuherd log`, `--after last`,
as task-spooler's `tsp -d`)."""

from __future__ import annotations

from collections.abc import Sequence

from gpuherd.client import Client
from gpuherd.errors import HerdError

LAST = "last"


def newest_job(client: Client) -> int | None:
    """The id of the job submitted last (None: no job yet)."""
    newest = client.get("/jobs", all=True, limit=1, newest=True)["jobs"]
    return int(newest[0]["id"]) if newest else None


def resolve_last(client: Client, ids: Sequence[int | str], option: str) -> list[int]:
    """`ids` with `last` replaced by the job submitted last, asked once."""
    if LAST not in ids:
        return [int(i) for i in ids]
    newest = newest_job(client)
    if newest is None:
        raise HerdError(f"{option} last: there is no job yet to wait for")
    return sorted({newest if i == LAST else int(i) for i in ids})
