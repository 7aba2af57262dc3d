"""`gpuherd gpus`'s table at a terminal's width (cli/gpu_table.py): what it gives up, in
turn, to show every header and value whole (a real daemon's: test_gpu_table_width.py)."""

from __future__ import annotations

import io
from typing import Any

from gpuherd.cli import plain
from gpuherd.cli.gpu_table import gpu_lines

GIB = 1 << 30


def terminal(width: int) -> plain.Terminal:
    term = plain.Terminal(io.StringIO())
    term.width, term.styled = width, False
    return term


def gpu(index: int, **extra: Any) -> dict[str, Any]:
    return {
        "index": index,
        "name": "NVIDIA H100 80GB HBM3",
        "state": "enabled",
        "slots": 1,
        "memory_total": 80 * GIB,
        "memory_used": 0,
        "utilization": 0,
        "jobs": [],
        "processes": [],
        "held": 0,
        **extra,
    }


def test_many_foreign_processes_wrap_under_their_gpu_each_one_whole() -> None:
    users = ["alice", "bob", "carol-from-the-other-team", "dave", "eve", "mallory"]
    processes = [
        {"pid": 40000 + i, "user": user, "memory": 2 * GIB, "job_id": None}
        for i, user in enumerate(users)
    ]
    processes.append({"pid": 123, "user": "me", "memory": GIB, "job_id": 7})  # gpuherd's
    answer = {"gpus": [gpu(0, processes=processes, jobs=[7]), gpu(1)], "probe": "fake"}
    lines = gpu_lines(answer, terminal(80))
    assert lines[1].startswith("0    enabled  1/1")
    assert lines[2:5] == [
        "     foreign: 40000 (alice, 2.0 GiB), 40001 (bob, 2.0 GiB),",
        "              40002 (carol-from-the-other-team, 2.0 GiB), 40003 (dave, 2.0 GiB),",
        "              40004 (eve, 2.0 GiB), 40005 (mallory, 2.0 GiB)",
    ]
    assert lines[5].startswith("1    enabled  0/1")
    assert max(plain.cells(line) for line in lines) <= 80


def test_a_cluster_on_70_columns_keeps_its_nodes_and_every_value_whole() -> None:
    answer = {
        "gpus": [
            gpu(0, node="n1", host="gpu-box-a", memory_used=40 * GIB, jobs=[3, 4, 5]),
            gpu(1, node="n2", host="gpu-box-b", name="NVIDIA A100-SXM4-40GB"),
        ],
        "probe": "ray",
    }
    wide = gpu_lines(answer, terminal(200))
    assert wide[0].split() == [
        "GPU", "NODE", "NAME", "STATE", "SLOTS", "MEMORY", "HELD", "UTIL", "JOBS", "FOREIGN"
    ]  # fmt: skip
    # No foreign process, names under the table, memory without its bar: 68 columns.
    assert gpu_lines(answer, terminal(70)) == [
        "GPU  NODE       STATE    SLOTS      MEMORY               HELD  UTIL  JOBS",
        "0    gpu-box-a  enabled  3 sharing  40.0 GiB / 80.0 GiB        0%    3-5",
        "1    gpu-box-b  enabled  0/1        0 B / 80.0 GiB             0%",
        "GPU 0: NVIDIA H100 80GB HBM3",
        "GPU 1: NVIDIA A100-SXM4-40GB",
        "probe: ray",
    ]


def test_a_gpu_kept_for_a_held_jobs_run_says_for_which_job_and_why() -> None:
    """JOBS lists the job; a line under the table says why (before: only `--json`'s
    `reserved` did), wrapped at its words on 80 columns, nothing cut."""
    short = {"job": 2, "reason": "held: attempt 1 runs unwatched (pid 3621)"}
    answer = {"gpus": [gpu(0, jobs=[2], reserved=[short]), gpu(1)], "probe": "fake"}
    assert gpu_lines(answer, terminal(80))[-2:] == [
        "GPU 0 is reserved for job 2, held: attempt 1 runs unwatched (pid 3621)",
        "probe: fake",
    ]
    long = {"job": 123456, "reason": "cancelled: attempt 12 runs unwatched (pid 4194304)"}
    gpus = [gpu(i, jobs=[123456], reserved=[long]) for i in range(4)]
    lines = gpu_lines({"gpus": [*gpus, gpu(4)], "probe": "fake"}, terminal(80))
    assert lines[-3:-1] == [
        "GPUs 0-3 are reserved for job 123456, cancelled: attempt 12 runs unwatched (pid",
        "  4194304)",
    ]
    assert max(plain.cells(line) for line in lines) <= 80
    assert not any(plain.ELLIPSIS in line for line in lines)


def test_why_a_gpu_is_reserved_wraps_by_columns_wide_characters_too() -> None:
    """Wide characters in the reason (a daemon's words are data here) were wrapped by
    characters: the lines ran past the terminal and were cut, with …."""
    reason = "保留： 第一次尝试 仍在运行， 无人看管， 进程号 三六二一， 请稍候 再试"
    answer = {"gpus": [gpu(0, jobs=[7], reserved=[{"job": 7, "reason": reason}])], "probe": "-"}
    lines = gpu_lines(answer, terminal(40))
    assert lines[-4:-1] == [
        "GPU 0 is reserved for job 7, 保留：",
        "  第一次尝试 仍在运行， 无人看管，",
        "  进程号 三六二一， 请稍候 再试",
    ]
