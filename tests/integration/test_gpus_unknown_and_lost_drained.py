"""GPUs named that gpuherd does not have, and a lost GPU drained.

- `--only-gpus 0,5` on GPUs 0-3 was accepted without a word (the job ran on GPU 0 alone, a
  typo unseen): a submission, an edit, a sweep and Python's `only_gpus=` warn of GPU 5 now,
  and still accept it (`gpus add 5` may add it). Naming no GPU gpuherd has stays refused.
- `gpus drain 0-9` on four GPUs drained 0-3, then failed at 4: several GPUs are looked for
  first, and the call refused whole, in one line, when one is not there.
  `gpus add 2-3` is told that `add` takes one GPU.
- `gpus drain 1` of a lost GPU was accepted, then shown nowhere (`lost`, or only the line
  under the table): `lost, draining`, in the table, its JSON and `daemon status`.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import gpuherd
from conftest import Herd, wait_for

GPU = {"name": "Fake A100", "memory_total": "80GiB"}

WARNED = (
    "--only-gpus 0,5 names GPU 5, which is not configured (configured: 0,1,2,3) and not on this "
    "machine (the probe does not see it): the job runs only on GPU 0"
)


def states(herd: Herd) -> dict[int, str]:
    return {gpu["index"]: gpu["state"] for gpu in herd.client.get("/gpus")["gpus"]}


def test_only_gpus_naming_a_gpu_not_there_warns(herd: Herd, tmp_path: Path) -> None:
    herd.start("--fake-gpus", "4")
    told = herd.cli("submit", "--hold", "--only-gpus", "0,5", "--", "true")
    assert (told.returncode, told.stdout) == (0, "submitted job 1\n")
    assert told.stderr == f"gpuherd: warning: job 1: {WARNED}\n"
    assert herd.job(1)["only_gpus"] == [0, 5]  # accepted as given

    # All GPUs there, or none asked for: no warning.
    assert herd.cli("submit", "--hold", "--only-gpus", "0-3", "--", "true").stderr == ""
    assert herd.cli("submit", "--hold", "--", "true").stderr == ""
    # Several jobs alike: one line for them.
    many = herd.cli("submit", "--hold", "--only-gpus", "3,7-8", "--file", "-", input="true\ntrue\n")
    assert many.stderr == (
        "gpuherd: warning: jobs 4, 5: --only-gpus 3,7,8 names GPUs 7, 8, which are not "
        "configured (configured: 0,1,2,3) and not on this machine (the probe does not see "
        "them): the jobs run only on GPU 3\n"
    )
    # None of them there: refused, as before.
    none = herd.cli("submit", "--only-gpus", "5,6", "--", "true", check=False)
    assert (none.returncode, none.stderr) == (
        1,
        "gpuherd: error: this job can never run: asks for 1 GPU of --only-gpus 5,6, but "
        "gpuherd has no GPUs 5, 6: name GPUs gpuherd has in only_gpus (--only-gpus): 0-3\n",
    )

    edited = herd.cli("edit", "2", "--only-gpus", "0,5")  # (warned of as submit warns)
    assert edited.stdout == "job 2: edited (only_gpus 0,1,2,3 -> 0,5)\n"
    assert edited.stderr == f"gpuherd: warning: job 2: {WARNED}\n"
    assert (
        herd.cli("edit", "2", "--only-gpus", "1").stdout == "job 2: edited (only_gpus 0,5 -> 1)\n"
    )

    swept = herd.cli(
        "sweep", "echo {x}", "-p", "x", "1", "2", "--hold", "--only-gpus", "0,5",
        "--results-dir", str(tmp_path / "sweep"),
    )  # fmt: skip
    assert swept.stderr.splitlines()[0] == (
        f"gpuherd: warning: jobs 6, 7: {WARNED.replace('job runs', 'jobs run')}"
    )

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        job = gpuherd.connect(herd.home).submit(["true"], only_gpus=[0, 5], hold=True)
    assert [str(w.message) for w in caught] == [f"job {job.id}: {WARNED}"]


def test_only_gpus_names_the_gpus_add_of_each_gpu_the_probe_sees(herd: Herd) -> None:
    """`--only-gpus 0-1,9-10` on GPUs 0-3 named `gpus add 9` alone, and for GPU 10 too a
    `gpus add` that fails when the probe does not see it: each GPU the probe sees gets its
    `gpus add`, the others are said not to be on this machine."""
    herd.start("--fake-gpus", "10")
    herd.cli("gpus", "remove", "4-9")  # the probe sees GPUs 0-9; gpuherd uses 0-3
    have = "which are not configured (configured: 0,1,2,3)"
    mixed = herd.cli("submit", "--hold", "--only-gpus", "0-1,9-10", "--", "true")
    assert mixed.stderr == (
        f"gpuherd: warning: job 1: --only-gpus 0,1,9,10 names GPUs 9, 10, {have}: the job runs "
        "only on GPUs 0, 1 until GPU 9 is added (gpuherd gpus add 9); GPU 10 is not on this "
        "machine (the probe does not see it)\n"
    )
    seen = herd.cli("submit", "--hold", "--only-gpus", "0,5-9", "--", "true")
    assert seen.stderr == (
        f"gpuherd: warning: job 2: --only-gpus 0,5-9 names GPUs 5-9, {have}: the job runs only "
        "on GPU 0 until GPUs 5-9 are added (gpuherd gpus add 5, then the same for 6-9)\n"
    )
    edited = herd.cli("edit", "1", "--only-gpus", "0,8-9")
    assert edited.stdout == "job 1: edited (only_gpus 0,1,9,10 -> 0,8,9)\n"
    assert edited.stderr == (
        f"gpuherd: warning: job 1: --only-gpus 0,8,9 names GPUs 8, 9, {have}: the job runs "
        "only on GPU 0 until GPUs 8, 9 are added (gpuherd gpus add 8, then the same for 9)\n"
    )
    assert herd.cli("gpus", "add", "9").stdout.startswith("GPU 9 added")  # as the hint says


def test_gpu_verbs_on_several_gpus_look_for_all_first(herd: Herd) -> None:
    herd.start("--fake-gpus", "4")
    for verb, done in (("drain", "drained"), ("remove", "removed"), ("enable", "enabled")):
        refused = herd.cli("gpus", verb, "0-9", check=False)
        assert (refused.returncode, refused.stdout) == (1, "")
        assert refused.stderr == (
            f"gpuherd: error: GPUs 4-9 are not configured (configured: 0,1,2,3): nothing {done}; "
            f"leave them out: `gpuherd gpus {verb} 0-3`\n"
        )
        assert states(herd) == dict.fromkeys(range(4), "enabled")  # none changed
    herd.cli("gpus", "remove", "2")
    refused = herd.cli("gpus", "drain", "0", "2", check=False)
    assert refused.stderr == (
        "gpuherd: error: GPU 2 is not configured (configured: 0,1,3): nothing drained; "
        "leave it out: `gpuherd gpus drain 0`; `gpuherd gpus add 2` adds GPU 2\n"
    )
    assert herd.cli("gpus", "drain", "0", "1").stdout.count("draining") == 2

    # `add` takes one GPU (its --slots are its own): `add 2-3` was told "invalid GPU index
    # '2-3': GPUs are numbered from 0 to 4095", `add 2 3` click's "unexpected extra argument".
    for given in (["2-3"], ["2", "3"]):
        assert herd.usage_error("gpus", "add", *given) == (
            "gpuherd: error: `gpuherd gpus add` takes one GPU (its --slots are its own): "
            "`gpuherd gpus add 2`, then `gpuherd gpus add 3` (see gpuherd gpus add --help)\n"
        )
    assert states(herd) == {0: "draining", 1: "draining", 3: "enabled"}


def test_a_lost_gpu_drained_says_so(herd: Herd, tmp_path: Path) -> None:
    state = tmp_path / "gpus.json"
    state.write_text(json.dumps({"gpus": [GPU, GPU, GPU]}))
    herd.start("--fake-gpus", str(state))
    job = herd.submit("--only-gpus", "1", "sleep 300")
    herd.wait_state(job, "running")
    state.write_text(json.dumps({"gpus": [GPU, {"lost": True}, {"lost": True}]}))
    wait_for(lambda: states(herd).get(1) == "lost", what="GPU 1 to be lost")
    herd.cli("gpus", "drain", "1", "2")

    rows = {row["index"]: row for row in herd.json("gpus")["gpus"]}
    assert (rows[1]["state"], rows[1]["draining"], rows[0]["draining"]) == ("lost", True, False)
    answer = herd.json("gpus")
    assert (answer["missing"], answer["missing_draining"]) == ([1, 2], [1, 2])
    table = herd.cli("gpus").stdout.splitlines()
    assert "lost, draining" in next(line for line in table if line.startswith("1 "))
    assert "configured but not seen by the probe: 1-2 (draining)" in table
    assert "draining: 1-2; lost: 1-2" in herd.cli("daemon", "status").stdout

    herd.cli("gpus", "enable", "2")
    table = herd.cli("gpus").stdout.splitlines()
    assert "configured but not seen by the probe: 1-2 (1 draining)" in table
