"""A local start in a home whose last start ran jobs on a Ray cluster, with no local GPUs set
aside (its first start was on the cluster, or an older gpuherd switched it): the cluster's GPU
table and removed GPUs are dropped, and the GPUs named are configured, none taken for removed.
Before, a start whose options equalled the saved ones kept the cluster's table (2 of 4 GPUs),
and a GPU removed on the cluster was out here too."""

from __future__ import annotations

import json
from pathlib import Path

from gpuherd.daemon_executor import choose_probe
from gpuherd.gpus.choice import GpuChoice
from gpuherd.removed_gpus import removed_gpus
from gpuherd.saved_settings import EXECUTOR, PROBE, REMOVED_GPUS
from gpuherd.store import Store


def test_the_clusters_gpus_give_way_to_the_local_ones(tmp_path: Path) -> None:
    store = Store(tmp_path / "herd.db")
    try:
        store.set_setting(PROBE, json.dumps({"gpus": None, "fake_gpus": "4"}))
        store.set_setting(EXECUTOR, json.dumps({"kind": "ray", "address": "192.0.2.2:6379"}))
        store.replace_devices({0: 1})  # the cluster's GPU 0; its GPU 1 removed there
        store.set_setting(REMOVED_GPUS, json.dumps({"1": [1, None]}))

        _, back = choose_probe(store, GpuChoice(fake_gpus="4"), None)
        assert back == []
        assert [d.index for d in store.devices()] == [0, 1, 2, 3]
        assert removed_gpus(store) == {}
    finally:
        store.close()
