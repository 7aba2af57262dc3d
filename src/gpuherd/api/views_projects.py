"""The jobs page's line for a `?project=` that no job has: it showed an empty table alone,
where a `?sweep=` of no sweep says so (views.sweep_error). Said in the same words
(views.none_named): `no project 'nope': the projects are nlp, vision`."""

from __future__ import annotations

from gpuherd.api.views import SWEEPS_NAMED, none_named
from gpuherd.store import Store
from gpuherd.store_rows import JobFilter


def project_error(store: Store, project: str, total: int) -> str | None:
    """Why a page filtered by `project` lists none of its `total` jobs when no job has that
    project; None when one has (the page's other filters, a state say, left none)."""
    if not project or total or store.count_jobs(match=JobFilter(project=project)):
        return None
    return none_named("project", project, store.project_names(SWEEPS_NAMED + 1))
