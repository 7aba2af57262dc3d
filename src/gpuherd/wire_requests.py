"""The bodies of the HTTP API's requests other than a job's (gpuherd.wire has those).

Kept out of gpuherd.wire so that `gpuherd run` does not build nine dataclasses it never uses;
gpuherd.wire still answers for these names. Each one refuses a field it does not know and
takes numbers and flags only as JSON numbers and booleans (gpuherd.wire's Int, Float, Bool).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from gpuherd.wire import REFUSE_UNKNOWN_FIELDS, Bool, Float, Int, JobId, JobOptions, SubmitItem

_JOB_OPTIONS = frozenset(f.name for f in fields(JobOptions))


def options_sent(options: JobOptions | Mapping[str, Any]) -> dict[str, Any]:
    """A job's or a sweep's options as a client sends them: a JobOptions field left at None
    (the daemon's setting, or none) left out, so a daemon older than a field takes a request
    that does not use it. `gpuherd submit` and `sweep` sent `"grace": null` and
    `"max_log_size": null` unasked, which a daemon of the version before refused: after an
    upgrade, every submission failed until a restart. Other keys are kept (`env` is null on
    purpose: SubmitRequest.env)."""
    given = asdict(options) if isinstance(options, JobOptions) else options
    return {k: v for k, v in given.items() if v is not None or k not in _JOB_OPTIONS}


@dataclass
class SubmitRequest:
    __pydantic_config__ = REFUSE_UNKNOWN_FIELDS

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

    __pydantic_config__ = REFUSE_UNKNOWN_FIELDS

    max_parallel: Int | None = None
    order: str = "given"
    """given: the sweep's own order; longest-first: points that ran longest before go first."""


_TEXT = {"type": "string"}
_TEXT_OR_NULL = {"anyOf": [_TEXT, {"type": "null"}]}
_WHOLE_OR_NULL = {"anyOf": [{"type": "integer"}, {"type": "null"}]}
_VALUES = {"type": "object", "additionalProperties": {"type": "array"}}
SPEC_FIELDS: dict[str, dict[str, Any]] = {
    "name": _TEXT,
    "command": {**_TEXT_OR_NULL, "description": "The template: python train.py --lr {lr}"},
    "results_dir": {**_TEXT_OR_NULL, "description": "Default results/{sweep}; relative: to cwd"},
    "fixed": {"type": "object", "description": "A value for every point"},
    "grids": {
        "type": "array",
        "items": _VALUES,
        "description": 'The sweep file\'s grid, always a list: [{"lr": [0.1, 0.01]}]',
    },
    "random": {
        "type": "object",
        "additionalProperties": {
            "type": "object",
            "properties": {
                "kind": {"enum": ["choice", "uniform", "loguniform", "int"]},
                "values": {"type": "array"},
                "low": {"type": "number"},
                "high": {"type": "number"},
            },
            "required": ["kind"],
        },
        "description": 'A distribution a key: {"lr": {"kind": "loguniform", "low": 1e-4, '
        '"high": 0.1}}',
    },
    "samples": _WHOLE_OR_NULL,
    "seed": _WHOLE_OR_NULL,
    "shuffle": {"type": "boolean"},
    "exclude": {"type": "array", "items": {"type": "object"}},
    "exclude_expr": _TEXT_OR_NULL,
    "item_sep": _TEXT_OR_NULL,
    "kv_sep": _TEXT_OR_NULL,
}
"""The keys of SweepRequest's `spec` as /openapi.json describes them (core/sweep_spec.py's
spec_from_dict checks them, and refuses another naming these): the schema said "an object"
alone, and a client could not learn them (the sweep file's `grid` is `grids` here)."""


def _describe_spec(schema: dict[str, Any]) -> None:
    """Pydantic's `json_schema_extra`: `spec`'s keys into SweepRequest's schema. Its check
    stays spec_from_dict's, which says what is wrong in the words of a sweep's fields."""
    schema["properties"]["spec"].update(
        properties=copy.deepcopy(SPEC_FIELDS),  # (one schema's, whatever is done to it)
        required=["name"],
        additionalProperties=False,
        description="The sweep, as a sweep file gives it (docs/sweeps.md): a file's "
        "separators are item_sep and kv_sep, its exclude text exclude_expr, its job "
        "options go in options",
    )


_SWEEP_REQUEST_CONFIG = {**REFUSE_UNKNOWN_FIELDS, "json_schema_extra": _describe_spec}


@dataclass
class SweepRequest:
    """POST /sweeps: a spec (core.sweep.spec_to_dict's shape) expanded and resumed by the
    daemon. A relative results_dir is resolved against `cwd`, where the jobs run."""

    __pydantic_config__ = _SWEEP_REQUEST_CONFIG

    spec: dict[str, Any]
    cwd: str
    env: dict[str, str] = field(default_factory=dict)
    options: SweepOptions = field(default_factory=SweepOptions)
    force: Bool = False
    """Run every point again, done ones too."""
    yes: Bool = False
    """Submit a sweep of more than 10,000 points."""
    dry_run: Bool = False
    """Answer what would be submitted, and submit nothing."""
    task: Bool = False
    """The command runs a Python task (gpuherd.worker): no warning for params it does not name."""


@dataclass
class IdsRequest:
    __pydantic_config__ = REFUSE_UNKNOWN_FIELDS

    ids: list[JobId]
    grace: Float | None = None
    """A kill's only: seconds from SIGTERM to SIGKILL for this stop, instead of each job's
    own grace (0: SIGKILL at once); also moves the SIGKILL of a stop under way."""


WAIT_LONGEST = 3600.0
"""The longest `timeout` one wait request takes (a long poll: a client asks again)."""
WAIT_MOST_IDS = 100_000
"""The most ids one POST /jobs/wait takes: their states are read on the daemon's loop
(~0.05 s for 100,000); a client sends more in pieces (client.WAIT_POST_CHUNK)."""


@dataclass
class WaitRequest:
    """POST /jobs/wait: GET's query in a body, which holds 100,000 ids where a query string
    holds 500 (a wait over 100,000 jobs took 200 requests, each reading its jobs again)."""

    __pydantic_config__ = REFUSE_UNKNOWN_FIELDS

    ids: list[JobId]
    timeout: Float = 30.0
    """Seconds, up to WAIT_LONGEST (api/job_wait.py checks it)."""
    any: Bool = False
    """Answer as soon as one of the jobs has finished, not all (`as_completed`'s wait)."""


@dataclass
class EditRequest:
    """POST /jobs/edit: what waiting jobs are to ask for from now on; a field left null
    stays as it is, and `clear` sets fields back to undeclared (name, only_gpus, mem, ram,
    retry_delay, timeout, max_log_size, project, env_overrides, after, after_any, after_fail,
    output, error, begin)."""

    __pydantic_config__ = REFUSE_UNKNOWN_FIELDS

    ids: list[JobId]
    command: str | None = None
    name: str | None = None
    gpus: Int | None = None
    only_gpus: list[Int] | None = None
    mem: Int | None = None
    ram: Int | None = None
    exclusive: Bool | None = None
    """Each GPU to itself (true), or shared as the job's --mem says (false)."""
    retries: Int | None = None
    retry_delay: Float | None = None
    timeout: Float | None = None
    max_log_size: Int | None = None
    """Bytes its stdout or stderr log may reach (`--max-log-size`); 0: none, no cap."""
    project: str | None = None
    env_overrides: dict[str, str] | None = None
    """Variables to set (`--env`), the job's others kept."""
    cwd: str | None = None
    """The folder it runs in: the absolute path of an existing one."""
    grace: Float | None = None
    after: list[JobId] | None = None
    """The jobs it waits for the success of, from now on (replacing its own)."""
    after_any: list[JobId] | None = None
    """The jobs it waits for any end of, from now on (replacing its own)."""
    after_fail: list[JobId] | None = None
    """The jobs it waits for the failure of, from now on (replacing its own)."""
    begin: Float | None = None
    """Epoch seconds: held until then; a time past queues it now."""
    output: str | None = None
    """The file its stdout (and stderr, without `error`) goes to, as submit's `output`;
    relative: to the folder it runs in."""
    error: str | None = None
    """The file its stderr goes to, as submit's `error`."""
    clear: list[str] = field(default_factory=list)

    def changes(self) -> dict[str, Any]:
        return {
            name: value
            for name, value in vars(self).items()
            if name not in ("ids", "clear") and value is not None
        }


@dataclass
class PriorityRequest:
    __pydantic_config__ = REFUSE_UNKNOWN_FIELDS

    priority: Int


@dataclass
class PrioritiesRequest:
    """`gpuherd priority IDS P`: one priority for several jobs."""

    __pydantic_config__ = REFUSE_UNKNOWN_FIELDS

    ids: list[JobId]
    priority: Int


@dataclass
class MoveRequest:
    __pydantic_config__ = REFUSE_UNKNOWN_FIELDS

    first: Bool = False
    before: JobId | None = None
    swap: JobId | None = None
    """A waiting job whose place this one takes, and it this one's (gpuherd move --swap)."""


@dataclass
class GpuAddRequest:
    __pydantic_config__ = REFUSE_UNKNOWN_FIELDS

    index: Int
    slots: Int | None = None
    """None (or absent): a GPU in use keeps its slots, a removed one gets back those it had,
    a new one gets 1."""


@dataclass
class ConfigRequest:
    __pydantic_config__ = REFUSE_UNKNOWN_FIELDS

    name: str
    value: str


@dataclass
class StopRequest:
    __pydantic_config__ = REFUSE_UNKNOWN_FIELDS

    mode: str = "leave"
    """leave: running jobs keep running; drain: wait for them; kill: stop them."""
    grace: Float | None = None
    """With kill: seconds from SIGTERM to SIGKILL, instead of each job's own grace."""
