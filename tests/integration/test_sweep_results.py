"""Sweeps whose results must say what really ran: non-finite numbers, renamed sweeps, retried
points, narrowed grids, changed fixed values, and values that print alike (real daemon)."""

from __future__ import annotations

import csv
import io
import json
import shlex
from pathlib import Path
from typing import Any

import pytest

from conftest import Herd, UnixConnection, wait_for
from gpuherd.errors import HerdError
from gpuherd.pyapi import connect

# python3 point.py RUN_DIR [KEY=VALUE ...]: writes its other arguments to RUN_DIR/args.json;
# metrics.json gets {"acc": ACC, "loss": LOSS, "attempt": N} from acc=/loss= (floats: "nan"
# and "inf" too); fail=1 fails after writing metrics, fail=N>1 fails attempts 2.. without
# writing any; it also fails while RUN_DIR/../fail.flag names its `x`.
POINT = r"""
import json, os, sys
run_dir, args = sys.argv[1], sys.argv[2:]
opts = dict(a.split("=", 1) for a in args if "=" in a)
attempt = int(os.environ["GPUHERD_ATTEMPT"])
with open(os.path.join(run_dir, "args.json"), "w") as f:
    json.dump(args, f)
flag = os.path.join(os.path.dirname(run_dir), "fail.flag")
if os.path.exists(flag) and open(flag).read().split() == [opts.get("x")]:
    sys.exit(4)
if "fail" in opts and attempt > 1:
    sys.exit(5)
metrics = {k: float(opts[k]) for k in ("acc", "loss") if k in opts}
with open(os.path.join(run_dir, "metrics.json"), "w") as f:
    json.dump({**metrics, "attempt": attempt}, f)
sys.exit(3 if "fail" in opts else 0)
"""


@pytest.fixture
def work(work: Path) -> Path:
    """The submitter's working folder (conftest's), with point.py."""
    (work / "point.py").write_text(POINT)
    return work


@pytest.fixture
def shared_work(shared_work: Path) -> Path:
    """The test's own folder (conftest's), with point.py, for the module's daemon."""
    (shared_work / "point.py").write_text(POINT)
    return shared_work


def sweep(herd: Herd, work: Path, *args: str) -> dict[str, Any]:
    return dict(json.loads(herd.cli("sweep", *args, "--json", cwd=work).stdout))


def standard_json(text: str) -> Any:
    """JSON as any parser reads it: NaN and Infinity are not JSON."""

    def refuse(token: str) -> None:
        raise AssertionError(f"{token} in JSON output")

    return json.loads(text, parse_constant=refuse)


def status(herd: Herd, name: str, *args: str) -> dict[str, Any]:
    return dict(standard_json(herd.cli("sweep", "status", name, *args, "--json").stdout))


def ended(herd: Herd, name: str, count: int) -> dict[str, Any]:
    """The status table once `count` of its points have ended."""

    def done() -> dict[str, Any] | None:
        table = status(herd, name)
        states = [r["state"] for r in table["rows"]]
        return table if sum(s in ("succeeded", "failed") for s in states) >= count else None

    return dict(wait_for(done, 30, f"{count} points of sweep {name} to end"))


# ---- 1: NaN and infinity --------------------------------------------------------------------


def test_nan_sorts_last_infinity_as_a_number_and_both_print(
    shared_daemon: Herd, shared_work: Path
) -> None:
    daemon, work = shared_daemon, shared_work
    (work / "m.py").write_text(
        "import json, sys\n"
        "acc = {'a': 0.9, 'b': 'nan', 'c': 'inf', 'd': 0.1, 'e': '-inf'}[sys.argv[1]]\n"
        "loss = {'a': 0.1, 'b': 'nan', 'c': 'inf', 'd': 0.3, 'e': 0.5}[sys.argv[1]]\n"
        "metrics = {'acc': float(acc), 'loss': float(loss)}  # NaN, Infinity: as json writes\n"
        "json.dump(metrics, open(sys.argv[2] + '/metrics.json', 'w'))\n"
    )
    template = "python3 m.py {k} {run_dir}"
    sweep(daemon, work, template, "-p", "k", *"abcde", "--name", "nf", "--gpus", "0")
    ended(daemon, "nf", 5)

    def keys(*sort: str) -> list[str]:
        return [r["params"]["k"] for r in status(daemon, "nf", "--sort", *sort)["rows"]]

    assert keys("-acc") == ["c", "a", "d", "e", "b"]  # inf, 0.9, 0.1, -inf; NaN last
    assert keys("acc") == ["e", "d", "a", "c", "b"]
    assert keys("loss") == ["a", "d", "e", "c", "b"]  # 0.1, 0.3, 0.5, inf, nan
    assert keys("-loss") == ["c", "e", "d", "a", "b"]
    rows = {r["params"]["k"]: r for r in status(daemon, "nf")["rows"]}
    assert rows["b"]["metrics"] == {"acc": "nan", "loss": "nan"}
    assert rows["c"]["metrics"] == {"acc": "inf", "loss": "inf"}
    assert rows["e"]["metrics"] == {"acc": "-inf", "loss": 0.5}

    text = daemon.cli("sweep", "status", "nf", "--sort", "-acc").stdout.splitlines()
    assert text[0].split()[-2:] == ["acc", "loss"]
    assert [line.split()[-2:] for line in text[1:6]] == [
        ["inf", "inf"],
        ["0.9", "0.1"],
        ["0.1", "0.3"],
        ["-inf", "0.5"],
        ["nan", "nan"],
    ]
    table = list(csv.DictReader(io.StringIO(daemon.cli("sweep", "status", "nf", "--csv").stdout)))
    assert [(r["k"], r["acc"], r["loss"]) for r in table][1:3] == [
        ("b", "nan", "nan"),
        ("c", "inf", "inf"),
    ]
    standard_json(daemon.cli("sweep", "ls", "--json").stdout)


def test_nan_and_inf_typed_as_values_stay_text_and_json_stays_standard(
    shared_daemon: Herd, shared_work: Path
) -> None:
    daemon, work = shared_daemon, shared_work
    answer = sweep(
        daemon, work, "python3 point.py {run_dir} x={x}", "-p", "x", "1", "nan", "inf", "-inf"
    )
    table = ended(daemon, answer["name"], 4)
    for row in table["rows"]:
        params = standard_json((Path(row["run_dir"]) / "params.json").read_text())
        assert params["params"]["x"] in (1, "nan", "inf", "-inf")
    assert [r["params"]["x"] for r in table["rows"]] == [1, "nan", "inf", "-inf"]
    name = answer["name"]
    ordered = status(daemon, name, "--sort", "-x")["rows"]
    assert [r["params"]["x"] for r in ordered] == ["inf", 1, "-inf", "nan"]
    text = daemon.cli("sweep", "status", name).stdout.splitlines()
    assert [line.split()[1] for line in text[1:5]] == ["1", "nan", "inf", "-inf"]


def test_non_finite_numbers_in_a_file_or_from_python_are_refused(daemon: Herd, work: Path) -> None:
    (work / "nan.yaml").write_text("command: echo {lr}\ngrid:\n  lr: [0.1, .nan]\n")
    done = daemon.cli("sweep", "nan.yaml", check=False, cwd=work)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.splitlines() == [
        "gpuherd: error: nan.yaml:3: grid.lr[1]: nan is not a finite number (JSON has no NaN"
        " or Infinity): quote it ('nan') to pass it as text"
    ]
    with pytest.raises(HerdError, match=r"fixed\.lr: inf is not a finite number"):
        connect(daemon.home, start=False).sweep(
            "echo {x} {lr}", {"x": [1]}, fixed={"lr": float("inf")}, cwd=work
        )
    assert daemon.json("sweep", "ls") == []


# ---- 2: --name picks the default results folder --------------------------------------------


def test_a_renamed_file_sweep_gets_a_results_folder_of_its_own(
    shared_daemon: Herd, shared_work: Path
) -> None:
    daemon, work = shared_daemon, shared_work
    body = "command: python3 point.py {run_dir} x={x}\ngrid: {x: [1, 2]}\ngpus: 0\n"
    (work / "sw2.yml").write_text(body)
    first = sweep(daemon, work, "sw2.yml", "--name", "varA")
    assert (first["results_dir"], first["new"]) == (str(work / "results" / "varA"), 2)
    ended(daemon, "varA", 2)
    second = sweep(daemon, work, "sw2.yml", "--name", "varB")
    assert second["results_dir"] == str(work / "results" / "varB")
    assert (second["new"], second["skipped_done"]) == (2, 0)
    dry = daemon.cli("sweep", "sw2.yml", "--name", "varD", "--dry-run", cwd=work).stdout
    assert f"{work}/results/varD/x=1 " in dry
    herd = connect(daemon.home, start=False)
    python = herd.sweep(str(work / "sw2.yml"), name="varC", cwd=work, dry_run=True)
    assert python.submission["results_dir"] == str(work / "results" / "varC")
    unnamed = herd.sweep(str(work / "sw2.yml"), cwd=work, dry_run=True)
    assert unnamed.submission["results_dir"] == str(work / "results" / "sw2")
    (work / "own.yml").write_text(body + "results_dir: mine\n")  # a file's own folder stays
    own = sweep(daemon, work, "own.yml", "--name", "varE", "--hold")
    assert own["results_dir"] == str(work / "mine")


# ---- 3: a new attempt never shows the last one's metrics ------------------------------------


def test_a_retried_point_shows_no_metrics_of_the_attempt_before(
    shared_daemon: Herd, shared_work: Path
) -> None:
    daemon, work = shared_daemon, shared_work
    template = "python3 point.py {run_dir} x={x} acc=0.5"
    answer = sweep(daemon, work, template, "-p", "x", "1", "--name", "rt", "--gpus", "0")
    (row,) = ended(daemon, "rt", 1)["rows"]
    assert (row["state"], row["metrics"]) == ("succeeded", {"acc": 0.5, "attempt": 1})
    folder = Path(row["run_dir"])
    (folder.parent / "fail.flag").write_text("1")
    daemon.cli("retry", str(answer["ids"][0]))
    daemon.wait_state(answer["ids"][0], "failed", timeout=30)
    (row,) = status(daemon, "rt")["rows"]
    assert (row["state"], row["metrics"]) == ("failed", {})
    assert json.loads((folder / "attempt-1" / "metrics.json").read_text())["acc"] == 0.5
    assert not (folder / "metrics.json").exists()


def test_an_automatic_retry_shows_no_metrics_of_the_failed_attempt(
    shared_daemon: Herd, shared_work: Path
) -> None:
    daemon, work = shared_daemon, shared_work
    template = "python3 point.py {run_dir} x={x} acc=0.25 fail=1"
    answer = sweep(daemon, work, template, "-p", "x", "1", "--name", "ar", "--retries", "1")
    daemon.wait_state(answer["ids"][0], "failed", timeout=30)
    wait_for(lambda: daemon.job(answer["ids"][0])["attempt"] == 2, 10, "the second attempt")
    (row,) = status(daemon, "ar")["rows"]
    assert (row["state"], row["metrics"]) == ("failed", {})
    saved = json.loads((Path(row["run_dir"]) / "attempt-1" / "metrics.json").read_text())
    assert saved == {"acc": 0.25, "attempt": 1}


# ---- 4: a narrowed grid ---------------------------------------------------------------------


def test_points_dropped_from_the_grid_are_listed_apart_and_not_counted(
    daemon: Herd, work: Path
) -> None:
    template = "python3 point.py {run_dir} x={x}"
    (work / "results" / "nar").mkdir(parents=True)
    (work / "results" / "nar" / "fail.flag").write_text("3")
    sweep(daemon, work, template, "-p", "x", "1", "2", "3", "--name", "nar", "--gpus", "0")
    assert [r["state"] for r in ended(daemon, "nar", 3)["rows"]] == [
        "succeeded",
        "succeeded",
        "failed",
    ]
    again = sweep(daemon, work, template, "-p", "x", "1", "2", "--name", "nar", "--gpus", "0")
    assert (again["points"], again["skipped_done"]) == (2, 2)
    table = status(daemon, "nar")
    assert [r["folder"] for r in table["rows"]] == ["x=1", "x=2"]
    assert table["counts"] == {"succeeded": 2}
    assert [(r["folder"], r["state"], r["in_spec"]) for r in table["outside"]] == [
        ("x=3", "failed", False)
    ]
    text = daemon.cli("sweep", "status", "nar").stdout.splitlines()
    assert any(line.startswith("sweep nar: 2 points (2 succeeded);") for line in text)
    assert "1 run not in the current grid (not counted): 1 failed" in text
    listed = daemon.json("sweep", "ls")
    assert [(s["points"], s["counts"], s["outside"]) for s in listed] == [
        (2, {"succeeded": 2}, {"failed": 1})
    ]
    line = daemon.cli("sweep", "ls").stdout.splitlines()[1]
    assert "2 succeeded (+1 not in the grid)" in line and " 2 " in line
    assert connect(daemon.home, start=False).get_sweep("nar").wait(timeout=30) is True
    conn = UnixConnection(daemon.client.socket_path, timeout=30)  # the dashboard says so too
    try:
        conn.request("GET", "/ui/sweeps/nar")
        page = conn.getresponse().read().decode()
    finally:
        conn.close()
    assert "1 earlier run of points no longer in the grid is not shown or counted" in page


def test_runs_of_points_not_drawn_by_samples_are_said_so(
    shared_daemon: Herd, shared_work: Path
) -> None:
    # They were "not in the current grid", though the grid holds them: --samples left them out.
    daemon, work = shared_daemon, shared_work
    args = ("true {x}", "-p", "x", "1", "2", "3", "--name", "drawn", "--gpus", "0", "--seed", "1")
    sweep(daemon, work, *args, "--samples", "3")
    ended(daemon, "drawn", 3)
    assert sweep(daemon, work, *args, "--samples", "1")["points"] == 1
    assert len(status(daemon, "drawn")["outside"]) == 2
    text = daemon.cli("sweep", "status", "drawn").stdout.splitlines()
    assert "2 runs not drawn by --samples (not counted): 2 succeeded" in text
    line = next(ln for ln in daemon.cli("sweep", "ls").stdout.splitlines() if "drawn" in ln)
    assert "(+2 not drawn by --samples)" in line
    conn = UnixConnection(daemon.client.socket_path, timeout=30)
    try:
        conn.request("GET", "/ui/sweeps/drawn")
        page = conn.getresponse().read().decode()
    finally:
        conn.close()
    assert "2 earlier runs of points not drawn by --samples are not shown or counted" in page


def test_a_run_outside_the_grid_has_no_index_a_point_has(
    shared_daemon: Herd, shared_work: Path
) -> None:
    """x=1 was point 0 of [1, 2, 3]; submitted again as [2, 3], x=2 is point 0, and the run of
    x=1 outside the grid said `index: 0` too (its params.json's): two rows, one index."""
    daemon, work = shared_daemon, shared_work
    for values in (["1", "2", "3"], ["2", "3"]):
        sweep(daemon, work, "echo {x}", "-p", "x", *values, "--name", "idx", "--hold")
    table = status(daemon, "idx", "--sort", "index")
    assert [(r["folder"], r["index"]) for r in table["rows"]] == [("x=2", 0), ("x=3", 1)]
    assert [(r["folder"], r["index"], r["in_spec"]) for r in table["outside"]] == [
        ("x=1", None, False)
    ]
    # The run is where it ran, its own index there kept in its folder.
    ran = json.loads((work / "results" / "idx" / "x=1" / "params.json").read_text())
    assert ran["index"] == 0
    text = daemon.cli("sweep", "status", "idx", "--sort", "-index").stdout.splitlines()
    assert [line.split()[0] for line in text if line.startswith("x=")] == ["x=3", "x=2", "x=1"]


# ---- 5: fixed values changed since a point ran ----------------------------------------------


def test_status_shows_the_fixed_values_a_point_ran_with(
    shared_daemon: Herd, shared_work: Path
) -> None:
    daemon, work = shared_daemon, shared_work
    body = "name: fx\ncommand: python3 point.py {{run_dir}} x={{x}} e={{epochs}}\n"
    body += "fixed: {{epochs: {e}}}\ngrid: {{x: [1, 2]}}\ngpus: 0\n"
    (work / "fx.yaml").write_text(body.format(e=5))
    sweep(daemon, work, "fx.yaml")
    ended(daemon, "fx", 2)
    (work / "fx.yaml").write_text(body.format(e=50))
    again = daemon.cli("sweep", "fx.yaml", cwd=work)
    assert "submitted 0 jobs" in again.stdout
    assert again.stderr.splitlines() == [
        "gpuherd: warning: fixed values changed for 2 finished points (epochs: 5 -> 50):"
        " they are skipped and keep their results; --force runs them again"
    ]
    rows = status(daemon, "fx")["rows"]
    assert [r["params"]["epochs"] for r in rows] == [5, 5]
    forced = sweep(daemon, work, "fx.yaml", "--force")
    assert forced["rerun_done"] == 2
    wait_for(
        lambda: [r["params"]["epochs"] for r in status(daemon, "fx")["rows"]] == [50, 50],
        30,
        "the rerun points to report epochs 50",
    )


# ---- 6: names that look like options, booleans and null, values that print alike ----------


def test_the_status_hint_of_a_dash_name_runs(shared_daemon: Herd, shared_work: Path) -> None:
    daemon, work = shared_daemon, shared_work
    out = daemon.cli(
        "sweep", "echo {x}", "-p", "x", "1", "--name", "-dash", "--gpus", "0", cwd=work
    )
    hint = out.stdout.splitlines()[-1]
    assert hint == "results: gpuherd sweep status -- -dash"
    done = daemon.cli(*shlex.split(hint.removeprefix("results: gpuherd ")))
    assert "sweep -dash: 1 point" in done.stdout


def test_booleans_and_null_read_as_python_spells_them_as_before(
    shared_daemon: Herd, shared_work: Path
) -> None:
    daemon, work = shared_daemon, shared_work
    # As GPU Task Scheduler and earlier sweeps named the folders: a new spelling would run
    # every finished point with a boolean again.
    (work / "b.yaml").write_text(
        "command: python3 point.py {run_dir} {flag} {opt}\n"
        "grid: {flag: [true, false], opt: [null]}\ngpus: 0\n"
    )
    answer = sweep(daemon, work, "b.yaml")
    assert answer["warnings"] == []
    table = ended(daemon, "b", 2)
    assert [r["folder"] for r in table["rows"]] == ["flag=True,opt=None", "flag=False,opt=None"]
    args = [json.loads((Path(r["run_dir"]) / "args.json").read_text()) for r in table["rows"]]
    assert args == [["True", "None"], ["False", "None"]]


def test_values_that_print_alike_are_one_point_with_a_warning(
    shared_daemon: Herd, shared_work: Path
) -> None:
    daemon, work = shared_daemon, shared_work
    grid = {"command": "echo {x}", "grid": {"x": [1, "1", True, "True", 2, 2]}}
    (work / "alike.json").write_text(json.dumps(grid))
    done = daemon.cli("sweep", "alike.json", "--dry-run", cwd=work)
    assert done.stdout.splitlines() == ["echo 1", "echo True", "echo 2"]
    warning = (
        'gpuherd: warning: grid.x: 1 and "1" both read 1; true and "True" both read True:'
        " values that read the same are one point (the first one runs)"
    )
    assert warning in done.stderr.splitlines()
    submitted = daemon.cli("sweep", "alike.json", "--hold", cwd=work)
    assert warning in submitted.stderr.splitlines()
    assert "3 points" in submitted.stdout.splitlines()[0]
