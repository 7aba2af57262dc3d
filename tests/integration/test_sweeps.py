"""Sweeps through the CLI and a real daemon: expansion, resume, quoting, results, git."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import Herd, wait_for
from gpuherd.errors import HerdError
from gpuherd.git_commit import git_commit
from gpuherd.pyapi import connect

# Writes its arguments (all but the last, the run folder) to RUN_DIR/args.json; appends to
# RUN_DIR/../runs.log; fails when the file named by $FAIL_FLAG exists and names this point.
RECORD = r"""
import json, os, sys
args, run_dir = sys.argv[1:-1], sys.argv[-1]
with open(os.path.join(run_dir, "args.json"), "w") as f:
    json.dump(args, f)
with open(os.path.join(os.path.dirname(run_dir), "runs.log"), "a") as f:
    f.write(" ".join(args) + "\n")
flag = os.environ.get("FAIL_FLAG", "")
if flag and os.path.exists(flag) and open(flag).read().split() == args:
    sys.exit(3)
"""
LRS = ["0.001", "0.0005", "0.0001"]
BSS = ["32", "64", "128"]
GTS_YAML = """\
name: pacgan
command: python3 record.py {method} {num_packing} {num_zmode} {num_run} {run_dir}
results_dir: gts
fixed:
  num_run: 5
  num_epoch: 200
grid:
  - method: [GAN, ALI]
    num_packing: [1]
    num_zmode: [1]
  - method: [WGAN]
    num_packing: [3]
    num_zmode: [1, 2]
gpus: 0
"""
GTS_POINTS = [
    {"num_run": 5, "num_epoch": 200, "method": "GAN", "num_packing": 1, "num_zmode": 1},
    {"num_run": 5, "num_epoch": 200, "method": "ALI", "num_packing": 1, "num_zmode": 1},
    {"num_run": 5, "num_epoch": 200, "method": "WGAN", "num_packing": 3, "num_zmode": 1},
    {"num_run": 5, "num_epoch": 200, "method": "WGAN", "num_packing": 3, "num_zmode": 2},
]


@pytest.fixture
def work(work: Path) -> Path:
    """The submitter's working folder (conftest's), with record.py."""
    (work / "record.py").write_text(RECORD)
    return work


@pytest.fixture
def shared_work(shared_work: Path) -> Path:
    """The test's own folder (conftest's), with record.py, for the module's daemon."""
    (shared_work / "record.py").write_text(RECORD)
    return shared_work


def sweep(herd: Herd, work: Path, *args: str, **kw: Any) -> dict[str, Any]:
    out = herd.cli("sweep", *args, "--json", cwd=work, **kw)
    return dict(json.loads(out.stdout))


def finished(herd: Herd, name: str, count: int) -> list[dict[str, Any]]:
    """The sweep's rows once `count` of them have ended (succeeded or failed)."""

    def done() -> list[dict[str, Any]] | None:
        rows = herd.json("sweep", "status", name)["rows"]
        ended = [r for r in rows if r["state"] in ("succeeded", "failed")]
        return rows if len(ended) >= count else None

    return list(wait_for(done, 30, f"{count} points of sweep {name} to end"))


def test_hypersearch_grid_runs_nine_points_in_their_folders(daemon: Herd, work: Path) -> None:
    template = "python3 record.py --lr {lr} --batch_size {bs} {run_dir}"
    answer = sweep(daemon, work, template, "-p", "lr", *LRS, "-p", "bs", *BSS, "--gpus", "0")
    assert (answer["points"], answer["new"], len(answer["ids"])) == (9, 9, 9)
    rows = finished(daemon, answer["name"], 9)
    assert {r["state"] for r in rows} == {"succeeded"}
    results = work / "results" / answer["name"]
    assert answer["results_dir"] == str(results)
    for row, (lr, bs) in zip(rows, [(lr, bs) for lr in LRS for bs in BSS], strict=True):
        folder = results / f"lr={lr},bs={bs}"
        assert row["run_dir"] == str(folder)
        assert json.loads((folder / "args.json").read_text()) == ["--lr", lr, "--batch_size", bs]
        params = json.loads((folder / "params.json").read_text())
        assert params["params"] == {"lr": float(lr), "bs": int(bs)}
        assert (params["sweep"], params["index"]) == (answer["name"], row["index"])
        assert (folder / "SUCCESS").exists() and (folder / "attempt-1" / "stdout.log").exists()
        job = json.loads((folder / "job.json").read_text())
        assert (job["sweep"], job["id"]) == (answer["name"], row["job_id"])
    listed = daemon.json("sweep", "ls")
    assert [(s["name"], s["points"], s["counts"]) for s in listed] == [
        (answer["name"], 9, {"succeeded": 9})
    ]


def test_samples_draw_the_same_points_in_the_same_order_for_a_seed(
    shared_daemon: Herd, shared_work: Path
) -> None:
    daemon, work = shared_daemon, shared_work
    base = ["python3 record.py {lr} {bs} {run_dir}", "-p", "lr", *LRS, "-p", "bs", *BSS]
    dry = [
        daemon.cli("sweep", *base, samples, "5", "--seed", "1", "--dry-run", cwd=work)
        for samples in ("--samples", "--n-samples")
    ]
    assert dry[0].stdout == dry[1].stdout
    assert len(dry[0].stdout.splitlines()) == len(set(dry[0].stdout.splitlines())) == 5
    other = daemon.cli("sweep", *base, "--samples", "5", "--seed", "2", "--dry-run", cwd=work)
    assert other.stdout != dry[0].stdout

    answer = sweep(daemon, work, *base, "--samples", "5", "--seed", "1", "--gpus", "0")
    rows = finished(daemon, answer["name"], 5)
    commands = [daemon.job(r["job_id"])["command"] for r in rows]
    assert [c.rsplit(" ", 1)[0] for c in commands] == [
        line.rsplit(" ", 1)[0] for line in dry[0].stdout.splitlines()
    ]

    # Without --seed one is chosen, printed and recorded: a resubmission draws the same points.
    chosen = daemon.cli(
        "sweep", *base, "--samples", "3", "--name", "drawn", "--gpus", "0", cwd=work
    )
    assert "seed " in chosen.stdout and "(chosen;" in chosen.stdout
    finished(daemon, "drawn", 3)
    again = sweep(daemon, work, *base, "--samples", "3", "--name", "drawn")
    assert (again["skipped_done"], again["new"], again["seed_chosen"]) == (3, 0, False)


def test_gpu_task_scheduler_file_gives_its_four_points(
    shared_daemon: Herd, shared_work: Path
) -> None:
    daemon, work = shared_daemon, shared_work
    (work / "pacgan.yaml").write_text(GTS_YAML)
    answer = sweep(daemon, work, "pacgan.yaml", "--priority", "3")
    assert (answer["name"], answer["points"], answer["new"]) == ("pacgan", 4, 4)
    rows = finished(daemon, "pacgan", 4)
    assert [r["params"] for r in rows] == GTS_POINTS
    assert [r["folder"] for r in rows] == [
        "method=GAN,num_packing=1,num_zmode=1",
        "method=ALI,num_packing=1,num_zmode=1",
        "method=WGAN,num_packing=3,num_zmode=1",
        "method=WGAN,num_packing=3,num_zmode=2",
    ]
    for row, point in zip(rows, GTS_POINTS, strict=True):
        args = json.loads((Path(row["run_dir"]) / "args.json").read_text())
        assert args == [str(point[k]) for k in ("method", "num_packing", "num_zmode", "num_run")]
        job = daemon.job(row["job_id"])
        assert (job["priority"], job["gpus_requested"]) == (3, 0)  # CLI over file; file's gpus


def test_resubmission_reruns_only_failed_and_new_points(
    shared_daemon: Herd, shared_work: Path
) -> None:
    daemon, work = shared_daemon, shared_work
    flag = work / "fail.flag"
    flag.write_text("2")
    env = {**daemon.env, "FAIL_FLAG": str(flag)}
    args = ["python3 record.py {x} {run_dir}", "--name", "resume", "--gpus", "0", "-p", "x"]
    first = sweep(daemon, work, *args, "1", "2", "3", env=env)
    assert first["new"] == 3
    rows = finished(daemon, "resume", 3)
    assert [r["state"] for r in rows] == ["succeeded", "failed", "succeeded"]
    assert (work / "results" / "resume" / "x=2" / "FAILURE").exists()

    flag.unlink()
    second = sweep(daemon, work, *args, "1", "2", "3", env=env)
    assert (second["new"], second["rerun_failed"], second["skipped_done"]) == (0, 1, 2)
    wait_for(lambda: daemon.job(second["ids"][0])["state"] == "succeeded", 15, "the rerun")
    runs = (work / "results" / "resume" / "runs.log").read_text().split()
    assert sorted(runs) == ["1", "2", "2", "3"]
    previous = work / "results" / "resume" / "x=2" / "previous-runs" / "1"
    assert (previous / "FAILURE").exists() and (previous / "attempt-1" / "stderr.log").exists()

    # The old failed job still lists as failed; retrying it would run x=2 a third time in the
    # folder that now holds the rerun's success: refused, naming the job that ran it since.
    (old,) = [r for r in rows if r["state"] == "failed"]
    rerun = second["ids"][0]
    refused = daemon.cli("retry", str(old["job_id"]), check=False)
    assert refused.returncode != 0
    assert refused.stderr.splitlines() == [
        f"gpuherd: error: job {old['job_id']} is an older run of resume/x=2: job {rerun} ran "
        f"that point since (retry job {rerun} if it should run again)"
    ]
    assert daemon.job(old["job_id"])["state"] == "failed"
    assert (work / "results" / "resume" / "x=2" / "SUCCESS").exists()

    # A new value runs alone; a point still queued (held) is not submitted twice.
    third = sweep(daemon, work, *args, "1", "2", "3", "4", "--hold", env=env)
    assert (third["new"], third["skipped_done"], len(third["ids"])) == (1, 3, 1)
    fourth = daemon.cli("sweep", *args, "1", "2", "3", "4", cwd=work, env=env).stdout
    assert "submitted 0 jobs" in fourth and "1 already queued or running skipped" in fourth
    forced = sweep(daemon, work, *args, "1", "2", "3", "4", "--force", env=env)
    assert (forced["rerun_done"], forced["skipped_active"], len(forced["ids"])) == (3, 1, 3)
    daemon.cli("release", str(third["ids"][0]))

    def states() -> list[str]:
        return [r["state"] for r in daemon.json("sweep", "status", "resume")["rows"]]

    wait_for(lambda: states() == ["succeeded"] * 4, 30, "every point to succeed")


def test_values_with_spaces_quotes_and_shell_syntax_arrive_intact(
    shared_daemon: Herd, shared_work: Path
) -> None:
    daemon, work = shared_daemon, shared_work
    home = work / "fakehome"
    home.mkdir()
    (home / "canary").write_text("still here")
    env = {**daemon.env, "HOME": str(home)}  # were quoting broken, `rm -rf ~` would hit this
    values = ["a b", 'it\'s "quoted"', "; rm -rf ~", "$(touch pwned)", "-1"]
    answer = sweep(
        daemon, work, "python3 record.py {v} {run_dir}", "-p", "v", *values, "--gpus", "0", env=env
    )
    rows = finished(daemon, answer["name"], len(values))
    assert [r["state"] for r in rows] == ["succeeded"] * len(values)
    for row, value in zip(rows, values, strict=True):
        assert json.loads((Path(row["run_dir"]) / "args.json").read_text()) == [value]
        assert row["params"]["v"] == (-1 if value == "-1" else value)
        assert "/" not in row["folder"] and " " not in row["folder"]
    assert (home / "canary").read_text() == "still here"
    assert not (work / "pwned").exists()


def test_status_shows_metrics_sorted_and_as_csv(shared_daemon: Herd, shared_work: Path) -> None:
    daemon, work = shared_daemon, shared_work
    (work / "metrics.py").write_text(
        "import json, sys\n"
        "metrics = {'val_acc': float(sys.argv[1]) / 10, 'note': 'x y', 'shape': [2, 3]}\n"
        "metrics['q'] = int(sys.argv[1])  # the config, echoed: no second q column\n"
        "json.dump(metrics, open(sys.argv[2] + '/metrics.json', 'w'))\n"
    )
    template = "python3 metrics.py {q} {run_dir}"
    answer = sweep(daemon, work, template, "-p", "q", "3", "9", "1", "--name", "m", "--gpus", "0")
    finished(daemon, "m", 3)
    table = daemon.json("sweep", "status", "m", "--sort", "-val_acc")
    assert [r["params"]["q"] for r in table["rows"]] == [9, 3, 1]
    # values as the job wrote them in JSON; the table and the CSV show a list as JSON text
    assert table["rows"][0]["metrics"] == {"val_acc": 0.9, "note": "x y", "shape": [2, 3], "q": 9}
    assert table["metric_keys"] == ["val_acc", "note", "shape"]
    text = daemon.cli("sweep", "status", "m", "--sort", "q").stdout
    assert [line.split()[0] for line in text.splitlines()[1:4]] == ["q=1", "q=3", "q=9"]
    assert "[2, 3]" in text.splitlines()[1]
    csv = daemon.cli("sweep", "status", "m", "--csv").stdout.splitlines()
    assert csv[0] == "folder,q,state,job_id,seconds,val_acc,note,shape"
    assert csv[1].startswith("q=3,3,succeeded,")
    assert csv[1].endswith(',0.3,x y,"[2, 3]"')
    # Only the daemon knows the metrics: its refusal is a usage error naming the option (was
    # exit 1, with the daemon's words alone).
    bad = daemon.cli("sweep", "status", "m", "--sort", "nope", check=False)
    assert bad.returncode == 2
    assert bad.stderr.startswith("gpuherd: error: --sort: cannot sort by 'nope': use a metric (")
    assert bad.stderr.endswith("prefix - for descending (see gpuherd sweep status --help)\n")
    assert len(bad.stderr.splitlines()) == 1
    missing = daemon.cli("sweep", "status", "nosuch", check=False)
    assert missing.returncode == 1 and "no sweep named 'nosuch'" in missing.stderr
    assert answer["ids"]


def test_metrics_that_are_a_link_or_too_large_are_not_read(
    shared_daemon: Herd, shared_work: Path
) -> None:
    """A job writes its own folder: its metrics.json must not make the daemon (which serves
    the table over its API) read another file, nor swallow a file of any size."""
    daemon, work = shared_daemon, shared_work
    secret = work / "secret.txt"
    secret.write_text('{"token": "hunter2"}')
    (work / "metrics.sh").write_text(
        "case $1 in\n"
        f'  link) ln -s {secret} "$2/metrics.json" ;;\n'
        '  big) head -c 2000000 /dev/zero | tr "\\0" " " > "$2/metrics.json";'
        ' echo "{}" >> "$2/metrics.json" ;;\n'
        '  fine) echo \'{"acc": 0.5}\' > "$2/metrics.json" ;;\n'
        "esac\n"
    )
    template = "sh metrics.sh {kind} {run_dir}"
    sweep(daemon, work, template, "-p", "kind", "link", "big", "fine", "--name", "g", "--gpus", "0")
    rows = {r["params"]["kind"]: r for r in finished(daemon, "g", 3)}
    assert rows["fine"]["metrics"] == {"acc": 0.5}
    assert rows["link"]["metrics"] == {} and "hunter2" not in json.dumps(rows["link"])
    assert rows["link"]["metrics_error"].endswith(
        "metrics.json: a symbolic link, which the daemon does not follow; write a plain"
        " metrics.json"
    )
    assert (
        rows["big"]["metrics"] == {}
        and "metrics.json: 1.9 MiB, over the 1.0 MiB limit; " in rows["big"]["metrics_error"]
    )
    text = daemon.cli("sweep", "status", "g").stdout
    assert "hunter2" not in text
    assert text.splitlines()[-1].startswith(
        "metrics not read for 2 points (--json gives each its metrics_error); the first: "
    )


def test_more_than_ten_thousand_points_need_yes(daemon: Herd, work: Path) -> None:
    args = ["echo {a} {b}", "-p", "a", *map(str, range(101)), "-p", "b", *map(str, range(100))]
    refused = daemon.cli("sweep", *args, check=False, cwd=work)
    assert refused.returncode == 1
    assert "10,100 points, more than 10,000" in refused.stderr and "--yes" in refused.stderr
    assert daemon.json("sweep", "ls") == []
    dry = daemon.cli("sweep", *args, "--dry-run", check=False, cwd=work)
    assert dry.returncode == 1 and "10,100 points" in dry.stderr
    listed = daemon.cli("sweep", *args, "--dry-run", "--yes", cwd=work).stdout.splitlines()
    assert len(listed) == 10_100 and listed[0] == "echo 0 0"
    body = {"spec": {"name": "big", "command": "echo {a}", "grids": [{"a": list(range(10_001))}]}}
    body |= {"cwd": str(work), "yes": True, "dry_run": True}
    answer = daemon.client.post("/sweeps", body)
    assert (answer["points"], answer["new"], answer["ids"]) == (10_001, 10_001, [])


def test_sweeps_posted_without_a_folder_each_get_their_own(
    shared_daemon: Herd, shared_work: Path
) -> None:
    daemon, work = shared_daemon, shared_work
    answers = []
    for name in ("api-a", "api-b"):
        spec = {"name": name, "command": f"echo {name} {{x}}", "grids": [{"x": [1]}]}
        answers.append(daemon.client.post("/sweeps", {"spec": spec, "cwd": str(work)}))
    assert [(a["new"], a["skipped_done"]) for a in answers] == [(1, 0), (1, 0)]
    for answer, name in zip(answers, ("api-a", "api-b"), strict=True):
        assert answer["results_dir"] == str(work / "results" / name)
        daemon.wait_state(answer["ids"][0], "succeeded")
        assert (work / "results" / name / "x=1" / "SUCCESS").is_file()


def fake_git(folder: Path, commit: str, status: str) -> str:
    """A `git` on a PATH of its own that answers rev-parse and status like a real one."""
    folder.mkdir()
    script = folder / "git"
    script.write_text(
        "#!/bin/sh\n"
        'for a in "$@"; do case "$a" in\n'
        f"  rev-parse) echo {commit}; exit 0;;\n"
        f"  status) printf '{status}'; exit 0;;\n"
        "esac; done\nexit 1\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return f"{folder}{os.pathsep}{os.environ['PATH']}"


def test_git_commit_is_recorded_in_params_and_job_json(
    shared_daemon: Herd, shared_work: Path
) -> None:
    daemon, work = shared_daemon, shared_work
    path = fake_git(work / "bin", "0123abcd" * 5, " M train.py\\n")
    env = {**daemon.env, "PATH": path}
    answer = sweep(daemon, work, "python3 record.py {x} {run_dir}", "-p", "x", "1", env=env)
    assert answer["git"] == "0123abcd" * 5 + "+dirty"
    (row,) = finished(daemon, answer["name"], 1)
    folder = Path(row["run_dir"])
    assert json.loads((folder / "params.json").read_text())["git"] == answer["git"]
    assert json.loads((folder / "job.json").read_text())["git"] == answer["git"]


def test_git_commit_outside_a_repository_and_clean(tmp_path: Path) -> None:
    assert git_commit(str(tmp_path), path=str(tmp_path / "nowhere")) is None  # no git at all
    clean = fake_git(tmp_path / "bin", "feedbeef", "")
    assert git_commit(str(tmp_path), path=clean) == "feedbeef"
    assert sys.executable  # the suite itself never runs a real git


def test_a_silent_point_is_killed_when_the_sweep_asks(
    shared_daemon: Herd, shared_work: Path
) -> None:
    daemon, work = shared_daemon, shared_work
    answer = sweep(
        daemon,
        work,
        "sleep 60 # {s}",
        "-p",
        "s",
        "1",
        "--name",
        "silent",
        "--no-output-timeout",
        "1s",
        "--on-no-output",
        "kill",
    )
    (job_id,) = answer["ids"]
    job = daemon.wait_state(job_id, "failed", timeout=20)
    assert job["outcome"] == "stalled"
    assert job["sweep"] == "silent" and job["git"] is None  # `work` is no repository
    assert "sweep      silent" in daemon.cli("show", str(job_id)).stdout.splitlines()


def test_a_json_sweep_file_runs_its_points(shared_daemon: Herd, shared_work: Path) -> None:
    daemon, work = shared_daemon, shared_work
    spec = {"command": "python3 record.py {x} {run_dir}", "grid": {"x": [1, "a b"]}, "gpus": 0}
    (work / "s.json").write_text(json.dumps(spec))
    answer = sweep(daemon, work, "s.json")
    assert (answer["name"], answer["points"], answer["new"]) == ("s", 2, 2)
    rows = finished(daemon, "s", 2)
    assert [r["state"] for r in rows] == ["succeeded", "succeeded"]
    args = [json.loads((Path(r["run_dir"]) / "args.json").read_text()) for r in rows]
    assert args == [["1"], ["a b"]]
    assert daemon.job(rows[0]["job_id"])["command"].startswith("python3 record.py 1 ")
    again = connect(daemon.home, start=False).sweep(str(work / "s.json"), cwd=work)
    assert (again.submission["name"], again.submission["skipped_done"]) == ("s", 2)


def test_a_yaml_files_values_reach_the_command_as_written(
    shared_daemon: Herd, shared_work: Path
) -> None:
    """YAML 1.1 read `0755` as 493 and `007` as 7 (`0x1F` 31, `1_000` 1000): the jobs ran
    `record.py 493 7 ...`. A whole number in plain decimal digits, and a float, are numbers."""
    daemon, work = shared_daemon, shared_work
    (work / "modes.yaml").write_text(
        "command: python3 record.py {mode} {id} {n} {lr} {run_dir}\n"
        "fixed: {id: 007, n: 1_000, lr: 1e-3}\n"
        "grid:\n"
        "  mode: [0755, 0x1F, 12]\n"
        "gpus: 0\n"
    )
    answer = sweep(daemon, work, "modes.yaml")
    rows = finished(daemon, answer["name"], 3)
    assert [r["state"] for r in rows] == ["succeeded"] * 3
    argv = [json.loads((Path(r["run_dir"]) / "args.json").read_text()) for r in rows]
    assert argv == [[mode, "007", "1_000", "0.001"] for mode in ("0755", "0x1F", "12")]
    params = [json.loads((Path(r["run_dir"]) / "params.json").read_text()) for r in rows]
    assert [p["params"]["mode"] for p in params] == ["0755", "0x1F", 12]
    assert params[0]["params"]["lr"] == 0.001
    assert [Path(r["run_dir"]).name for r in rows] == ["mode=0755", "mode=0x1F", "mode=12"]


def test_a_refused_submission_writes_no_point_folder(daemon: Herd, work: Path) -> None:
    (work / "empty.yaml").write_text("name: e1\ncommand: ' '\ngrid: {x: [1]}\n")
    (work / "prio.yaml").write_text(
        f"name: p3\ncommand: echo {{x}}\npriority: {2**64}\ngrid: {{x: [1]}}\n"
    )
    cases = [
        (["empty.yaml"], 1, "empty.yaml:2: command: empty"),
        # (refused by the CLI's option, exit 2; by the daemon from a file, exit 1)
        (["echo {x}", "--name", "p2", "-p", "x", "1", "--priority", str(2**64)], 2, "too large"),
        (["prio.yaml"], 1, "too large"),
    ]
    for args, status, expected in cases:
        done = daemon.cli("sweep", *args, check=False, cwd=work)
        assert done.returncode == status and expected in done.stderr, (args, done.stderr)
    assert not (work / "results").exists()
    assert daemon.json("sweep", "ls") == [] and daemon.json("ls", "--all") == []


def test_each_surface_says_how_it_confirms_a_big_sweep(daemon: Herd, work: Path) -> None:
    body = {"spec": {"name": "big", "command": "echo {a}", "grids": [{"a": list(range(10_001))}]}}
    body["cwd"] = str(work)
    with pytest.raises(HerdError) as http:
        daemon.client.post("/sweeps", body)
    assert str(http.value) == (
        "sweep 'big' has 10,001 points, more than 10,000: "
        'send "yes": true to submit them all, or narrow it ("samples": N)'
    )
    with pytest.raises(HerdError) as python:
        connect(daemon.home, start=False).sweep("echo {a}", {"a": range(10_001)}, cwd=work)
    assert "pass yes=True to submit them all, or narrow it (samples=N)" in str(python.value)
    assert "--yes" not in str(python.value) and daemon.json("sweep", "ls") == []
    with pytest.raises(HerdError) as dry:  # (it submits nothing: it said "to submit them all")
        herd = connect(daemon.home, start=False)
        herd.sweep("echo {a}", {"a": range(10_001)}, cwd=work, dry_run=True)
    assert "pass yes=True to list them all, or narrow it (samples=N)" in str(dry.value)


@pytest.mark.parametrize("name", ["", "../../etc", ".."])
def test_status_of_no_such_sweep_is_one_line(shared_daemon: Herd, name: str) -> None:
    daemon = shared_daemon
    done = daemon.cli("sweep", "status", name, check=False)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        f"gpuherd: error: no sweep named {name!r}: `gpuherd sweep ls` lists the sweeps\n"
    )
