"""The bodies of the HTTP API's requests other than a job's (gpuherd.wire has those).

Kept out of gpuherd.wire so that `gpuherd run` does not build nine dataclasses it never uses;
gpuherd.wire still answers for these names.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gpuherd.wire import JobOptions, SubmitItem


@dataclass
class SubmitRequest:
    jobs: list[SubmitItem]
    env: dict[str, str] = field(default_factory=dict)
    """The environment of each job that has none of its own (`env` null, absent or empty): a
    file of 10,000 commands sends it once, not 10,000 times (with a 9 KB environment: 90 MB
    of JSON, 3 s). The CLI sends `"env": null`, which a daemon older than this field refuses
    rather than run the jobs without an environment."""

    def items(self) -> list[SubmitItem]:
        for item in self.jobs:
            if not item.env:
                item.env = self.env
        return self.jobs


@dataclass(kw_only=True)
class SweepOptions(JobOptions):
    """Submit options applied to every job of a sweep (as `submit` takes them)."""

    max_parallel: int | None = None
    order: str = "given"
    """given: the sweep's own order; longest-first: points that ran longest before go first."""


@dataclass
class SweepRequest:
    """POST /sweeps: a spec (core.sweep.spec_to_dict's shape) expanded and resumed by the
    daemon. A relative results_dir is resolved against `cwd`, where the jobs run."""

    spec: dict[str, Any]
    cwd: str
    env: dict[str, str] = field(default_factory=dict)
    options: SweepOptions = field(default_factory=SweepOptions)
    force: bool = False
    """Run every point again, done ones too."""
    yes: bool = False
    """Submit a sweep of more than 10,000 points."""
    dry_run: bool = False
    """Answer what would be submitted, and submit nothing."""
    task: bool = False
    """The command runs a Python task (gpuherd.worker): no warning for params it does not name."""


@dataclass
class IdsRequest:
    ids: list[int]


@dataclass
class EditRequest:
    """POST /jobs/edit: what waiting jobs are to ask for from now on; a field left null
    stays as it is, and `clear` sets fields back to undeclared (name, only_gpus, mem, ram,
    timeout, project)."""

    ids: list[int]
    command: str | None = None
    name: str | None = None
    gpus: int | None = None
    only_gpus: list[int] | None = None
    mem: int | None = None
    ram: int | None = None
    retries: int | None = None
    retry_delay: float | None = None
    timeout: float | None = None
    project: str | None = None
    clear: list[str] = field(default_factory=list)

    def changes(self) -> dict[str, Any]:
        return {
            name: value
            for name, value in vars(self).items()
            if name not in ("ids", "clear") and value is not None
        }


@dataclass
class PriorityRequest:
    priority: int


@dataclass
class MoveRequest:
    first: bool = False
    before: int | None = None


@dataclass
class GpuAddRequest:
    index: int
    slots: int = 1


@dataclass
class ConfigRequest:
    name: str
    value: str


@dataclass
class StopRequest:
    mode: str = "leave"
    """leave: running jobs keep running; drain: wait for them; kill: stop them."""
