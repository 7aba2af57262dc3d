"""The answers of the endpoints on the queue, the GPUs, the daemon and sweeps, as
/openapi.json describes them (answer_schemas.py says how)."""

from __future__ import annotations

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

COUNTS = of(INT)
"""How many jobs (or points) are in each state, by state; a state with none is left out."""
SAMPLE = {
    "type": "array",
    "prefixItems": [NUM, maybe(INT), maybe(INT)],
    "minItems": 3,
    "maxItems": 3,
    "description": "[time, memory used in bytes, utilisation in %]; null: not read",
}
PLACE = {"job": INT, "job_id": INT}
"""A job a GPU serves: `job_id` as every answer names a job, `job` as older daemons did."""

GPU = {
    "index": INT,
    "uuid": maybe(STR),
    "name": STR,
    "slots": INT,
    "state": {"type": "string", "enum": ["enabled", "draining", "lost", "removed", "unconfigured"]},
    "memory_total": maybe(INT),
    "memory_used": maybe(INT),
    "foreign_processes": INT,
    "foreign_memory": INT,
    "max_jobs": maybe(INT),
    "utilization": maybe(INT),
    "links": of(INT),
    "node": maybe(STR),
    "host": maybe(STR),
    "jobs": INTS,
    "runs": {"type": "array", "items": obj({**PLACE, "attempt": INT})},
    "processes": {
        "type": "array",
        "items": obj({"pid": INT, "memory": maybe(INT), "job_id": maybe(INT), "user": maybe(STR)}),
    },
    "draining": BOOL,
    "history": {"type": "array", "items": SAMPLE},
    "held": INT,
    "mem_runs": INT,
    "reserved": {"type": "array", "items": obj({**PLACE, "reason": STR})},
}
"""A GPU as `gpuherd gpus --json` has it (wire.device_view, ServiceSystem.gpus)."""

UNKNOWN_RUN = obj(
    {
        "job_id": INT,
        "attempt": INT,
        "pid": INT,
        "gpus": INTS,
        "folder": STR,
        "started_at": maybe(NUM),
    }
)
"""A run herd.db does not know, and the GPUs held for it (engine_unwatched.UnwatchedRun)."""

SWEEP_ROW = {
    "index": maybe(INT),
    "folder": STR,
    "run_dir": STR,
    "params": of({}),
    "other_command": maybe(STR),
    "in_spec": BOOL,
    "state": STR,
    "job_id": maybe(INT),
    "started_at": maybe(NUM),
    "ended_at": maybe(NUM),
    "seconds": maybe(NUM),
    "metrics": of({}),
    "peak_mem": maybe(INT),
}
"""A point of a sweep (sweep_table): `state` a job's, or its folder's marker (done,
failed, missing) where no job in the queue ran it; `index` null outside the spec."""
SWEEP_ROW_SOMETIMES = {
    "metrics_error": STR,
    "job_dir": maybe(STR),
    "log_files": maybe(ref("LogFiles")),
    "unknown_run": obj(
        {
            "job_id": INT,
            "attempt": INT,
            "pid": maybe(INT),
            "exit_code": maybe(INT),
            "signal": maybe(INT),
        }
    ),
}
"""`metrics_error`: why metrics.json was not read; `job_dir` and `log_files` with `paths`;
`unknown_run`: the ended run herd.db does not know that judged the point (unknown_ended)."""

SYSTEM_SCHEMAS: dict[str, Shape] = {
    "Gpus": obj(
        {
            "probe": STR,
            "probe_error": maybe(STR),
            "probe_failing_since": maybe(NUM),
            "read_at": maybe(NUM),
            "gpus": {"type": "array", "items": ref("Gpu")},
            "missing": INTS,
            "missing_draining": INTS,
            "unused": INTS,
            "removed": INTS,
            "adds_any": BOOL,
        },
        title="Gpus",
    ),
    "Gpu": obj(GPU, title="Gpu"),
    "Config": obj(
        {
            "settings": of(
                obj(
                    {"value": STR, "help": STR},
                    title="Setting",
                    # (herd.db's row for it not taken, as damaged: the line that says so)
                    optional={"not_taken": STR},
                )
            )
        },
        title="Config",
        description="Every setting by name: its value in effect and what it does.",
    ),
    "Daemon": obj(
        {
            "pid": INT,
            "socket": STR,
            "home": STR,
            "home_id": maybe(STR),
            "version": STR,
            "uptime": NUM,
            "queue_paused": BOOL,
            "stopping": maybe({"type": "string", "enum": ["leave", "drain", "kill"]}),
            "running_jobs": INT,
            "probe": STR,
            "scheduler_failing": maybe(STR),
            "gpus": INTS,
            "draining": INTS,
            "missing": INTS,
            "removed": INTS,
            "gpus_back": INTS,
            "counts": COUNTS,
            "last_job": maybe(INT),
            "database_replaced": maybe(STR),
            "unknown_runs": {"type": "array", "items": UNKNOWN_RUN},
        },
        title="Daemon",
        description=(
            "`home_id`: the home folder's DEV:INO as the daemon started (a client tells by it"
            " that a home renamed since is still this daemon's). "
            "`unknown_runs`: runs herd.db does not know (restored from an older backup, moved"
            " aside) found running as the daemon started, each holding its `gpus` until its"
            " last process ends; `started_at` null where its folder recorded no start."
        ),
    ),
    "Stopping": obj({"message": STR, "running": INT}, title="Stopping"),
    "Listener": obj(
        {
            "listening": BOOL,
            "address": maybe(STR),
            "url": maybe(STR),
            "remote_url": maybe(STR),
            "token_file": maybe(STR),
        },
        # (only where a POST's change could not be saved in herd.db: why, said by `ui`)
        optional={"not_saved": STR},
        title="Listener",
    ),
    "OneTimeUrl": obj({"url": STR}, title="OneTimeUrl"),
    "SweepList": obj(
        {"sweeps": {"type": "array", "items": ref("SweepSummary")}}, title="SweepList"
    ),
    "SweepSummary": obj(
        {
            "name": STR,
            "results_dir": STR,
            "points": INT,
            "counts": COUNTS,
            "outside": COUNTS,
            "samples": maybe(INT),
            "created_at": NUM,
            "updated_at": NUM,
        },
        title="SweepSummary",
    ),
    "SweepTable": obj(
        {
            "name": STR,
            "results_dir": STR,
            "results_gone": BOOL,
            "command": STR,
            "seed": maybe(INT),
            "samples": maybe(INT),
            "varying": STRS,
            "metric_keys": STRS,
            "counts": COUNTS,
            "matched": INT,
            "outside_matched": INT,
            "created_at": NUM,
            "updated_at": NUM,
            "rows": {"type": "array", "items": ref("SweepRow")},
            "outside": {"type": "array", "items": ref("SweepRow")},
            "warnings": STRS,
        },
        title="SweepTable",
        description="`outside`: the sweep's runs of points no longer in its spec.",
    ),
    "SweepRow": obj(SWEEP_ROW, optional=SWEEP_ROW_SOMETIMES, title="SweepRow"),
    "SweepSubmitted": obj(
        {
            "name": STR,
            "results_dir": STR,
            "seed": maybe(INT),
            "seed_chosen": BOOL,
            "points": INT,
            "new": INT,
            "rerun_failed": INT,
            "rerun_done": INT,
            "skipped_done": INT,
            "skipped_active": INT,
            "ids": INTS,
            "cancelled": INTS,
            "git": maybe(STR),
            "dry_run": BOOL,
            "max_parallel": maybe(INT),
            "warnings": STRS,
        },
        optional={"commands": STRS},
        title="SweepSubmitted",
        description="`commands` (a dry run's): the commands that would run.",
    ),
    "SweepRemoved": obj(
        {"name": STR, "removed": INT, "cancelled": INTS, "results_dir": STR},
        title="SweepRemoved",
        description=(
            "`removed`: how many of its jobs; `cancelled`: the jobs outside it cancelled as they"
            " waited for its jobs; its results folder stays."
        ),
    ),
}

MESSAGE = "Message"
SYSTEM_ANSWERS = {
    ("post", "/queue/pause"): answer_of(MESSAGE, "The queue paused"),
    ("post", "/queue/resume"): answer_of(MESSAGE, "The queue resumed"),
    ("get", "/gpus"): answer_of("Gpus", "The GPUs and the probe"),
    ("post", "/gpus"): answer_of(MESSAGE, "The GPU added, or its slots changed"),
    ("delete", "/gpus/{index}"): answer_of(MESSAGE, "The GPU removed"),
    ("post", "/gpus/{index}/{action}"): answer_of(MESSAGE, "The GPU drained or enabled"),
    ("get", "/config"): answer_of("Config", "Every setting"),
    ("post", "/config"): answer_of(MESSAGE, "The setting's new value"),
    ("get", "/daemon"): answer_of("Daemon", "The daemon's status"),
    ("post", "/daemon/stop"): answer_of("Stopping", "How the daemon stops"),
    ("get", "/daemon/listen"): answer_of("Listener", "The TCP listener"),
    ("post", "/daemon/listen"): answer_of("Listener", "The TCP listener now"),
    ("post", "/daemon/listen/code"): answer_of("OneTimeUrl", "A URL with a one-time code"),
    ("get", "/sweeps"): answer_of("SweepList", "Every sweep"),
    ("post", "/sweeps"): answer_of("SweepSubmitted", "What was submitted of the sweep"),
    ("get", "/sweeps/{name}"): answer_of("SweepTable", "The sweep's results table"),
    ("delete", "/sweeps/{name}"): answer_of("SweepRemoved", "The sweep removed"),
}
