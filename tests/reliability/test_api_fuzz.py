"""The HTTP API fuzzed from its own OpenAPI schema (schemathesis), over the TCP listener with
the token: no 5xx answer, the daemon still answers, and a rejected request changes nothing.

The daemon's queue is paused throughout, so nothing a fuzz case submits ever runs; the
operations that would stop the daemon (`POST /daemon/stop`), restart dispatching
(`POST /queue/resume`) or stream without end (`/events`, `/jobs/{id}/log/follow`) are left out
of the fuzzing and checked by hand below. Cases per operation and mode: 30 (CI), 200 (full).
"""

from __future__ import annotations

import json
import os
import time
import urllib.request
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

schemathesis = pytest.importorskip("schemathesis")

from faults import elapsed, free_port, record, scaled  # noqa: E402
from hypothesis import HealthCheck, Phase, given, settings  # noqa: E402
from hypothesis.errors import Unsatisfiable  # noqa: E402
from schemathesis import GenerationMode  # noqa: E402

from conftest import Herd  # noqa: E402
from gpuherd.core.commands import MAX_COMMAND_BYTES  # noqa: E402
from gpuherd.errors import HerdError  # noqa: E402
from gpuherd.submission import EXEC_RESERVE, exec_room  # noqa: E402

NOT_FUZZED = {
    "POST /api/v1/daemon/stop",
    "POST /api/v1/queue/resume",
    "GET /api/v1/events",
    "GET /api/v1/jobs/{job_id}/log/follow",
}
FIXED_QUERY = {"GET /api/v1/jobs/wait": {"timeout": 0}}  # a long poll: answer at once


class Target:
    def __init__(self, herd: Herd, port: int, scratch: Path) -> None:
        self.herd = herd
        self.base = f"http://127.0.0.1:{port}"
        self.token = (herd.home / "ui_token").read_text().strip()
        self.headers = {"Authorization": f"token {self.token}"}
        self.scratch = scratch

    def raw(self, method: str, path: str, token: bool = True) -> tuple[int, bytes]:
        request = urllib.request.Request(
            self.base + path,
            method=method,
            headers=self.headers if token else {},
            data=b"{}" if method in ("POST", "DELETE") else None,
        )
        if request.data is not None:
            request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=10) as answer:
                return answer.status, answer.read()
        except urllib.error.HTTPError as error:
            return error.code, error.read()

    def snapshot(self) -> dict[str, Any]:
        """Everything a request could change, read over the Unix socket."""
        client = self.herd.client
        return {
            "jobs": client.get("/jobs", all=True)["jobs"],
            "gpus": [(g["index"], g["slots"], g["state"]) for g in client.get("/gpus")["gpus"]],
            "config": client.get("/config"),
            "paused": client.get("/daemon")["queue_paused"],
            "sweeps": client.get("/sweeps"),
        }


def prepare(herd: Herd, scratch: Path) -> Target:
    """A daemon listening on a free port, with jobs 1 (succeeded), 2 (failed), 3 (held) and
    4 (queued), and its queue paused."""
    port = free_port()
    herd.start("--fake-gpus", "2", "--listen", f"127.0.0.1:{port}")
    ok = herd.submit("--", "true")
    bad = herd.submit("--", "sh", "-c", "exit 3")
    herd.wait_state(ok, "succeeded")
    herd.wait_state(bad, "failed")
    herd.cli("pause")
    herd.submit("--hold", "--name", "held", "--", "true")
    herd.submit("--name", "queued", "--", "true")
    scratch.mkdir()
    return Target(herd, port, scratch)


@pytest.fixture
def target(herd: Herd, tmp_path: Path) -> Target:
    """A daemon of the test's own (for the tests that change things)."""
    return prepare(herd, tmp_path / "scratch")


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Target]:
    """One daemon for the requests that must change nothing."""
    root = tmp_path_factory.mktemp("api")
    herd = Herd(root / "home")
    try:
        yield prepare(herd, root / "scratch")
    finally:
        herd.cleanup()


# 500s from known bugs that the fuzzing would tolerate while they have xfail tests of their
# own; none is known now. Add a line here (and an xfail test) only while a bug is open.
KNOWN_BUGS: dict[str, str] = {}


def known_bug(code: int, text: str) -> str | None:
    if code != 500:
        return None
    return next((name for sign, name in KNOWN_BUGS.items() if sign in text), None)


def confine(case: Any, scratch: Path) -> None:
    """A sweep that happens to be valid would write its folders under `cwd`: keep that in the
    test's scratch folder (validity is unchanged: it is an existing absolute folder too)."""
    body = case.body
    if isinstance(body, dict) and isinstance(body.get("cwd"), str) and os.path.isdir(body["cwd"]):
        body["cwd"] = str(scratch)


def no_long_poll(case: Any, scratch: Path) -> None:
    """A POST /jobs/wait body the daemon would take waits up to its `timeout` (30 s when
    absent): make it 0, so the case answers at once (GET's FIXED_QUERY); others stay."""
    body = case.body
    if not isinstance(body, dict):
        return
    timeout = body.get("timeout", 30)
    if isinstance(timeout, int | float) and not isinstance(timeout, bool) and 0 < timeout <= 3600:
        body["timeout"] = 0


BEFORE_SENDING = {"POST /api/v1/sweeps": confine, "POST /api/v1/jobs/wait": no_long_poll}


def fuzz(strategy: Any, examples: int, check: Any) -> bool:
    """Run `check` on `examples` cases drawn from `strategy` (seeded: the same ones each run)."""

    @settings(
        max_examples=examples,
        deadline=None,
        derandomize=True,
        database=None,
        phases=[Phase.explicit, Phase.generate, Phase.shrink],
        suppress_health_check=list(HealthCheck),
    )
    @given(case=strategy)
    def run(case: Any) -> None:
        check(case)

    try:
        run()
    except Unsatisfiable:  # no invalid input exists (an operation without parameters)
        return False
    return True


# Seconds: ~45 s alone, 114 s and more on a loaded machine (a CI run hit the suite's 120 s
# limit inside hypothesis, which then called its data generation flaky).
@pytest.mark.timeout(360)
def test_fuzzing_the_api_gives_no_server_error_and_rejections_change_nothing(
    target: Target,
) -> None:
    examples = scaled(30, 200)
    status, raw = target.raw("GET", "/openapi.json")
    assert status == 200
    schema = schemathesis.openapi.from_dict(json.loads(raw))
    began = time.monotonic()
    statuses: Counter[str] = Counter()
    known: Counter[str] = Counter()
    per_operation: Counter[str] = Counter()
    before = {"state": target.snapshot()}

    def check(label: str, case: Any) -> None:
        if prepare := BEFORE_SENDING.get(label):
            prepare(case, target.scratch)
        response = case.call(base_url=target.base, headers=target.headers, timeout=15)
        code = response.status_code
        per_operation[label] += 1
        now = target.snapshot()
        problems: list[str] = []
        bug = known_bug(code, response.text)
        if bug:
            known[bug] += 1
        else:
            statuses[f"{code // 100}xx"] += 1
        if code >= 500 and not bug:
            problems.append(f"{label}: {code} {response.text[:300]} for {case.as_curl_command()}")
        if code >= 400 and now != before["state"]:
            problems.append(f"{label}: answered {code} but changed the queue ({case.body!r})")
        before["state"] = now  # a 2xx may change things; the next comparison starts here
        assert not problems, "\n".join(problems)

    operations = 0
    unsatisfiable: list[str] = []
    for result in schema.get_all_operations():
        operation = result.ok()
        label = f"{operation.method.upper()} {operation.path}"
        if label in NOT_FUZZED:
            continue
        operations += 1
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            strategy = operation.as_strategy(generation_mode=mode, query=FIXED_QUERY.get(label))

            if not fuzz(strategy, examples, lambda case, label=label: check(label, case)):
                unsatisfiable.append(f"{label} ({mode.value})")

    # still answering, still paused, and nothing a fuzz case queued ever ran
    assert target.herd.client.get("/daemon")["queue_paused"] is True
    jobs = target.herd.client.get("/jobs", all=True)["jobs"]
    assert not [
        j for j in jobs if j["state"] in ("running", "paused") or (j["id"] > 4 and j["pid"])
    ]
    for job in jobs:  # fuzz-made jobs must never run once the test ends
        if job["state"] in ("queued", "held"):
            target.herd.client.post("/jobs/kill", {"ids": [job["id"]]})
    total = sum(statuses.values()) + sum(known.values())
    record(
        "api_fuzz",
        operations=operations,
        cases=total,
        statuses=dict(sorted(statuses.items())),
        known_bug_500s=dict(known),
        fewest_cases_per_operation=min(per_operation.values()),
        no_invalid_input=unsatisfiable,
        seconds=elapsed(began),
    )
    assert statuses["5xx"] == 0
    assert total >= operations * 2


def test_every_operation_refuses_a_request_without_the_token(shared: Target) -> None:
    """Every operation of the schema, the unfuzzed ones too, with sample path parameters."""
    status, raw = shared.raw("GET", "/openapi.json")
    paths = json.loads(raw)["paths"]
    checked = 0
    for path, operations in paths.items():
        concrete = (
            path.replace("{job_id}", "1")
            .replace("{action}", "kill")
            .replace("{index}", "0")
            .replace("{name}", "x")
        )
        for method in operations:
            status, body = shared.raw(method.upper(), concrete, token=False)
            assert status == 403, (method, concrete, status, body[:200])
            checked += 1
    assert shared.raw("GET", "/openapi.json", token=False)[0] == 403
    assert checked >= 20
    assert shared.herd.is_up() and len(shared.herd.ls_all()) == 4  # nothing changed


def test_the_unfuzzed_operations_reject_bad_input_cleanly(shared: Target) -> None:
    for method, path in [
        ("POST", "/api/v1/daemon/stop"),  # body {} means mode "leave": not sent
        ("GET", "/api/v1/jobs/999/log/follow"),
        ("GET", "/api/v1/jobs/abc/log/follow"),
        ("GET", "/api/v1/jobs/1/log/follow?stream=../../etc/passwd"),
        ("GET", "/api/v1/jobs/1/log/follow?offset=-1"),
        ("GET", "/api/v1/events?x=%00"),
    ]:
        if path == "/api/v1/daemon/stop":
            request = urllib.request.Request(
                shared.base + path,
                method="POST",
                data=b'{"mode": "explode"}',
                headers={**shared.headers, "Content-Type": "application/json"},
            )
            try:
                urllib.request.urlopen(request, timeout=10)
                code = 200
            except urllib.error.HTTPError as error:
                code = error.code
            assert code == 422, code  # a bad value of the body, as everywhere (was 400)
            continue
        if path.startswith("/api/v1/events"):
            continue  # a stream that never ends; its 403 without the token is checked above
        status, body = shared.raw(method, path)
        assert 400 <= status < 500, (path, status, body[:200])
    assert shared.herd.is_up()
    assert shared.raw("POST", "/api/v1/queue/resume", token=False)[0] == 403
    assert shared.herd.client.get("/daemon")["queue_paused"] is True


# ---- what the fuzzing found: one deterministic request each ------------------------------------

HUGE = 2**63  # one more than SQLite's largest INTEGER


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("GET", f"/api/v1/jobs/{HUGE}", None),
        ("GET", f"/api/v1/jobs/{HUGE}/log", None),
        ("GET", f"/api/v1/jobs/wait?ids={HUGE}&timeout=0", None),
        ("POST", "/api/v1/jobs/kill", {"ids": [HUGE]}),
        ("POST", "/api/v1/jobs/3/priority", {"priority": HUGE}),
        ("POST", "/api/v1/jobs/3/move", {"before": HUGE}),
        ("POST", "/api/v1/jobs", {"jobs": [{"command": "true", "cwd": "/", "after": [HUGE]}]}),
        ("POST", "/api/v1/jobs", {"jobs": [{"command": "true", "cwd": "/", "retries": HUGE}]}),
        ("GET", f"/api/v1/jobs?limit={HUGE}", None),  # was a 500 (datatype mismatch)
        ("GET", f"/api/v1/jobs/1/log?offset={HUGE}", None),  # a 200 whose stream then broke
        ("GET", f"/api/v1/jobs/1/log/follow?offset={HUGE}", None),
        ("GET", f"/api/v1/jobs/1/log?lines={HUGE}", None),
    ],
    ids=[
        "show",
        "log",
        "wait",
        "kill",
        "priority",
        "move",
        "after",
        "retries",
        "limit",
        "offset",
        "follow-offset",
        "lines",
    ],
)
def test_an_integer_beyond_64_bits_is_a_clean_4xx(
    shared: Target, method: str, path: str, body: Any
) -> None:
    before = shared.snapshot()
    status = call(shared, method, path, body)
    assert 400 <= status < 500, status
    assert shared.snapshot() == before


@pytest.mark.parametrize("where", ["cwd", "env"])
def test_a_nul_byte_in_a_sweep_is_a_clean_4xx(shared: Target, where: str) -> None:
    body: dict[str, Any] = {"spec": {"name": "nul", "command": "echo"}, "cwd": str(shared.scratch)}
    if where == "cwd":
        body["cwd"] += "/\0x"
    else:
        body["env"] = {"PATH": "/bin\0"}
    before = shared.snapshot()
    status = call(shared, "POST", "/api/v1/sweeps", body)
    assert 400 <= status < 500, status
    assert shared.snapshot() == before


def call(target: Target, method: str, path: str, body: Any) -> int:
    request = urllib.request.Request(
        target.base + path,
        method=method,
        headers={**target.headers, "Content-Type": "application/json"},
        data=None if body is None else json.dumps(body).encode(),
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as error:
        return int(error.code)


def test_an_unknown_endpoint_or_method_answers_with_an_error_line(shared: Target) -> None:
    # FastAPI's own {"detail": "Not Found"} / {"detail": "Method Not Allowed"} before.
    for method, path, status, message in [
        (
            "GET",
            "/api/v2/jobs",
            404,
            "no such endpoint: GET /api/v2/jobs (/openapi.json lists them)",
        ),
        (
            "DELETE",
            "/api/v1/jobs/5",
            405,
            "DELETE is not allowed on /api/v1/jobs/5: use GET (/openapi.json describes it)",
        ),
    ]:
        code, body = shared.raw(method, path)
        assert (code, json.loads(body)) == (status, {"error": message})


def test_a_misspelt_job_field_is_refused_not_dropped(shared: Target) -> None:
    # {"gpu": 2} ran on 1 GPU, the field silently dropped.
    before = shared.snapshot()
    job = {"command": "true", "cwd": str(shared.scratch), "gpu": 2}
    with pytest.raises(HerdError, match=r"jobs\.0\.gpu: unknown field \(misspelt\?\)"):
        shared.herd.client.post("/jobs", {"jobs": [job]})
    assert shared.snapshot() == before


# ---- what a raw client sends: capped as the CLI and the Python API cap it ------------------
# A 50 MB environment (or 1 million variables, or a 200 KB name) sent over HTTP was stored,
# and the job failed at its start ("Argument list too long").

BIG = "x" * (50 * 1024 * 1024)
LONG = "n" * 200_000
ARGUMENT = "over the 128 KiB a program's argument may hold: give a shorter one"
VARIABLE = "Linux caps an environment variable at 128 KiB with its name: give a shorter one"
"""A name, project and sweep: jobs get them as GPUHERD_JOB_NAME=... (at most 128 KiB)."""


def answer(target: Target, path: str, body: Any) -> tuple[int, Any]:
    """POST `body` over the TCP listener: the status and the answer's JSON."""
    request = urllib.request.Request(
        target.base + path,
        method="POST",
        headers={**target.headers, "Content-Type": "application/json"},
        data=json.dumps(body).encode(),
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return int(response.status), json.loads(response.read())
    except urllib.error.HTTPError as error:
        return int(error.code), json.loads(error.read())


ONE_MILLION = {f"V{i}": "" for i in range(1_000_000)}
ONE_MILLION_BYTES = sum(len(name) + 10 for name in ONE_MILLION) + len("true") + 9 + EXEC_RESERVE


@pytest.mark.parametrize(
    ("job", "batch_env", "message"),
    [
        (
            {"env": {"BIG": BIG}},
            None,
            "the environment variable 'BIG' is 52,428,804 bytes with its name, over the 128 KiB "
            "an environment variable may hold: put the value in a file and give its path",
        ),
        (  # the environment of a whole batch, sent once
            {"env": None},
            {"PATH": "/bin", "BIG": BIG},
            "the environment variable 'BIG' is 52,428,804 bytes with its name, over the",
        ),
        (
            {"env_overrides": {"V" * 200_000: "1"}},
            None,
            f"the environment variable '{'V' * 40}…' is 200,002 bytes with its name, over the",
        ),
        (
            {"env": ONE_MILLION},
            None,
            f"the job's environment (1,000,000 variables) and command take "
            f"{ONE_MILLION_BYTES:,} bytes with gpuherd's own, over the ",
        ),
        ({"name": LONG}, None, "the name is 200,000 bytes, over the 131,054 it may have: "),
        ({"project": LONG}, None, "the project is 200,000 bytes, over the 131,051 it may "),
        ({"sweep": LONG}, None, "the sweep is 200,000 bytes, over the 131,053 it may have: "),
        ({"git": LONG}, None, f"the git commit is 200,000 bytes, {ARGUMENT}"),
        (
            {"folder": "/" + "d/" * 3000},
            None,
            "the folder is 6,001 bytes, over the 4,095 bytes a path may have: give a shorter one",
        ),
        (
            {"cwd": "/" + "d/" * 3000},
            None,
            "the working directory is 6,001 bytes, over the 4,095 bytes a path may have",
        ),
    ],
    ids=[
        "env-50MB",
        "batch-env",
        "env-name",
        "env-1M-vars",
        "name",
        "project",
        "sweep",
        "git",
        "folder",
        "cwd",
    ],
)
def test_a_job_larger_than_a_client_sends_is_a_4xx_naming_the_limit(
    shared: Target, job: dict[str, Any], batch_env: dict[str, str] | None, message: str
) -> None:
    before = shared.snapshot()
    body: dict[str, Any] = {"jobs": [{"command": "true", "cwd": str(shared.scratch), **job}]}
    if batch_env is not None:
        body["env"] = batch_env
    status, error = answer(shared, "/api/v1/jobs", body)
    assert status == 422, error  # a value the daemon refuses (was 400)
    assert error["error"].startswith(message), error
    assert shared.snapshot() == before


def test_a_sweep_or_an_edit_over_a_cap_is_refused_and_changes_nothing(shared: Target) -> None:
    before = shared.snapshot()
    spec = {"name": "big", "command": "echo {x}", "grids": [{"x": [1, 2]}]}
    body = {"spec": spec, "cwd": str(shared.scratch), "env": {"BIG": BIG}}
    status, error = answer(shared, "/api/v1/sweeps", body)
    assert status == 422, error
    assert error["error"].startswith("sweep: the environment variable 'BIG' is 52,428,804 bytes")
    held = next(job["id"] for job in before["jobs"] if job["name"] == "held")
    status, edited = answer(shared, "/api/v1/jobs/edit", {"ids": [held], "name": LONG})
    message = (
        f"job {held}: the name is 200,000 bytes, over the 131,054 it may have: jobs get it as "
        f"GPUHERD_JOB_NAME, and {VARIABLE}"
    )
    refused = {"id": held, "ok": False, "message": message, "status": 422}
    assert (status, edited) == (200, {"results": [refused], "warnings": []})
    assert shared.snapshot() == before


def test_an_environment_that_fits_runs_and_one_byte_more_is_refused(target: Target) -> None:
    # The cap is what Linux lets the job start with: a quarter of `ulimit -s` (inherited from
    # this process by the daemon and its jobs), less what gpuherd itself adds to the job.
    room = exec_room() - EXEC_RESERVE - len("true") - 9  # the command, its NUL and pointer
    value = "v" * (MAX_COMMAND_BYTES - 64)
    env = {f"V{i}": value for i in range((room - 1000) // len(f"V00={value}\0" + 8 * "p"))}
    env["PATH"] = "/usr/bin:/bin"
    used = sum(len(name) + len(text) + 10 for name, text in env.items())  # =, NUL, pointer
    env["FILL"] = "f" * (room - used - len("FILL") - 10)
    job = {"command": "true", "cwd": str(target.scratch), "env": env, "gpus": 0}
    target.herd.cli("resume")
    ids = target.herd.client.post("/jobs", {"jobs": [job]})["ids"]
    target.herd.wait_state(ids[0], "succeeded")
    job["env"] = {**env, "FILL": env["FILL"] + "f"}
    status, error = answer(target, "/api/v1/jobs", {"jobs": [job]})
    assert status == 422, error
    assert error["error"].startswith(
        f"the job's environment ({len(env):,} variables) and command take "
        f"{exec_room() + 1:,} bytes with gpuherd's own, over the "
    )
