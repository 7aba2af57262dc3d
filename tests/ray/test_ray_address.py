"""`--address auto` is remembered as the cluster it found, not as "auto": a later plain
`daemon start` must join that cluster, never whichever one Ray finds then (another user's).

A module of its own with a head-only cluster (no GPU node: cheap), as test_ray_dead_cluster.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import Herd, need

need("ray.cluster_utils", "ray")

from ray_fixtures import lone_head, shutdown

from gpuherd import paths
from gpuherd.executors import ray_cluster
from gpuherd.gpus.base import ProbeError
from gpuherd.store import Store

pytestmark = pytest.mark.timeout(180)  # (with its module's cluster start: ~30 s under load)


def remembered(herd: Herd) -> dict[str, Any]:
    store = Store(paths.database(herd.home))
    try:
        return dict(json.loads(store.get_setting("executor") or "{}"))
    finally:
        store.close()


def test_auto_is_remembered_as_the_cluster_it_found(herd: Herd) -> None:
    cluster: Any = lone_head()
    try:
        address = str(cluster.address)
        herd.env["RAY_ADDRESS"] = address  # what `auto` finds (as after `ray start --head`)
        herd.start("--executor", "ray", "--address", "auto")
        assert remembered(herd) == {"kind": "ray", "address": address}  # before: "auto"
        status = herd.cli("daemon", "status").stdout
        assert f"ray at {address} (found by --address auto):" in status, status
        herd.cli("daemon", "stop")

        del herd.env["RAY_ADDRESS"]  # `auto` would find another cluster, or none, now
        herd.start()
        status = herd.cli("daemon", "status").stdout
        assert f"ray at {address} (remembered from the last start):" in status, status
        herd.cli("daemon", "stop")
    finally:
        herd.cleanup()
        shutdown(cluster)


NOWHERE = "127.0.0.1:9"  # nothing listens there: what an unchecked guess would dial
NAME_IT = (
    "give --address HOST:PORT (the head's GCS address, which `ray start --head` printed; port "
    "6379 by default), or --address auto for the cluster Ray finds from here (RAY_ADDRESS, "
    "else the one started last on this machine)"
)


@pytest.mark.parametrize(
    ("options", "code", "said"),
    [
        # Before: "auto" on a guess, which may be another user's cluster, shown as "found by
        # --address auto", an option the user never gave. (Exit 1: whether a start has an
        # address to go back to, herd.db says.)
        (["--executor", "ray"], 1, f"--executor ray needs the cluster's address: {NAME_IT}"),
        # An unset $HEAD: was auto too. A mistake of the command line alone: exit 2.
        (
            ["--address", ""],
            2,
            f"--address is empty: {NAME_IT} (see gpuherd daemon start --help)",
        ),
        # Before: Ray's three lines, of which `daemon start` printed "... To fix this, either:"
        (
            ["--address", "http://127.0.0.1:8265"],
            1,
            "the Ray cluster at http://127.0.0.1:8265: an HTTP address (the dashboard's or the "
            "job API's), not the GCS's; give `--address HOST:PORT` or `auto`",
        ),
    ],
    ids=["no-address", "empty-address", "http-address"],
)
def test_a_start_without_a_cluster_address_says_how_to_name_one(
    herd: Herd, options: list[str], code: int, said: str
) -> None:
    herd.env["RAY_ADDRESS"] = NOWHERE  # what `auto` would find
    refused = herd.cli("daemon", "start", *options, check=False)
    assert (refused.returncode, refused.stderr) == (code, f"gpuherd: error: {said}\n")
    assert remembered(herd) == {}  # nothing chosen: the next start is not on a guess either


def test_a_ray_error_over_many_lines_is_told_on_one(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    def refuse(**options: object) -> None:
        raise ConnectionError("Invalid address. To fix this, either:\n  1. unset it, or\n  2. …")

    monkeypatch.setattr(ray_cluster, "check_answers", lambda address, remembered, stranded: None)
    monkeypatch.setattr(ray_cluster.ray, "init", refuse)
    with pytest.raises(ProbeError) as refused:
        ray_cluster.connect("10.0.0.5:6379", tmp_path)
    assert str(refused.value).startswith(
        "connecting to the Ray cluster at 10.0.0.5:6379: Invalid address. To fix this, either: "
        "1. unset it, or 2. …; check the address (`ray start --head` printed it; port 6379 by "
        "default) and that this machine"
    )
