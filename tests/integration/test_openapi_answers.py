"""What /openapi.json says each JSON endpoint answers, checked against a real daemon's
answers: jobs in every state a queue shows (queued, held, running, paused, succeeded,
failed, cancelled), a sweep with metrics, the GPUs with one removed under a running job,
the verbs. The schemas said `{}` of most answers (FastAPI's default): a client generated
from them got untyped answers. Each answer is checked with the schema made strict (no
field it does not name), so a field added to an answer and not to its schema fails too."""

from __future__ import annotations

import sys
from pathlib import Path

from answers_checked import Answers, problems
from conftest import Herd, wait_for

METRICS = "import json, sys; json.dump({'loss': float(sys.argv[1])}, open(sys.argv[2], 'w'))"


def test_every_json_answer_is_as_openapi_describes_it(herd: Herd, tmp_path: Path) -> None:
    herd.start("--fake-gpus", "2", "--listen", "127.0.0.1:0")
    api = Answers(herd)
    go = tmp_path / "go"
    running = herd.running_until(go)
    ok, failed = herd.submit("true"), herd.submit("echo no >&2; exit 3")
    herd.wait_state(ok, "succeeded")
    herd.wait_state(failed, "failed")
    paused = herd.running_until(go)
    api.check("POST", "/jobs/pause", {"ids": [paused]}, "/jobs/{action}")
    herd.wait_state(paused, "paused")
    held = herd.submit("--hold", "--name", "h", "--", "true")
    queued = api.check(
        "POST", "/jobs", {"jobs": [{"command": "true", "cwd": str(tmp_path), "gpus": 2}]}
    )["ids"][0]
    script = tmp_path / "metrics.py"
    script.write_text(METRICS)
    command = f"{sys.executable} {script} {{lr}} {{run_dir}}/metrics.json"
    sweep = {"spec": {"command": command, "grids": [{"lr": [0.1, 0.2]}], "name": "s1"}}
    sweep.update(cwd=str(tmp_path), options={"gpus": 0})
    points = api.check("POST", "/sweeps", sweep)["ids"]
    for point in points:
        herd.wait_state(point, "succeeded")

    # The reads, jobs in every state.
    assert api.check("GET", "/jobs")["jobs"]
    api.check("GET", "/jobs?all=true&limit=2&newest=true")
    assert api.check("GET", "/jobs?ids_only=true")["ids"]
    for job in (running, ok, failed, paused, held, queued, *points):
        api.check("GET", f"/jobs/{job}", template="/jobs/{job_id}")
    api.check("GET", f"/jobs/wait?ids={ok}&ids={failed}&timeout=0")
    api.check("POST", "/jobs/wait", {"ids": [ok, queued], "timeout": 0})
    api.check("GET", "/gpus")
    api.check("GET", "/config")
    assert api.check("GET", "/daemon")["counts"]
    api.check("GET", "/sweeps")
    rows = api.check("GET", "/sweeps/s1", template="/sweeps/{name}")["rows"]
    assert [row["metrics"] for row in rows] == [{"loss": 0.1}, {"loss": 0.2}]
    api.check("GET", "/sweeps/s1?paths=true&sort=-loss", template="/sweeps/{name}")
    dry = {"spec": {"command": "echo {x}", "grids": [{"x": [1]}], "name": "s2"}, "dry_run": True}
    assert api.check("POST", "/sweeps", {**dry, "cwd": str(tmp_path)})["commands"] == ["echo 1"]

    # The verbs.
    api.check("POST", f"/jobs/{queued}/priority", {"priority": 1}, "/jobs/{job_id}/priority")
    api.check("POST", "/jobs/priority", {"ids": [queued, held], "priority": 2})
    api.check("POST", f"/jobs/{held}/move", {"first": True}, "/jobs/{job_id}/move")
    api.check("POST", "/jobs/edit", {"ids": [held], "gpus": 1, "clear": ["name"]})
    refused = api.check("POST", "/jobs/edit", {"ids": [ok], "name": "x"})["results"]  # (ended)
    assert refused[0]["status"] == 409
    for verb in ("hold", "release", "kill"):
        api.check("POST", f"/jobs/{verb}", {"ids": [queued]}, "/jobs/{action}")
    api.check("POST", "/jobs/retry-held", {"ids": [failed]}, "/jobs/{action}")
    cancelled = api.check("GET", f"/jobs/{queued}", template="/jobs/{job_id}")
    assert cancelled["state"] == "cancelled"
    api.check("POST", "/queue/pause")
    api.check("POST", "/queue/resume")
    api.check("POST", "/gpus/1/drain", template="/gpus/{index}/{action}")
    api.check("POST", "/gpus/1/enable", template="/gpus/{index}/{action}")
    api.check("POST", "/gpus", {"index": 1, "slots": 2})
    api.check("DELETE", "/gpus/1", template="/gpus/{index}")  # the paused job runs on it
    removed = api.check("GET", "/gpus")["gpus"]
    assert [gpu["state"] for gpu in removed] == ["enabled", "removed"]
    api.check("POST", "/gpus", {"index": 1})
    api.check("POST", "/config", {"name": "retries", "value": "1"})
    assert api.check("GET", "/daemon/listen")["listening"] is True
    api.check("POST", "/daemon/listen/code")
    api.check("POST", "/daemon/listen", {"stop": True})
    api.check("DELETE", "/sweeps/s1", template="/sweeps/{name}")
    go.touch()
    api.check("POST", "/jobs/resume", {"ids": [paused]}, "/jobs/{action}")
    herd.wait_state(running, "succeeded")
    herd.wait_state(paused, "succeeded")
    stopping = api.check("POST", "/daemon/stop", {"mode": "drain"})
    assert stopping == {"message": "no job was running: stopping", "running": 0}
    wait_for(lambda: not herd.is_up(), what="the daemon to stop")

    # Every JSON answer the schema has was met above, and the check sees a disagreement.
    assert api.json_operations() - api.checked == set()
    job = dict(cancelled)
    schema = api.schema("GET", "/jobs/{job_id}")
    assert problems(schema, api.components, job) == []
    assert problems(schema, api.components, {**job, "gpus": "0"}) == [
        "gpus: '0' is not of type 'array'"
    ]
    del job["cwd"]
    assert problems(schema, api.components, {**job, "new_field": 1}) == [
        "(the answer): 'cwd' is a required property",
        "(the answer): Additional properties are not allowed ('new_field' was unexpected)",
    ]
