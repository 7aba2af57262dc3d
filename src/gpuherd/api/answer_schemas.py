"""What the API's JSON endpoints answer, as /openapi.json describes it (describe_answers).

The routes build their answers as dicts (wire.job_view, Service.status, ...) and most send
them without a response_model: validating or filtering 100,000 jobs' answer would cost the
daemon time and could drop fields. So FastAPI's schema said each answer was `{}`, and a
client generated from it got untyped answers. These schemas say them as they are; the
answers are the truth (tests/integration/test_openapi_answers.py checks each against its
schema). An answer may gain fields (`additionalProperties`), never lose one: every field
an answer always has is `required`.
"""

from __future__ import annotations

from typing import Any

from gpuherd.api.answer_schemas_system import SYSTEM_ANSWERS, SYSTEM_SCHEMAS
from gpuherd.api.answer_shapes import (
    BOOL,
    INT,
    INTS,
    NUM,
    STR,
    STRS,
    Shape,
    answer_of,
    maybe,
    obj,
    of,
    ref,
)
from gpuherd.core.states import JobState, OutcomeKind
from gpuherd.wait_removed import REMOVED

STATE = {"type": "string", "enum": [s.value for s in JobState]}
WAITED_STATE = {"type": "string", "enum": [*(s.value for s in JobState), REMOVED]}
"""A job's state in a wait's answer: `removed` too, for a job removed (wait_removed.py)."""
OUTCOME = maybe({"type": "string", "enum": [k.value for k in OutcomeKind]})
ENDING = {
    "outcome": OUTCOME,
    "exit_code": maybe(INT),
    "signal": maybe(INT),
    "message": maybe(STR),
}
"""How a job or an attempt ended (wire.outcome_view); all null until it has."""
LOG_FILES = obj({"stdout": STR, "stderr": STR}, title="LogFiles")

JOB = {
    "id": INT,
    "name": maybe(STR),
    "state": STATE,
    **ENDING,
    "gpus": INTS,
    "gpus_requested": INT,
    "only_gpus": INTS,
    "mem": maybe(INT),
    "exclusive": BOOL,
    "ram": maybe(INT),
    "peak_mem": maybe(INT),
    "over_mem": BOOL,
    "pid": maybe(INT),
    "attempt": INT,
    "retries": maybe(INT),
    "retries_left": maybe(INT),
    "oom_retries": maybe(INT),
    "retry_delay": maybe(NUM),
    "retry_at": maybe(NUM),
    "timeout": maybe(NUM),
    "max_log_size": maybe(INT),
    "no_output_timeout": maybe(NUM),
    "kill_on_no_output": BOOL,
    "grace": maybe(NUM),
    "priority": INT,
    "project": maybe(STR),
    "sweep": maybe(STR),
    "git": maybe(STR),
    "after": INTS,
    "after_any": INTS,
    "after_fail": INTS,
    "command": STR,
    "cwd": STR,
    "output": maybe(STR),
    "error": maybe(STR),
    "begin": maybe(NUM),
    "created_at": NUM,
    "started_at": maybe(NUM),
    "ended_at": maybe(NUM),
    "reason": maybe(STR),
    "paused_seconds": NUM,
    "paused_at": maybe(NUM),
    "seconds": maybe(NUM),
    "timeout_at": maybe(NUM),
    "job_dir": STR,
    "log_files": ref("LogFiles"),
}
"""A job as `ls --json` lists it (wire.job_view with listing.stored_views' fields)."""

ATTEMPT = {
    "job_id": INT,
    "number": INT,
    "gpus": INTS,
    "gpu_uuids": STRS,
    "dir": STR,
    "host": STR,
    "started_at": NUM,
    "pid": maybe(INT),
    "ended_at": maybe(NUM),
    **ENDING,
    "mem": maybe(INT),
    "peak_mem": maybe(INT),
    "peak_rss": maybe(INT),
    "cpu_time": maybe(NUM),
    "over_mem": BOOL,
    "over_ram": BOOL,
    "log_files": ref("LogFiles"),
}
EVENT = {
    "job_id": INT,
    "at": NUM,
    "event": STR,
    "from_state": maybe(STR),
    "to_state": STR,
    "detail": maybe(STR),
}
"""A line of a job's history (store_views.EventRow); `to_state` is "" where none changed."""

JOB_SCHEMAS: dict[str, Shape] = {
    "LogFiles": LOG_FILES,
    "Job": obj(JOB, title="Job"),
    "JobDetail": obj(
        {
            **JOB,
            "env_overrides": of(STR),
            "attempts": {"type": "array", "items": ref("Attempt")},
            "events": {"type": "array", "items": ref("JobEvent")},
            "stderr_tail": STRS,
            "gpus_gone": INTS,
        },
        title="JobDetail",
        description="A job with its attempts, history and the tail of its stderr (`show`).",
    ),
    "Attempt": obj(ATTEMPT, title="Attempt"),
    "JobEvent": obj(EVENT, title="JobEvent"),
    "JobList": obj(
        {
            "jobs": {"type": "array", "items": ref("Job")},
            "more": INT,
            "more_earlier": INT,
            "filtered": STRS,
            "database_replaced": maybe(STR),
            "unreadable": {
                "type": "array",
                "items": obj({"id": INT, "error": STR}, title="UnreadableJob"),
            },
        },
        title="JobList",
        description="`more`: the jobs that match that the limit left out, `more_earlier` "
        "of them before the first listed; `filtered`: the filters this daemon applies; "
        "`database_replaced`: what to do about a herd.db replaced while the daemon ran, as "
        "`GET /status` says it (null when it was not); `unreadable`: the jobs left out as "
        "their rows in herd.db cannot be read, each with why and the way out.",
    ),
    "JobIds": obj({"ids": INTS, "filtered": STRS}, title="JobIds"),
    "Submitted": obj(
        {"ids": INTS, "draining": BOOL, "cancelled": INTS, "warnings": STRS},
        title="Submitted",
    ),
    "Waited": obj(
        {
            "done": BOOL,
            "states": of(WAITED_STATE),
            "endings": of(ref("Ending")),
        },
        title="Waited",
        description="`states` and `endings` by job id (as text); `endings`: how each job "
        "that ended but did not succeed ended. A job removed (`gpuherd rm`, `clean`) before "
        "or during the wait is `removed`, its wait over (`done` counts it), with an ending "
        "whose `message` says so; an id never given to a job is refused (404).",
    ),
    "Ending": obj({"state": WAITED_STATE, **ENDING}, title="Ending"),
    "Results": obj(
        {"results": {"type": "array", "items": ref("Result")}},
        title="Results",
        description="One result per job named, in the order named.",
    ),
    "Edited": obj(
        {"results": {"type": "array", "items": ref("Result")}, "warnings": STRS},
        title="Edited",
        description="One result per job named, in the order named; `warnings`: what a "
        "submission of the jobs as edited would warn of, a line each (naming its jobs).",
    ),
    "Result": obj(
        {"id": INT, "ok": BOOL, "message": STR},
        optional={"status": INT},
        title="Result",
        description="`status`, of a refusal: the HTTP status the verb on this job alone "
        "would have answered (422: a value it cannot have, 409: not in its state, 404: no "
        "such job).",
    ),
    "Message": obj({"message": STR}, title="Message", description="What was done, one line."),
}

JOB_ANSWERS = {
    ("post", "/jobs"): answer_of("Submitted", "The ids of the jobs submitted"),
    ("get", "/jobs"): {
        "description": "The jobs (JobIds with `ids_only`)",
        "content": {"application/json": {"schema": {"anyOf": [ref("JobList"), ref("JobIds")]}}},
    },
    ("get", "/jobs/wait"): answer_of("Waited", "Whether the jobs have finished, and how"),
    ("post", "/jobs/wait"): answer_of("Waited", "Whether the jobs have finished, and how"),
    ("get", "/jobs/{job_id}"): answer_of("JobDetail", "The job"),
    ("post", "/jobs/edit"): answer_of("Edited", "What was changed of each job"),
    ("post", "/jobs/priority"): answer_of("Results", "Each job's new priority"),
    ("post", "/jobs/{action}"): answer_of("Results", "What the verb did to each job"),
    ("post", "/jobs/{job_id}/priority"): answer_of("Message", "The job's new priority"),
    ("post", "/jobs/{job_id}/move"): answer_of("Message", "Where the job was moved"),
}

PREFIX = "/api/v1"
ANSWERS = {**JOB_ANSWERS, **SYSTEM_ANSWERS}
"""The 200 answer of each JSON endpoint, by (method, path under PREFIX). The log
(text/plain) and the streams (text/event-stream) are described by their routes."""


def describe_answers(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` (FastAPI's) with each JSON endpoint's 200 answer as it is, in place of the
    `{}` FastAPI says of an answer it does not validate."""
    schemas = schema.setdefault("components", {}).setdefault("schemas", {})
    schemas.update(JOB_SCHEMAS)
    schemas.update(SYSTEM_SCHEMAS)
    for (method, path), answer in ANSWERS.items():
        schema["paths"][PREFIX + path][method]["responses"]["200"] = answer
    return schema
