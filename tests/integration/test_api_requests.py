"""What the HTTP API takes in a request body, over the Unix socket: unknown fields, loose types,
bodies that are not JSON, and HEAD on GET endpoints. A refused request changes nothing."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from conftest import Herd, UnixConnection

JSON = {"Content-Type": "application/json"}
Headers = dict[str, str]


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes

    @property
    def error(self) -> str:
        return str(json.loads(self.body)["error"])


@dataclass
class Api:
    herd: Herd
    held: int
    """A held job (editable, never runs: the queue is paused too)."""
    cwd: str

    def send(
        self,
        method: str,
        path: str,
        body: bytes | None = None,
        headers: dict[str, str] | None = None,
    ) -> Answer:
        conn = UnixConnection(self.herd.client.socket_path, timeout=15)
        try:
            conn.request(method, "/api/v1" + path, body=body, headers=headers or {})
            response = conn.getresponse()
            return Answer(response.status, dict(response.headers), response.read())
        finally:
            conn.close()

    def post(self, path: str, body: Any) -> Answer:
        return self.send("POST", path, json.dumps(body).encode(), JSON)

    def snapshot(self) -> Any:
        client = self.herd.client
        return (
            client.get("/jobs", all=True)["jobs"],
            # What a request can change of a GPU; not its telemetry, whose history gains a
            # sample every few seconds whatever the request did.
            [
                (g["index"], g["slots"], g["state"], g["max_jobs"])
                for g in client.get("/gpus")["gpus"]
            ],
            client.get("/config"),
            client.get("/sweeps"),
            client.get("/daemon/listen"),
        )


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    root = tmp_path_factory.mktemp("api")
    herd = Herd(root / "home")
    try:
        herd.start("--fake-gpus", "2")
        herd.cli("pause")
        held = herd.submit("--hold", "--name", "held", "--", "true")
        yield Api(herd, held, str(root))
    finally:
        herd.cleanup()


def _job(api: Api, **fields: Any) -> dict[str, Any]:
    return {"command": "true", "cwd": api.cwd, "hold": True, **fields}


# ---- a field the API does not know is refused, never dropped -------------------------------


UNKNOWN_FIELDS = [
    ("/jobs", lambda a: {"jobs": [_job(a)], "envv": {"KEY": "1"}}, "envv"),
    ("/jobs/edit", lambda a: {"ids": [a.held], "gpu": 2, "name": "x"}, "gpu"),
    ("/jobs/hold", lambda a: {"ids": [a.held], "bogus": True}, "bogus"),
    ("/jobs/{held}/priority", lambda a: {"priority": 3, "prio": 4}, "prio"),
    ("/jobs/{held}/move", lambda a: {"first": True, "after": 1}, "after"),
    ("/gpus", lambda a: {"index": 5, "slot": 2}, "slot"),
    ("/config", lambda a: {"name": "retries", "value": "2", "scope": "all"}, "scope"),
    ("/daemon/listen", lambda a: {"adress": "127.0.0.1:0"}, "adress"),
    (
        "/sweeps",
        lambda a: {"spec": {"name": "s", "command": "echo"}, "cwd": a.cwd, "dryrun": True},
        "dryrun",
    ),
    (
        "/sweeps",
        lambda a: {"spec": {"name": "s", "command": "echo"}, "cwd": a.cwd, "options": {"gpu": 2}},
        "options.gpu",
    ),
]


@pytest.mark.parametrize(
    ("path", "body", "field"), UNKNOWN_FIELDS, ids=[f"{p} {f}" for p, _, f in UNKNOWN_FIELDS]
)
def test_an_unknown_field_is_refused_and_nothing_changes(
    api: Api, path: str, body: Any, field: str
) -> None:
    said = _refused_with_422(api, path, body)
    assert said == f"invalid request: {field}: unknown field (misspelt?)"


def _refused_with_422(api: Api, path: str, body: Callable[[Api], Any]) -> str:
    """The error of a POST refused with 422, having changed nothing (a /daemon/stop carried
    out would fail this too)."""
    before = api.snapshot()
    answer = api.post(path.format(held=api.held), body(api))
    assert answer.status == 422, answer.body
    assert api.snapshot() == before
    return answer.error


def test_a_stop_with_an_unknown_field_does_not_stop_the_daemon(daemon: Herd) -> None:
    """(A daemon of its own: the old code stopped it.)"""
    api = Api(daemon, 0, str(daemon.home.parent))
    answer = api.post("/daemon/stop", {"mode": "drain", "force": True})
    assert (answer.status, answer.error) == (
        422,
        "invalid request: force: unknown field (misspelt?)",
    )
    assert daemon.client.get("/daemon")["stopping"] is None


def test_an_edit_with_a_misspelt_field_changes_nothing_of_the_rest(api: Api) -> None:
    """`gpu` was dropped and `name` applied: the job looked edited as asked."""
    answer = api.post("/jobs/edit", {"ids": [api.held], "gpu": 2, "name": "renamed"})
    assert answer.status == 422
    assert api.herd.job(api.held)["name"] == "held"


# ---- numbers and flags are JSON numbers and booleans, not text -----------------------------


LOOSE = [
    ("/jobs", lambda a: {"jobs": [_job(a, gpus="2")]}, "jobs.0.gpus", "a valid integer"),
    ("/jobs", lambda a: {"jobs": [_job(a, gpus=True)]}, "jobs.0.gpus", "a valid integer"),
    ("/jobs", lambda a: {"jobs": [_job(a, gpus=1.5)]}, "jobs.0.gpus", "a valid integer"),
    ("/jobs", lambda a: {"jobs": [_job(a, hold="yes")]}, "jobs.0.hold", "a valid boolean"),
    ("/jobs", lambda a: {"jobs": [_job(a, priority="5")]}, "jobs.0.priority", "a valid integer"),
    ("/jobs", lambda a: {"jobs": [_job(a, after=["1"])]}, "jobs.0.after.0", "a valid integer"),
    ("/jobs", lambda a: {"jobs": [_job(a, timeout="60")]}, "jobs.0.timeout", "a valid number"),
    ("/jobs/edit", lambda a: {"ids": [a.held], "mem": "1024"}, "mem", "a valid integer"),
    ("/jobs/kill", lambda a: {"ids": [str(a.held)]}, "ids.0", "a valid integer"),
    ("/jobs/{held}/priority", lambda a: {"priority": "5"}, "priority", "a valid integer"),
    ("/jobs/{held}/move", lambda a: {"first": "yes"}, "first", "a valid boolean"),
    ("/gpus", lambda a: {"index": "5"}, "index", "a valid integer"),
    ("/daemon/listen", lambda a: {"stop": 1}, "stop", "a valid boolean"),
]


@pytest.mark.parametrize(
    ("path", "body", "field", "says"), LOOSE, ids=[f"{p} {f}" for p, _, f, _ in LOOSE]
)
def test_text_for_a_number_or_a_flag_is_refused(
    api: Api, path: str, body: Any, field: str, says: str
) -> None:
    before = api.snapshot()
    answer = api.post(path.format(held=api.held), body(api))
    assert answer.status == 422, answer.body
    assert answer.error == f"invalid request: {field}: Input should be {says}"
    assert api.snapshot() == before


def test_numbers_and_flags_as_json_has_them_are_taken(api: Api) -> None:
    """An integer for a number of seconds is a number; every field as the CLI sends it."""
    job = _job(api, gpus=0, priority=2, timeout=60, retry_delay=1.5, begin=None, ram=2**20)
    answer = api.post("/jobs", {"jobs": [job], "env": {"PATH": "/bin"}})
    assert answer.status == 200, answer.body
    (job_id,) = json.loads(answer.body)["ids"]
    shown = api.herd.job(job_id)
    assert (shown["gpus_requested"], shown["priority"], shown["timeout"]) == (0, 2, 60.0)
    edited = api.post("/jobs/edit", {"ids": [job_id], "gpus": 1, "timeout": 30, "clear": ["ram"]})
    assert json.loads(edited.body)["results"][0]["ok"] is True
    api.herd.client.post("/jobs/rm", {"ids": [job_id]})


def test_gpu_memory_for_a_cpu_only_job_is_refused_for_every_client(api: Api) -> None:
    """The CLI refused `-g 0 --mem`; a raw client, a sweep file or Python were taken."""
    before = api.snapshot()
    answer = api.post("/jobs", {"jobs": [_job(api, gpus=0, mem=2**30)], "env": {}})
    assert answer.status == 422  # a value the daemon refuses (was 400)
    assert answer.error.startswith(
        "mem (--mem) with gpus 0 (--gpus 0): a CPU-only job gets no GPU memory"
    )
    assert api.snapshot() == before


def test_a_number_too_large_for_an_integer_says_so(api: Api) -> None:
    """1e30 answered "Unable to parse input string as an integer"."""
    answer = api.post("/jobs", {"jobs": [_job(api, mem=1e30)]})
    assert answer.status == 422
    assert answer.error == (
        "jobs.0.mem 1e+30 is too large (at most 2**63 - 1): "
        "give mem in bytes, of each GPU's memory (1 GiB: 1073741824)"
    )


def test_a_number_past_64_bits_in_a_query_is_named(api: Api) -> None:
    """`?ids=` was "a number in the request is too large" (the path's and the body's were
    named), `?limit=` "Input should be less than or equal to 9223372036854775807"."""
    huge = 2**63
    answer = api.send("GET", f"/jobs/wait?ids={api.held}&ids={huge}&timeout=0")
    assert (answer.status, answer.error) == (422, f"ids {huge} is too large (at most 2**63 - 1)")
    answer = api.send("GET", f"/jobs?limit={huge}")
    said = f"limit {huge} is too large (at most 2**63 - 1)"
    assert (answer.status, answer.error) == (422, said)
    answer = api.send("GET", f"/jobs/wait?ids={api.held}&timeout={huge}")  # a bound of its own
    said = f"timeout must be between 0 and 3600 seconds, got {float(huge):g}"
    assert (answer.status, answer.error) == (422, said)


@pytest.mark.parametrize("timeout", [3601, -1, 1e30])
def test_a_wait_refuses_a_timeout_in_the_same_words_by_get_and_by_post(
    api: Api, timeout: float
) -> None:
    """The GET said FastAPI's "Input should be less than or equal to 3600" (`query.timeout`),
    the POST "timeout must be between 0 and 3600 seconds"."""
    said = f"timeout must be between 0 and 3600 seconds, got {timeout:g}"
    got = api.send("GET", f"/jobs/wait?ids={api.held}&timeout={quote(str(timeout))}")
    posted = api.post("/jobs/wait", {"ids": [api.held], "timeout": timeout})
    assert (got.status, got.error) == (posted.status, posted.error) == (422, said)


# ---- a GPU's index: past 64 bits, or no GPU index, refused alike by every verb --------------

HUGE = "99999999999999999999"
BAD_GPU_INDICES = [  # DELETE said 404 "GPU ... is not configured" where POST /gpus said 422
    ("DELETE", f"/gpus/{HUGE}", None, f"index {HUGE} is too large (at most 2**63 - 1)"),
    ("DELETE", f"/gpus/-{HUGE}", None, f"index -{HUGE} is too small (at least -2**63)"),
    ("POST", f"/gpus/{HUGE}/drain", None, f"index {HUGE} is too large (at most 2**63 - 1)"),
    ("DELETE", "/gpus/-1", None, "GPU -1 is not a GPU index: use 0 to 4095"),
    ("POST", "/gpus/-1/enable", None, "GPU -1 is not a GPU index: use 0 to 4095"),
    ("POST", "/gpus", {"index": -1}, "GPU -1 is not a GPU index: use 0 to 4095"),
    ("DELETE", "/gpus/4096", None, "GPU 4096 is not a GPU index: use 0 to 4095"),
]


@pytest.mark.parametrize(
    ("method", "path", "body", "says"),
    BAD_GPU_INDICES,
    ids=[f"{m} {p}" for m, p, _, _ in BAD_GPU_INDICES],
)
def test_a_gpu_index_no_gpu_can_have_is_422_by_every_verb(
    api: Api, method: str, path: str, body: Any, says: str
) -> None:
    before = api.snapshot()
    sent = None if body is None else json.dumps(body).encode()
    answer = api.send(method, path, sent, JSON if body is not None else {})
    assert (answer.status, answer.error) == (422, says)
    assert api.snapshot() == before
    # A GPU index that names no GPU here stays what it is: not found.
    unknown = api.send("DELETE", "/gpus/7")
    assert (unknown.status, unknown.error) == (
        404,
        "GPU 7 is not configured (configured: 0,1), nor seen by the probe: "
        "name a GPU that `gpuherd gpus` lists",
    )


# ---- a query value the endpoint does not take: 422, as one of the wrong type ---------------

JOB_STATES = "queued, held, running, paused, succeeded, failed, killed, cancelled, lost"
BAD_QUERIES = [  # each was 400, while `?limit=x` was 422
    ("/jobs?state=bogus", f"unknown state 'bogus': use one of {JOB_STATES}"),
    ("/jobs?state=held&state=nope&ids_only=true", f"unknown state 'nope': use one of {JOB_STATES}"),
    ("/sweeps/q?state=bogus", f"unknown state 'bogus': use one of {JOB_STATES}, done, missing"),
    (
        "/sweeps/q?sort=nope",
        # "use a metric (none yet)" said not why none
        "cannot sort by 'nope': no point's metrics.json holds a metric yet; use a parameter (x)"
        " or one of index, folder, state, seconds, job_id, started_at, ended_at, peak_mem;"
        " prefix - for"
        " descending",
    ),
    ("/jobs/{held}/log?stream=err", "unknown stream 'err': use stdout or stderr"),
    ("/jobs/{held}/log/follow?stream=err", "unknown stream 'err': use stdout or stderr"),
    ("/jobs/987654/log?stream=err", "unknown stream 'err': use stdout or stderr"),  # before 404
    (
        "/jobs/{held}/log/follow?attempt=1&from_attempt=1",  # was 400
        "give attempt (that attempt only) or from_attempt, not both",
    ),
    (  # `lines` was used, `offset` silently dropped
        "/jobs/{held}/log?lines=2&offset=3",
        "give offset (from that byte) or lines (the last N lines), not both",
    ),
    (
        "/jobs/{held}/log/follow?lines=2&offset=0",
        "give offset (from that byte) or lines (the last N lines), not both",
    ),
]


@pytest.fixture(scope="module")
def sweep_q(api: Api) -> str:
    """Sweep `q`, one point, held (the queue is paused too)."""
    args = ["sweep", "true {x}", "-p", "x", "1", "--name", "q", "--hold"]
    api.herd.cli(*args, cwd=Path(api.cwd))
    return "q"


@pytest.mark.parametrize(("path", "says"), BAD_QUERIES, ids=[p for p, _ in BAD_QUERIES])
def test_a_query_value_not_taken_is_422_naming_it_and_what_to_give(
    api: Api, sweep_q: str, path: str, says: str
) -> None:
    before = api.snapshot()
    answer = api.send("GET", path.format(held=api.held))
    assert (answer.status, answer.error) == (422, says)
    assert api.snapshot() == before


# ---- a query parameter the endpoint does not take: 422, never ignored ----------------------

UNKNOWN_QUERIES = [  # each was answered as if it had not been sent
    (
        "GET",
        "/jobs?stat=failed",
        "stat",
        "GET /api/v1/jobs takes all, ids_only, limit, name, newest, project, since, state, sweep, "
        "until",
    ),
    ("GET", "/jobs/wait?ids={held}&timout=0", "timout", "GET /api/v1/jobs/wait takes ids, timeout"),
    (
        "GET",
        "/jobs/{held}/log?strem=stderr",
        "strem",
        "GET /api/v1/jobs/{held}/log takes attempt, lines, offset, stream",
    ),
    ("GET", "/daemon?verbose=1", "verbose", "GET /api/v1/daemon takes no query parameter"),
    ("POST", "/jobs/kill?ids={held}", "ids", "POST /api/v1/jobs/kill takes no query parameter"),
]


@pytest.mark.parametrize(
    ("method", "path", "name", "takes"), UNKNOWN_QUERIES, ids=[n for _, _, n, _ in UNKNOWN_QUERIES]
)
def test_an_unknown_query_parameter_is_refused_naming_what_the_endpoint_takes(
    api: Api, method: str, path: str, name: str, takes: str
) -> None:
    """`?stat=failed` listed every job, `POST /jobs/kill?ids=5` with an empty body was refused
    for its body alone, and a misspelt `?timout=` waited the default 30 s."""
    before = api.snapshot()
    body = b'{"ids": []}' if method == "POST" else None
    answer = api.send(method, path.format(held=api.held), body, JSON)
    said = (
        f"invalid request: query.{name}: unknown parameter (misspelt?): "
        f"{takes.format(held=api.held)} (/openapi.json describes it)"
    )
    assert (answer.status, answer.error) == (422, said)
    assert api.snapshot() == before


# ---- a body value only the daemon checks: 422, as one of the wrong type --------------------

BAD_BODY_VALUES = [  # each was 400, while `"gpus": "2"` was 422
    ("/daemon/stop", lambda a: {"mode": "explode"}, "unknown stop mode 'explode': use leave, "),
    ("/gpus", lambda a: {"index": 5000, "slots": 1}, "GPU 5000 is not a GPU index: use 0 to "),
    ("/gpus", lambda a: {"index": 1, "slots": 0}, "slots (--slots) must be 1 to 1024, got 0"),
    ("/config", lambda a: {"name": "nope", "value": "1"}, "unknown setting 'nope': use one of "),
    ("/config", lambda a: {"name": "retries", "value": "x"}, "retries: invalid count 'x': use "),
    ("/jobs", lambda a: {"jobs": []}, "nothing to submit: the list of jobs is empty"),
    (
        "/jobs",
        lambda a: {"jobs": [_job(a, gpus=3)], "env": {}},
        "this job can never run: asks for 3 GPUs but gpuherd has only 2"
        ": give fewer gpus (--gpus), at most 2",
    ),
    ("/jobs/hold", lambda a: {"ids": []}, "no job ids given: name jobs like 3, 3-7 or 3,5,9"),
    ("/jobs/edit", lambda a: {"ids": [a.held], "clear": ["bogus"]}, "bogus cannot be cleared: "),
    (
        "/jobs/{held}/move",
        lambda a: {},
        "say where to move the job: first (--first), before ID (--before ID), or swap ID "
        "(--swap ID)",
    ),
    ("/jobs/{held}/move", lambda a: {"before": a.held}, "job {held} cannot move before itself: "),
    ("/jobs/{held}/move", lambda a: {"swap": a.held}, "job {held} cannot swap with itself: "),
    (  # was "say where to move the job", which both were saying
        "/jobs/{held}/move",
        lambda a: {"first": True, "before": a.held},
        "give only one of first (--first), before ID (--before ID) or swap ID (--swap ID)",
    ),
    (
        "/jobs/{held}/move",
        lambda a: {"before": 1, "swap": a.held},
        "give only one of first (--first), before ID (--before ID) or swap ID (--swap ID)",
    ),
    ("/daemon/listen", lambda a: {"address": "x"}, "invalid listen address 'x': use HOST:PORT"),
]


@pytest.mark.parametrize(
    ("path", "body", "says"), BAD_BODY_VALUES, ids=[f"{p} {s[:20]}" for p, _, s in BAD_BODY_VALUES]
)
def test_a_body_value_not_taken_is_422_naming_it_and_what_to_give(
    api: Api, path: str, body: Any, says: str
) -> None:
    said = _refused_with_422(api, path, body)
    assert said.startswith(says.format(held=api.held)), said


BODYLESS = [("POST", "/queue/resume"), ("POST", "/gpus/0/drain"), ("DELETE", "/gpus/1")]


@pytest.mark.parametrize(("method", "path"), BODYLESS, ids=[p for _, p in BODYLESS])
def test_a_body_to_an_endpoint_that_takes_none_is_refused(api: Api, method: str, path: str) -> None:
    """`{"ids": [3]}` to /queue/pause paused the whole queue: a body was dropped unread."""
    before = api.snapshot()
    answer = api.send(method, path, b'{"ids": [3]}', JSON)
    said = (
        f"invalid request: ids: unknown field (misspelt?): {method} /api/v1{path} takes no "
        "body (/openapi.json describes it)"
    )
    assert (answer.status, answer.error) == (422, said)
    assert api.snapshot() == before
    # No body, or `{}` (the CLI's), is taken.
    assert api.send("POST", "/queue/pause", b"{}", JSON).status == 200
    assert api.send("POST", "/queue/pause").status == 200


BODYLESS_BAD_PATHS = [
    ("POST", "/gpus/abc/drain"),
    ("DELETE", "/gpus/abc"),
    ("POST", "/gpus/x/enable"),
]


@pytest.mark.parametrize(
    ("method", "path"), BODYLESS_BAD_PATHS, ids=[p for _, p in BODYLESS_BAD_PATHS]
)
def test_a_body_to_a_path_refused_anyway_gets_the_paths_error(
    api: Api, method: str, path: str
) -> None:
    """With a body, `POST /gpus/abc/drain` was told "takes no body", without one that `abc`
    is no GPU index: the body was looked at first. The path's error, either way."""
    before = api.snapshot()
    bare = api.send(method, path)
    sent = api.send(method, path, b'{"ids": [3]}', JSON)
    assert bare.status == 422 and "index" in bare.error, bare.error
    assert (sent.status, sent.error) == (bare.status, bare.error)
    assert api.snapshot() == before


def test_an_unknown_gpu_action_is_an_unknown_endpoint_naming_the_actions(api: Api) -> None:
    """It answered 400, where every other path that names no endpoint answers 404."""
    before = api.snapshot()
    answer = api.send("POST", "/gpus/0/explode")
    assert (answer.status, answer.error) == (
        404,
        "no such endpoint: POST /api/v1/gpus/0/explode: a GPU's actions are drain and enable "
        "(POST /api/v1/gpus/0/drain)",
    )
    assert api.snapshot() == before
    assert api.send("POST", "/gpus/0/enable").status == 200  # the known actions still work


# ---- a body that is not JSON ---------------------------------------------------------------

NOT_JSON = (
    "the body must be JSON, sent with 'Content-Type: application/json' "
    "(curl: -H 'Content-Type: application/json')"
)


@pytest.mark.parametrize(
    "headers",
    [{"Content-Type": "application/x-www-form-urlencoded"}, {"Content-Type": "text/plain"}, {}],
    ids=["form (curl -d)", "text", "none"],
)
def test_a_body_not_sent_as_json_is_415_with_one_line(api: Api, headers: dict[str, str]) -> None:
    before = api.snapshot()
    body = json.dumps({"jobs": [_job(api)]}).encode()
    answer = api.send("POST", "/jobs", body, headers)
    assert (answer.status, answer.error) == (415, NOT_JSON)
    assert api.snapshot() == before


@pytest.mark.parametrize(
    ("body", "says"),
    [
        (b'{"jobs": [', "the body is not valid JSON (Expecting value)"),
        (b"[1, 2]", "the body must be a JSON object (/openapi.json describes each endpoint's)"),
        (b"", "the body must be a JSON object (/openapi.json describes each endpoint's)"),
    ],
    ids=["cut short", "a list", "empty"],
)
def test_a_json_body_that_is_no_object_says_what_is_wrong(api: Api, body: bytes, says: str) -> None:
    answer = api.send("POST", "/jobs/kill", body, JSON)
    assert (answer.status, answer.error) == (422, f"invalid request: {says}")


# ---- HEAD ------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/jobs", "/daemon", "/gpus", "/jobs/{held}", "/jobs/{held}/log"])
def test_head_answers_as_get_without_the_body(api: Api, path: str) -> None:
    path = path.format(held=api.held)
    get, head = api.send("GET", path), api.send("HEAD", path)
    assert (head.status, head.body) == (get.status, b"")
    assert head.headers["content-type"] == get.headers["content-type"]


def test_head_on_a_stream_answers_its_headers_and_ends(api: Api) -> None:
    head = api.send("HEAD", "/events")
    assert (head.status, head.body) == (200, b"")
    assert head.headers["content-type"].startswith("text/event-stream")
    assert api.herd.client.get("/daemon")["pid"]  # the daemon serves on


def test_head_where_there_is_no_get_is_405(api: Api) -> None:
    answer = api.send("HEAD", "/queue/pause")
    assert answer.status == 405
    assert api.herd.client.get("/daemon")["queue_paused"] is True
    get = api.send("GET", "/queue/pause")
    assert get.error == (
        "GET is not allowed on /api/v1/queue/pause: use POST (/openapi.json describes it)"
    )


def test_the_cli_sends_what_the_api_takes(api: Api) -> None:
    """The bodies the CLI sends (submit with every option, edit, priority, move, gpus add,
    config set, hold, rm): none has a field or a type the API refuses."""
    herd = api.herd
    job_id = herd.submit(
        "--gpus", "1", "--mem", "1GiB", "--ram", "1GiB", "--timeout", "1h",
        "--retries", "2", "--retry-delay", "5", "--priority", "1", "--only-gpus", "0",
        "--begin", "+1h", "--project", "p", "--env", "A=1", "--after-any", str(api.held),
        "--", "true",
    )  # fmt: skip
    for command in [
        ("edit", str(job_id), "--gpus", "1", "--mem", "2GiB", "--timeout", "30m"),
        ("edit", str(job_id), "--clear", "mem", "--name", "n", "--retry-delay", "1.5"),
        ("edit", str(job_id), "--only-gpus", "0,1", "--retries", "1", "--command", "true"),
        ("priority", str(job_id), "3"),
        ("release", str(job_id)),
        ("move", str(job_id), "--first"),
        ("hold", str(job_id)),
        ("move", str(job_id), "--swap", str(api.held)),
        ("gpus", "add", "1", "--slots", "1"),
        ("config", "set", "retries", "0"),
        ("rm", str(job_id)),
    ]:
        herd.cli(*command)
