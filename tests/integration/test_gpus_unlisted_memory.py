"""`gpuherd gpus` on a GPU whose memory no listed process holds (another container's
processes, which NVML does not list): placement counts it as other users', so a GPU that
looks idle takes no `--mem` job; FOREIGN says why, as the dashboard does, in the column or
under the GPU's row on a narrow terminal. Before, FOREIGN was empty."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import NO_SUCH_PIDS, Herd
from gpuherd.cli.plain import cells
from integration.test_gpu_table_width import NAME, screen

UNLISTED = "used by processes not listed (another container?)"


def test_gpus_says_what_memory_no_listed_process_holds(herd: Herd, tmp_path: Path) -> None:
    state = tmp_path / "gpus.json"
    gpus = [
        {"name": NAME, "memory_total": "80GiB", "memory_used": "70GiB"},
        {
            "name": NAME,
            "memory_total": "80GiB",
            "memory_used": "10GiB",
            "processes": [{"pid": NO_SUCH_PIDS[0], "memory": "20GiB"}],
        },
        {"name": NAME, "memory_total": "80GiB"},
    ]
    state.write_text(json.dumps({"gpus": gpus}))
    herd.start("--fake-gpus", str(state))

    plain = screen(herd, ["gpus"], "probe: ")
    assert plain == [
        "GPU  STATE    SLOTS  MEMORY                          HELD  UTIL  JOBS",
        "0    enabled  0/1    █████████░ 70.0 GiB / 80.0 GiB        0%",
        f"     foreign: 70.0 GiB {UNLISTED}",
        "1    enabled  0/1    ████░░░░░░ 30.0 GiB / 80.0 GiB        0%",
        f"     foreign: {NO_SUCH_PIDS[0]} (?, 20.0 GiB),",
        f"              10.0 GiB {UNLISTED}",
        "2    enabled  0/1    ░░░░░░░░░░ 0 B / 80.0 GiB             0%",
        f"GPUs 0-2: {NAME}",
        f"probe: fake: state file {state}",
    ]
    assert max(cells(line) for line in plain[:-1]) <= 80

    piped = herd.cli("gpus").stdout.splitlines()
    assert piped[1].endswith(f"0%          70.0 GiB {UNLISTED}")
    assert piped[2].endswith(f"0%          {NO_SUCH_PIDS[0]} (?, 20.0 GiB), 10.0 GiB {UNLISTED}")
    assert piped[3].endswith("0%")  # (nothing unlisted: nothing said)
    assert [gpu["foreign_memory"] for gpu in herd.json("gpus")["gpus"]] == [
        70 * 2**30,
        30 * 2**30,
        0,
    ]
